# bench_viewer: how fast the viewer verbs and replay's load read a
# one-million-call session (figures in the README); run build/bin/bench_viewer.
# bench_load: replay's load alone (rp_session_open), which bench_viewer runs
# from beside the pitrace it times.
add_executable(bench_load bench_load.c)
target_include_directories(bench_load PRIVATE ${PROJECT_SOURCE_DIR}/replay)
target_link_libraries(bench_load PRIVATE pitrace_replay)
add_executable(bench_viewer bench_viewer.c)
target_link_libraries(bench_viewer PRIVATE pi_headers ${CMAKE_DL_LIBS})
add_dependencies(bench_viewer pi_shim pitrace bench_load)
