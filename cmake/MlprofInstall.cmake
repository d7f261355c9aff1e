# MlprofInstall.cmake — what `cmake --install` puts where.
#
# Installs the public header, libmlprof.so* and libmlprof.a, the mlprof
# command, a relocatable CMake package (mlprof::mlprof, mlprof::mlprof_static)
# and a relocatable pkg-config file. Both package files work from whatever
# prefix the tree is installed to (`cmake --install build --prefix DIR`).

include_guard(GLOBAL)

set(MLPROF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/mlprof)

set_target_properties(mlprof_shared PROPERTIES EXPORT_NAME mlprof)
set_target_properties(mlprof_static PROPERTIES EXPORT_NAME mlprof_static)

install(FILES ${PROJECT_SOURCE_DIR}/include/mlprof.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT dev)

install(TARGETS mlprof_shared mlprof_static EXPORT mlprofTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib
    NAMELINK_COMPONENT dev
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT lib)

if(TARGET mlprof_cli)
  install(TARGETS mlprof_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT bin)
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
set(_pc_libs -lzstd ${MLPROF_EXTRA_PC_LIBS} -lpthread -lm)
if(CMAKE_DL_LIBS)
  list(APPEND _pc_libs -l${CMAKE_DL_LIBS})
endif()
list(REMOVE_DUPLICATES _pc_libs)
list(JOIN _pc_libs " " MLPROF_PC_LIBS_PRIVATE)
configure_file(${CMAKE_CURRENT_LIST_DIR}/mlprof.pc.in ${PROJECT_BINARY_DIR}/mlprof.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/mlprof.pc DESTINATION ${MLPROF_PC_DIR} COMPONENT dev)

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

# The Python binding (pure Python over ctypes): installed where Debian's
# python3 looks for packages under the prefix; it finds the installed
# libmlprof relative to itself.
set(MLPROF_PYTHON_DIR "${CMAKE_INSTALL_LIBDIR}/python3/dist-packages" CACHE STRING
  "Install folder of the Python package, relative to the prefix")
if(EXISTS ${PROJECT_SOURCE_DIR}/python/mlprof)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/python/mlprof DESTINATION ${MLPROF_PYTHON_DIR}
    COMPONENT python FILES_MATCHING PATTERN "*.py")
endif()
