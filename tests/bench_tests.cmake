# The benchmarks run (tiny sizes, one or two rounds): they are not tests of
# speed, and nothing here looks at a figure; each fails when a run of the
# benchmark fails or a row says so.
add_test(NAME bench_record_smoke COMMAND bench_record --rounds 2 --calls 3000 --paced-calls 300
  --threads 2 --workloads null-scalar,null-info-name)
add_test(NAME bench_record_smoke_opencl COMMAND bench_record --rounds 1 --calls 2000
  --paced-calls 200 --threads 2 --workloads ocl-info-name,ocl-setarg
  --icd /etc/OpenCL/vendors/pocl.icd)
set_tests_properties(bench_record_smoke bench_record_smoke_opencl PROPERTIES
  FAIL_REGULAR_EXPRESSION "failed|FAILED")
add_test(NAME bench_replay_smoke COMMAND bench_replay --calls 3000 --rounds 1 --vadd 1024
  --pipeline 4096)
set_tests_properties(bench_replay_smoke PROPERTIES ENVIRONMENT "${POCL_ENV}"
  FAIL_REGULAR_EXPRESSION "failed|FAILED")
add_test(NAME bench_real_programs_smoke
  COMMAND sh ${PROJECT_SOURCE_DIR}/bench/real_programs.sh --rounds 1 --apps vadd
          ${PROJECT_BINARY_DIR})
set_tests_properties(bench_real_programs_smoke PROPERTIES
  ENVIRONMENT "VADD_N=1024"
  FAIL_REGULAR_EXPRESSION "FAILED")
add_test(NAME bench_viewer_smoke COMMAND bench_viewer --calls 3000 --rounds 1
  --only load,compact,stats --against $<TARGET_FILE:pitrace>)
set_tests_properties(bench_viewer_smoke PROPERTIES FAIL_REGULAR_EXPRESSION "failed")
add_test(NAME bench_fixed_smoke COMMAND bench_fixed --rounds 2 --calls 10 --work 1)
set_tests_properties(bench_fixed_smoke PROPERTIES FAIL_REGULAR_EXPRESSION "failed|left no")
add_test(NAME bench_copyhash_smoke COMMAND bench_copyhash --rounds 2 --sizes 1000000,70000)
