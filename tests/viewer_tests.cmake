# The viewer verbs of the pitrace command (sessions, show, stats, diff,
# export, report), on sessions the suite records from real runs on PoCL and
# rusticl; the report is checked in headless Chromium (skipped without it).
# diff_leak leaves its objects to the process's end, for the diff of a
# session and its recorded replay (which releases them).
add_executable(diff_leak progs/diff_leak.c)
target_link_libraries(diff_leak PRIVATE pirt)
pitrace_suite(test_viewer)
target_link_libraries(test_viewer PRIVATE pitrace_session)
add_dependencies(test_viewer pitrace pi_shim vadd spec_const record_prog shared_lib diff_leak
  prof_probe matmul test_api callback_app)
add_test(NAME viewer COMMAND test_viewer --jobs 2)
set_tests_properties(viewer PROPERTIES TIMEOUT 900)
