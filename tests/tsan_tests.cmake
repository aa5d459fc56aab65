# The ThreadSanitizer check (a PITRACE_TSAN build; scripts/test.sh runs
# `ctest -L tsan` there): real programs of the build under ThreadSanitizer,
# each scenario of tests/tsan_check.sh a test of its own.
foreach(scenario threads handoff bigwrites salvage flood record callbacks bundle)
  add_test(NAME tsan_${scenario}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tsan_check.sh ${PROJECT_BINARY_DIR}/bin
            ${PROJECT_BINARY_DIR}/lib ${CMAKE_CURRENT_BINARY_DIR}/tsan-${scenario} ${scenario})
  set_tests_properties(tsan_${scenario} PROPERTIES LABELS tsan TIMEOUT 600)
endforeach()
