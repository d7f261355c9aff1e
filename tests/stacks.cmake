# Readable stacks of real programs (stacks.sh): a C++ program (templates,
# namespaces, an inlined function, time in libm) run under `mlprof run`,
# whose report and exports must show demangled names, inlined frames, the
# hot line and libm's internal functions. C++ is enabled for this test
# program only; without a C++ compiler the test is not registered.
include(CheckLanguage)
check_language(CXX)
if(CMAKE_CXX_COMPILER AND TARGET mlprof_cli AND NOT MLPROF_SANITIZE)
  enable_language(CXX)
  add_executable(cxx_stacks ${CMAKE_CURRENT_LIST_DIR}/progs/cxx_stacks.cpp)
  target_compile_options(cxx_stacks PRIVATE -O2 -g -fno-omit-frame-pointer)
  set_target_properties(cxx_stacks PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
  add_test(NAME stacks_cxx
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/stacks.sh $<TARGET_FILE:mlprof_cli> $<TARGET_FILE:mlprof_shared>
            $<TARGET_FILE:cxx_stacks> ${CMAKE_CURRENT_LIST_DIR}/progs/cxx_stacks.cpp ${CMAKE_CURRENT_BINARY_DIR}/tmp)
  set_tests_properties(stacks_cxx PROPERTIES TIMEOUT 180)
endif()

# Code inlined two levels deep and a stripped copy of the same program
# (inline_chain.sh): the whole inlined chain in the folded export and the
# reports; the stripped program's code grouped by function and the missing
# symbols named, with how to get them.
if(TARGET mlprof_cli AND NOT MLPROF_SANITIZE AND CMAKE_STRIP)
  add_executable(inline_chain ${CMAKE_CURRENT_LIST_DIR}/progs/inline_chain.c)
  target_compile_options(inline_chain PRIVATE -O2 -g)
  set_target_properties(inline_chain PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/progs)
  add_test(NAME stacks_inline_chain
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/inline_chain.sh $<TARGET_FILE:mlprof_cli> $<TARGET_FILE:mlprof_shared>
            $<TARGET_FILE:inline_chain> ${CMAKE_CURRENT_LIST_DIR}/progs/inline_chain.c ${CMAKE_STRIP}
            ${CMAKE_CURRENT_BINARY_DIR}/tmp)
  set_tests_properties(stacks_inline_chain PROPERTIES TIMEOUT 180)
endif()
