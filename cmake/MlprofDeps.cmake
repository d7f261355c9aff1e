# MlprofDeps.cmake — detection of mlprof's optional dependencies.
#
# Each optional feature sits behind one option (ON: required, OFF: never,
# AUTO: use when found). Results are the cache variables MLPROF_HAVE_<X>.
# mlprof_module_deps(target module) gives a module's object library the
# include directories and MLPROF_HAVE_<X>=1 definitions it needs;
# MLPROF_EXTRA_LIBS (computed once, here, from the sources that include a
# dependency's header) lists what the final libraries link. CUPTI is loaded with dlopen at run time: only its headers are used
# at build time, and libcupti / libcudart are never linked.

include_guard(GLOBAL)

# _mlprof_mode(<option>) -> normalised ON / OFF / AUTO in _mlprof_mode_out
function(_mlprof_mode opt)
  string(TOUPPER "${${opt}}" v)
  if(v STREQUAL "" OR v STREQUAL "AUTO")
    set(v AUTO)
  elseif(v MATCHES "^(ON|YES|TRUE|Y|1)$")
    set(v ON)
  elseif(v MATCHES "^(OFF|NO|FALSE|N|0)$")
    set(v OFF)
  else()
    message(FATAL_ERROR "${opt} must be ON, OFF or AUTO (got '${${opt}}')")
  endif()
  set(_mlprof_mode_out ${v} PARENT_SCOPE)
endfunction()

# _mlprof_result(<NAME> <found> <mode> <what>): fail for ON-but-missing,
# record the result in the cache.
function(_mlprof_result name found mode what)
  if(mode STREQUAL "ON" AND NOT found)
    message(FATAL_ERROR "MLPROF_WITH_${name}=ON but ${what} was not found")
  endif()
  if(found)
    set(v ON)
  else()
    set(v OFF)
  endif()
  set(MLPROF_HAVE_${name} ${v} CACHE BOOL "Detected: ${what} is used (read-only result)" FORCE)
endfunction()

# ---- libunwind (call stacks for CPU sampling and allocation sites) ---------
_mlprof_mode(MLPROF_WITH_LIBUNWIND)
set(_mlprof_unwind_mode ${_mlprof_mode_out})
set(_found OFF)
if(NOT _mlprof_unwind_mode STREQUAL "OFF")
  pkg_check_modules(MLPROF_UNWIND QUIET libunwind)
  if(MLPROF_UNWIND_FOUND)
    set(_found ON)
  endif()
endif()
_mlprof_result(LIBUNWIND ${_found} ${_mlprof_unwind_mode} "libunwind (pkg-config libunwind)")

# ---- PAPI (hardware counters) -----------------------------------------------
_mlprof_mode(MLPROF_WITH_PAPI)
set(_mlprof_papi_mode ${_mlprof_mode_out})
set(_found OFF)
if(NOT _mlprof_papi_mode STREQUAL "OFF")
  find_path(MLPROF_PAPI_INCLUDE_DIR papi.h)
  find_library(MLPROF_PAPI_LIBRARY papi)
  mark_as_advanced(MLPROF_PAPI_INCLUDE_DIR MLPROF_PAPI_LIBRARY)
  if(MLPROF_PAPI_INCLUDE_DIR AND MLPROF_PAPI_LIBRARY)
    set(_found ON)
  endif()
endif()
_mlprof_result(PAPI ${_found} ${_mlprof_papi_mode} "PAPI (papi.h and libpapi)")

# ---- libdw (symbols and source lines for sampled addresses) ----------------
# No option of its own: used when found.
pkg_check_modules(MLPROF_DW QUIET libdw)
if(MLPROF_DW_FOUND)
  set(_found ON)
else()
  set(_found OFF)
endif()
_mlprof_result(LIBDW ${_found} AUTO "libdw (pkg-config libdw)")

# ---- CUDA headers for CUPTI (dlopen'ed at run time) ------------------------
_mlprof_mode(MLPROF_WITH_CUPTI)
set(_mlprof_cupti_mode ${_mlprof_mode_out})
set(_found OFF)
set(MLPROF_CUPTI_INCLUDE_DIRS "")
if(NOT _mlprof_cupti_mode STREQUAL "OFF")
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(_cupti_hints ${CUDAToolkit_INCLUDE_DIRS})
    foreach(root ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR} ${CUDAToolkit_ROOT})
      list(APPEND _cupti_hints ${root}/extras/CUPTI/include ${root}/include)
    endforeach()
    foreach(inc ${CUDAToolkit_INCLUDE_DIRS})
      get_filename_component(parent ${inc} DIRECTORY)
      list(APPEND _cupti_hints ${parent}/extras/CUPTI/include)
    endforeach()
    find_path(MLPROF_CUPTI_INCLUDE_DIR cupti.h HINTS ${_cupti_hints} NO_DEFAULT_PATH)
    mark_as_advanced(MLPROF_CUPTI_INCLUDE_DIR)
    if(MLPROF_CUPTI_INCLUDE_DIR)
      set(_found ON)
      set(MLPROF_CUPTI_INCLUDE_DIRS ${CUDAToolkit_INCLUDE_DIRS} ${MLPROF_CUPTI_INCLUDE_DIR})
      list(REMOVE_DUPLICATES MLPROF_CUPTI_INCLUDE_DIRS)
    endif()
  endif()
endif()
_mlprof_result(CUPTI ${_found} ${_mlprof_cupti_mode} "CUPTI headers (cupti.h of a CUDA toolkit)")

# ---- MPI (rank discovery; headers only, the library is never linked) -------
set(_found OFF)
find_package(MPI QUIET COMPONENTS C)
if(MPI_C_FOUND)
  set(_found ON)
endif()
_mlprof_result(MPI ${_found} AUTO "MPI for C")

# ---- zlib (gzip output of exports, .json.gz) -------------------------------
# No option of its own: used when found.
find_package(ZLIB QUIET)
if(ZLIB_FOUND)
  set(_found ON)
else()
  set(_found OFF)
endif()
_mlprof_result(ZLIB ${_found} AUTO "zlib (gzip output)")

# ---- CPython 3.11 internal headers (Python frames in CPU samples) ---------
# No option of its own: src/cpu/pyframes.c takes the interpreter's struct
# layouts from them when found (python3.11-dev); without them CPU samples
# have no Python frames. Only that file sees them, as system headers.
find_package(Python3 QUIET COMPONENTS Development.Module)
find_path(MLPROF_PY_INCLUDE_DIR internal/pycore_frame.h
  HINTS ${Python3_INCLUDE_DIRS} PATHS /usr/include/python3.11 NO_CACHE)
if(MLPROF_PY_INCLUDE_DIR AND EXISTS ${PROJECT_SOURCE_DIR}/src/cpu/pyframes.c
   AND EXISTS ${MLPROF_PY_INCLUDE_DIR}/patchlevel.h)
  file(STRINGS ${MLPROF_PY_INCLUDE_DIR}/patchlevel.h _py_minor REGEX "^#define PY_MINOR_VERSION[ \t]+11")
endif()
if(_py_minor)
  set(_found ON)
  set_source_files_properties(${PROJECT_SOURCE_DIR}/src/cpu/pyframes.c PROPERTIES
    COMPILE_OPTIONS "-isystem;${MLPROF_PY_INCLUDE_DIR}" COMPILE_DEFINITIONS MLPROF_HAVE_PYFRAMES=1)
else()
  set(_found OFF)
endif()
_mlprof_result(PYFRAMES ${_found} AUTO "CPython 3.11 internal headers (python3.11-dev)")

# ---- What the final libraries link -----------------------------------------
# A dependency is linked when it was found and some source of the library
# includes its header (the one file behind its door), so a build without the
# producer that needs it does not link it. Plain library paths, not imported
# targets, so the exported static target needs nothing more on the
# consumer's side. The sources are globbed with CONFIGURE_DEPENDS by the
# top-level file, so adding one re-runs this scan.
function(_mlprof_sources_include regex out)
  file(GLOB_RECURSE srcs ${PROJECT_SOURCE_DIR}/src/*.c ${PROJECT_SOURCE_DIR}/src/*.h) # papi.h comes through cpu/papi_api.h
  set(hit OFF)
  foreach(src ${srcs})
    file(STRINGS ${src} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](${regex})")
    if(lines)
      set(hit ON)
      break()
    endif()
  endforeach()
  set(${out} ${hit} PARENT_SCOPE)
endfunction()

set(MLPROF_EXTRA_LIBS "")
# For mlprof.pc: a dependency with a pkg-config file of its own goes into
# Requires.private (so `pkg-config --static` adds what it links in turn,
# e.g. libdw's libelf, bz2 and lzma), the others into Libs.private.
set(MLPROF_EXTRA_PC_REQUIRES "")
set(MLPROF_EXTRA_PC_LIBS "") # -l flags for mlprof.pc (Libs.private)
pkg_check_modules(MLPROF_PAPI_PC QUIET papi)

# _mlprof_pc_dep(<module> <prefix> <flags...>): list pkg-config module
# <module> (found as <prefix>) in Requires.private when every library its .pc
# names for a static link is installed; else put <flags> in Libs.private
# and say why (Debian's papi.pc names -lpfm, which only libpfm4-dev has).
function(_mlprof_pc_dep module prefix)
  set(usable ${${prefix}_FOUND})
  set(missing "")
  foreach(lib ${${prefix}_STATIC_LIBRARIES})
    find_library(_mlprof_pc_lib NAMES ${lib} HINTS ${${prefix}_STATIC_LIBRARY_DIRS})
    if(NOT _mlprof_pc_lib)
      set(usable OFF)
      list(APPEND missing ${lib})
    endif()
    unset(_mlprof_pc_lib CACHE)
  endforeach()
  if(usable)
    set(MLPROF_EXTRA_PC_REQUIRES ${MLPROF_EXTRA_PC_REQUIRES} ${module} PARENT_SCOPE)
  else()
    set(MLPROF_EXTRA_PC_LIBS ${MLPROF_EXTRA_PC_LIBS} ${ARGN} PARENT_SCOPE)
    if(missing)
      list(JOIN missing ", " missing)
      message(STATUS "mlprof.pc: ${module}.pc names libraries that are not installed (${missing}); "
                     "mlprof.pc lists ${ARGN} instead")
    endif()
  endif()
endfunction()
_mlprof_sources_include("libunwind[a-z_-]*\\.h" _uses_unwind)
_mlprof_sources_include("papi\\.h" _uses_papi)
_mlprof_sources_include("zlib\\.h" _uses_zlib)
if(MLPROF_HAVE_LIBUNWIND AND _uses_unwind)
  list(APPEND MLPROF_EXTRA_LIBS ${MLPROF_UNWIND_LINK_LIBRARIES})
  _mlprof_pc_dep(libunwind MLPROF_UNWIND ${MLPROF_UNWIND_LDFLAGS})
endif()
# _mlprof_soname(<out> <library> <fallback>): the soname the loader asks
# for when <library> is opened at run time (objdump -p), else <fallback>.
function(_mlprof_soname out lib fallback)
  set(name "")
  get_filename_component(real ${lib} REALPATH)
  if(CMAKE_OBJDUMP)
    execute_process(COMMAND ${CMAKE_OBJDUMP} -p ${real}
                    OUTPUT_VARIABLE dyn ERROR_QUIET RESULT_VARIABLE rc)
    if(rc EQUAL 0 AND dyn MATCHES "SONAME[ \t]+([^ \t\r\n]+)")
      set(name ${CMAKE_MATCH_1})
    endif()
  endif()
  if(NOT name)
    set(name ${fallback})
  endif()
  set(${out} ${name} PARENT_SCOPE)
endfunction()
# PAPI is opened at run time (src/cpu/papi_load.c), and only on a machine
# whose kernel counts hardware events: linked, libpapi and libpfm would cost
# every profiled program milliseconds of relocations at start.
set(MLPROF_PAPI_SONAME "")
if(MLPROF_HAVE_PAPI AND _uses_papi)
  get_filename_component(_mlprof_papi_name ${MLPROF_PAPI_LIBRARY} NAME)
  _mlprof_soname(MLPROF_PAPI_SONAME ${MLPROF_PAPI_LIBRARY} ${_mlprof_papi_name})
endif()
# libdw is opened at run time by the analysis (symbols_dw.c), never linked:
# a profiled program does not map it, and mlprof.pc does not require it.
# zlib is opened at run time too (src/analyze/export/gzfile.c), by the one
# export that writes gzip: linked, it would be one more library for every
# profiled program and every `mlprof` command to load at start.
set(MLPROF_ZLIB_SONAME "")
if(MLPROF_HAVE_ZLIB AND _uses_zlib)
  list(GET ZLIB_LIBRARIES 0 _mlprof_zlib_lib)
  _mlprof_soname(MLPROF_ZLIB_SONAME ${_mlprof_zlib_lib} libz.so.1)
endif()
list(REMOVE_DUPLICATES MLPROF_EXTRA_LIBS)
list(REMOVE_DUPLICATES MLPROF_EXTRA_PC_LIBS)

# mlprof_module_deps(<target> <module>): include dirs and feature definitions.
# Every module sees every MLPROF_HAVE_<X> flag (so the trace header can list
# the features) and the include dirs of the host libraries found (libunwind,
# PAPI, libdw); the CUDA headers go to the gpu module only and the MPI
# headers to the mpi module only. Also usable on a final library target
# (module "shared") for sources compiled straight into it.
function(mlprof_module_deps target module)
  foreach(f LIBUNWIND PAPI LIBDW CUPTI MPI ZLIB)
    if(MLPROF_HAVE_${f})
      target_compile_definitions(${target} PRIVATE MLPROF_HAVE_${f}=1)
    endif()
  endforeach()
  if(MLPROF_HAVE_LIBUNWIND)
    target_include_directories(${target} PRIVATE ${MLPROF_UNWIND_INCLUDE_DIRS})
    target_compile_options(${target} PRIVATE ${MLPROF_UNWIND_CFLAGS_OTHER})
  endif()
  if(MLPROF_HAVE_PAPI)
    target_include_directories(${target} PRIVATE ${MLPROF_PAPI_INCLUDE_DIR})
    if(MLPROF_PAPI_SONAME)
      target_compile_definitions(${target} PRIVATE MLPROF_PAPI_SONAME="${MLPROF_PAPI_SONAME}")
    endif()
  endif()
  if(MLPROF_HAVE_LIBDW)
    target_include_directories(${target} PRIVATE ${MLPROF_DW_INCLUDE_DIRS})
  endif()
  if(MLPROF_ZLIB_SONAME)
    target_compile_definitions(${target} PRIVATE MLPROF_ZLIB_SONAME="${MLPROF_ZLIB_SONAME}")
  endif()
  if(module STREQUAL "gpu" AND MLPROF_HAVE_CUPTI)
    # SYSTEM: the toolkit's headers are not ours to keep warning-free.
    target_include_directories(${target} SYSTEM PRIVATE ${MLPROF_CUPTI_INCLUDE_DIRS})
  endif()
  if(module STREQUAL "mpi" AND MLPROF_HAVE_MPI)
    target_include_directories(${target} SYSTEM PRIVATE ${MPI_C_INCLUDE_DIRS})
  endif()
endfunction()

set(_mlprof_summary "")
foreach(f LIBUNWIND PAPI LIBDW ZLIB CUPTI MPI PYFRAMES)
  string(TOLOWER ${f} lf)
  if(MLPROF_HAVE_${f})
    string(APPEND _mlprof_summary " ${lf}=on")
  else()
    string(APPEND _mlprof_summary " ${lf}=off")
  endif()
endforeach()
if(MLPROF_EXTRA_PC_REQUIRES OR MLPROF_EXTRA_PC_LIBS)
  list(JOIN MLPROF_EXTRA_PC_REQUIRES " " _mlprof_links)
  if(MLPROF_EXTRA_PC_LIBS)
    list(JOIN MLPROF_EXTRA_PC_LIBS " " _mlprof_pc_libs)
    string(APPEND _mlprof_links " ${_mlprof_pc_libs}")
  endif()
  string(STRIP "${_mlprof_links}" _mlprof_links)
  string(APPEND _mlprof_summary " (links ${_mlprof_links})")
endif()
message(STATUS "mlprof features:${_mlprof_summary}")

# ---- CUPTI headers for the GPU tests -----------------------------------------
# tests/test_gpu_cupti.c builds real CUPTI activity structs: once tests/ has
# defined its targets, give that one the CUPTI include directories.
if(MLPROF_HAVE_CUPTI)
  function(_mlprof_cupti_test_includes)
    if(TARGET test_gpu_cupti)
      target_include_directories(test_gpu_cupti SYSTEM PRIVATE ${MLPROF_CUPTI_INCLUDE_DIRS})
      target_compile_definitions(test_gpu_cupti PRIVATE MLPROF_HAVE_CUPTI=1)
    endif()
  endfunction()
  cmake_language(DEFER CALL _mlprof_cupti_test_includes)
endif()
