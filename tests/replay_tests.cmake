# pitrace replay and extract, and the replay plugin (replay/): the programs
# and plugin the suite records, and the suite itself.
add_executable(replay_threads progs/replay_threads.c)
target_link_libraries(replay_threads PRIVATE pirt Threads::Threads)
# An OpenCL application whose kernels read and write images (extract's
# image contents), recorded through the front end.
add_executable(image_app progs/image_app.c)
target_link_libraries(image_app PRIVATE OpenCL::OpenCL m)
# An OpenCL application that waits for its event callbacks, which release
# what it made (the replay plugin runs them where they began).
add_executable(callback_app progs/callback_app.c)
target_link_libraries(callback_app PRIVATE OpenCL::OpenCL Threads::Threads)
# An OpenCL application that moves its buffers' data only by rectangles
# (extract follows them row by row).
add_executable(rect_app progs/rect_app.c)
target_link_libraries(rect_app PRIVATE OpenCL::OpenCL)
add_executable(fork_app progs/fork_app.c)
target_link_libraries(fork_app PRIVATE OpenCL::OpenCL)
add_library(pi_replay_userevent MODULE progs/replay_userevent_plugin.c)
target_link_libraries(pi_replay_userevent PRIVATE pi_headers Threads::Threads)
set_target_properties(pi_replay_userevent PROPERTIES C_VISIBILITY_PRESET hidden)

pitrace_suite(test_replay)
# extract's reading of kernel signatures (ex_sig.h), tested on its own too.
target_link_libraries(test_replay PRIVATE pitrace_replay)
target_include_directories(test_replay PRIVATE ${PROJECT_SOURCE_DIR}/replay)
add_dependencies(test_replay pitrace pi_replay pi_shim replay_threads pi_replay_userevent
  vadd pipeline shared_lib spec_const pi_null bench_replay image_app callback_app rect_app
  fork_app
  pitrace_opencl record_prog pi_level_zero ze_pitrace_test_double)
# An OpenCL application's recorded replay (through the front end): clinfo
# is Debian's, not built with ASan, and a sanitized front end cannot load
# into it, so in the gcc build only (as the app_* tests).
find_program(CLINFO clinfo)
if(CLINFO AND NOT PITRACE_SANITIZE)
  target_compile_definitions(test_replay PRIVATE PITRACE_CLINFO="${CLINFO}")
  add_dependencies(test_replay pitrace_opencl)
endif()
add_test(NAME replay COMMAND test_replay --jobs 2)
set_tests_properties(replay PROPERTIES TIMEOUT 900)

# Sessions of schema version 1 stay readable: every verb on a checked-in
# version-1 session (tests/fixtures/README.md).
pitrace_suite(test_session_v1)
add_dependencies(test_session_v1 pitrace pi_replay pi_opencl)
add_test(NAME session_v1 COMMAND test_session_v1 --jobs 2)
set_tests_properties(session_v1 PROPERTIES TIMEOUT 300)
