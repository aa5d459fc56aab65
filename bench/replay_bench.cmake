# bench_replay: pitrace replay's throughput on the minimal plugin, and its
# wall time against the original run on real workloads.
add_executable(bench_replay bench_replay.c)
target_link_libraries(bench_replay PRIVATE pi_headers bench_common ${CMAKE_DL_LIBS})
add_dependencies(bench_replay pi_null pi_shim pitrace vadd pipeline)
