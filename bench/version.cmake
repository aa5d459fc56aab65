# Writes bench_version.h: the commit the benchmarks were built from, for the
# header of their output. Run at every build (cmake -P, from the
# bench_version target); the header changes only when the commit does.
#   cmake -DSRC=<source dir> -DOUT=<header> -P version.cmake
execute_process(COMMAND git -C "${SRC}" rev-parse --short=12 HEAD
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
if(NOT rc EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown (not built from a git checkout)")
else()
  execute_process(COMMAND git -C "${SRC}" status --porcelain --untracked-files=no
    OUTPUT_VARIABLE changes RESULT_VARIABLE rc ERROR_QUIET)
  if(rc EQUAL 0 AND NOT changes STREQUAL "")
    string(APPEND commit " with uncommitted changes")
  endif()
endif()
file(WRITE "${OUT}.tmp" "#define PITRACE_BENCH_COMMIT \"${commit}\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different "${OUT}.tmp" "${OUT}")
file(REMOVE "${OUT}.tmp")
