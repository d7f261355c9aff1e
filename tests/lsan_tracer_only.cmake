# The sanitizer step's rerun rule (scripts/lsan_tracer_only): only tests that
# failed by LeakSanitizer's own tracer crash run again.
add_test(NAME lsan_tracer_only
  COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/lsan_tracer_only.sh ${PROJECT_SOURCE_DIR}/scripts/lsan_tracer_only
          ${CMAKE_CURRENT_BINARY_DIR}/tmp/lsan_tracer_only)
set_tests_properties(lsan_tracer_only PROPERTIES TIMEOUT 60)
