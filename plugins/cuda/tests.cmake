# CTest tests of the CUDA plugin's declarations (cuda_driver.h), included by
# the top-level CMakeLists.txt once testing is enabled. The plugin's own
# suite (test_cuda, test_cuda_plain) is in tests/CMakeLists.txt.

# Against the driver: exit 77 (skipped) without one.
add_test(NAME cuda_driver_decls COMMAND check_cuda_driver)
set_tests_properties(cuda_driver_decls PROPERTIES SKIP_RETURN_CODE 77)

# Against the toolkit's cuda.h, where CMake found one: compiled by the test
# (not by the build), so a difference fails this test and never the build.
if(PITRACE_CUDA_INCLUDE_DIR)
  add_test(NAME cuda_decls_match_cuda_h
    COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/check_cuda_decls.sh
            ${CMAKE_C_COMPILER} ${PITRACE_CUDA_INCLUDE_DIR}
            ${PROJECT_BINARY_DIR}/check_cuda_decls)
  set_tests_properties(cuda_decls_match_cuda_h PROPERTIES SKIP_RETURN_CODE 77)
endif()
