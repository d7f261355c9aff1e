# MlprofInstall.cmake — what `cmake --install` puts where.
#
# Installs the public headers (mlprof.h, mlprof.hpp), libmlprof.so* and
# libmlprof.a, libmlprof_mpi.so* when MPI was found, the mlprof command (its
# start-up front in bin, the full command in <libdir>/mlprof) with its man
# page and bash completion, a relocatable CMake package
# (mlprof::mlprof, mlprof::mlprof_static, mlprof::mlprof_mpi) and relocatable
# pkg-config files (mlprof, mlprof_mpi). Both package files work from whatever
# prefix the tree is installed to (`cmake --install build --prefix DIR`).

include_guard(GLOBAL)

set(MLPROF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mlprof)

set_target_properties(mlprof_shared PROPERTIES EXPORT_NAME mlprof)
set_target_properties(mlprof_static PROPERTIES EXPORT_NAME mlprof_static)

install(FILES ${PROJECT_SOURCE_DIR}/include/mlprof.h ${PROJECT_SOURCE_DIR}/include/mlprof.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

install(TARGETS mlprof_shared mlprof_static EXPORT mlprofTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib
    NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT lib)

# beside the library, for `mlprof run` of Python programs (tools/run_python.c)
install(FILES ${PROJECT_SOURCE_DIR}/python/mlprof/_record_function.py
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/mlprof-python RENAME sitecustomize.py COMPONENT lib)

if(TARGET mlprof_cli)
  install(TARGETS mlprof_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT bin)
  # the full command, which the start-up front runs (MLPROF_CLI_REL)
  install(TARGETS mlprof_cli_full RUNTIME DESTINATION ${MLPROF_CLI_LIBEXEC} COMPONENT bin)
  # Its manual page and bash completion (tests/cli_docs.sh keeps both in
  # step with the command's help).
  install(FILES ${PROJECT_SOURCE_DIR}/docs/mlprof.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT bin)
  install(FILES ${PROJECT_SOURCE_DIR}/tools/completion/mlprof.bash
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME mlprof COMPONENT bin)
endif()

install(EXPORT mlprofTargets NAMESPACE mlprof::
  FILE mlprofTargets.cmake DESTINATION ${MLPROF_CMAKE_DIR} COMPONENT dev)

# Features compiled in, for consumers that want to know.
set(MLPROF_FEATURES "")
foreach(f LIBUNWIND PAPI LIBDW ZLIB CUPTI MPI)
  if(MLPROF_HAVE_${f})
    string(TOLOWER ${f} lf)
    list(APPEND MLPROF_FEATURES ${lf})
  endif()
endforeach()

configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/mlprofConfig.cmake.in
  ${PROJECT_BINARY_DIR}/mlprofConfig.cmake
  INSTALL_DESTINATION ${MLPROF_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/mlprofConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/mlprofConfig.cmake
  ${PROJECT_BINARY_DIR}/mlprofConfigVersion.cmake
  DESTINATION ${MLPROF_CMAKE_DIR} COMPONENT dev)

# pkg-config: paths relative to the .pc file, so the install is relocatable.
set(MLPROF_PC_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(MLPROF_PC_UP "..")
  set(MLPROF_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  string(REGEX REPLACE "[^/]+" ".." MLPROF_PC_UP "${MLPROF_PC_DIR}")
  set(MLPROF_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(MLPROF_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(MLPROF_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()
# Dependencies with a .pc file in Requires.private (what they link in turn
# comes with them under `pkg-config --static`), the rest in Libs.private.
set(_pc_requires libzstd ${MLPROF_EXTRA_PC_REQUIRES})
list(REMOVE_DUPLICATES _pc_requires)
list(JOIN _pc_requires ", " MLPROF_PC_REQUIRES_PRIVATE)
set(_pc_libs ${MLPROF_EXTRA_PC_LIBS} -lpthread -lm)
if(CMAKE_DL_LIBS)
  list(APPEND _pc_libs -l${CMAKE_DL_LIBS})
endif()
list(REMOVE_DUPLICATES _pc_libs)
list(JOIN _pc_libs " " MLPROF_PC_LIBS_PRIVATE)
configure_file(${CMAKE_CURRENT_LIST_DIR}/mlprof.pc.in ${PROJECT_BINARY_DIR}/mlprof.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mlprof.pc DESTINATION ${MLPROF_PC_DIR} COMPONENT dev)
if(TARGET mlprof_mpi) # the PMPI wrappers, when MPI was found (src/mpi)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/mlprof_mpi.pc.in ${PROJECT_BINARY_DIR}/mlprof_mpi.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/mlprof_mpi.pc DESTINATION ${MLPROF_PC_DIR} COMPONENT dev)
endif()

# Documentation, when present.
foreach(doc README.md LICENSE)
  if(EXISTS ${PROJECT_SOURCE_DIR}/${doc})
    install(FILES ${PROJECT_SOURCE_DIR}/${doc} DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT doc)
  endif()
endforeach()
if(EXISTS ${PROJECT_SOURCE_DIR}/docs)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
    COMPONENT doc FILES_MATCHING PATTERN "*.md")
endif()

# The Python binding (pure Python over ctypes): installed where the system's
# python3 looks for packages under the install prefix, as its own `site`
# module says (Debian's python3 searches lib/python3.X/dist-packages under
# /usr/local, not lib/python3/dist-packages); it finds the installed
# libmlprof relative to itself. A prefix that interpreter never searches
# gets lib/python3.X/dist-packages (or site-packages, matching that
# interpreter's convention): PYTHONPATH must then name it.
find_program(MLPROF_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(MLPROF_PYTHON3 NAMES python3)
set(mlprof_py_default "${CMAKE_INSTALL_LIBDIR}/python3/dist-packages")
if(MLPROF_PYTHON3)
  execute_process(
    COMMAND ${MLPROF_PYTHON3} -c "
import os, site, sys
prefix = os.path.normpath(sys.argv[1])
dirs = site.getsitepackages() if hasattr(site, 'getsitepackages') else []
for d in dirs:
    rel = os.path.relpath(d, prefix)
    if d.startswith(prefix + os.sep) and rel.split(os.sep)[0] in ('lib', 'lib64'):
        print(rel); break
else:
    kind = 'dist-packages' if any(p.endswith('dist-packages') for p in sys.path) else 'site-packages'
    print('lib/python%d.%d/%s' % (sys.version_info[0], sys.version_info[1], kind))
" "${CMAKE_INSTALL_PREFIX}"
    OUTPUT_VARIABLE mlprof_py_found OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE mlprof_py_rc ERROR_QUIET)
  if(mlprof_py_rc EQUAL 0 AND mlprof_py_found)
    set(mlprof_py_default "${mlprof_py_found}")
  endif()
endif()
# (a build tree configured before kept the old fixed default in its cache)
if(MLPROF_PYTHON_DIR STREQUAL "${CMAKE_INSTALL_LIBDIR}/python3/dist-packages")
  unset(MLPROF_PYTHON_DIR CACHE)
endif()
set(MLPROF_PYTHON_DIR "${mlprof_py_default}" CACHE STRING
  "Install folder of the Python package, relative to the prefix (default: from python3's site module)")
if(TARGET test_install)
  target_compile_definitions(test_install PRIVATE MLPROF_PYTHON_DIR="${MLPROF_PYTHON_DIR}"
    MLPROF_PYTHON3="${MLPROF_PYTHON3}")
endif()
if(EXISTS ${PROJECT_SOURCE_DIR}/python/mlprof)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/mlprof DESTINATION ${MLPROF_PYTHON_DIR}
    COMPONENT python FILES_MATCHING PATTERN "*.py")
endif()
