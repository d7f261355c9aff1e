# The man page and the bash completion against the command's own help
# (cli_docs.sh): rendering, every command and option, the environment.
if(TARGET mlprof_cli)
  add_test(NAME cli_docs
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/cli_docs.sh $<TARGET_FILE:mlprof_cli> ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/tmp)
  set_tests_properties(cli_docs PROPERTIES TIMEOUT 120)
endif()
