# bench_viewer: how fast the viewer verbs read a one-million-call session
# (figures in the README); run build/bin/bench_viewer.
add_executable(bench_viewer bench_viewer.c)
target_link_libraries(bench_viewer PRIVATE pi_headers ${CMAKE_DL_LIBS})
add_dependencies(bench_viewer pi_shim pitrace)
