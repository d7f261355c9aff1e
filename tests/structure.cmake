# The include rules of the source tree, the 800-line limit, the libraries
# of the mlprof command, the reader's state and the core's names
# (check_structure.sh). The command checked is the full one, mlprof-cli: the
# start-up front is static and links no library at all.
if(TARGET mlprof_cli)
  add_test(NAME check_structure
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_structure.sh ${PROJECT_SOURCE_DIR} $<TARGET_FILE:mlprof_cli_full>
    $<TARGET_FILE:mlprof_reader> "$<JOIN:$<TARGET_OBJECTS:mlprof_core>,:>" "$<JOIN:$<TARGET_OBJECTS:mlprof_trace>,:>" $<TARGET_FILE:mlprof_shared>
    "${MLPROF_HAVE_PAPI}")
else()
  add_test(NAME check_structure COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_structure.sh ${PROJECT_SOURCE_DIR})
endif()
