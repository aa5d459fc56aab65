# `pitrace record` (cli/record.c) and the install (cmake/PitraceInstall.cmake).

# Programs that make PI calls and then crash, or exit with a given status.
foreach(prog recproc_crash recproc_exit)
  add_executable(${prog} progs/${prog}.c)
  target_link_libraries(${prog} PRIVATE pirt)
endforeach()

pitrace_suite(test_pitrace_record)
target_link_libraries(test_pitrace_record PRIVATE sqlite3)
add_dependencies(test_pitrace_record pitrace pi_shim vadd recproc_crash recproc_exit
  record_prog)
add_test(NAME pitrace_record COMMAND test_pitrace_record --jobs 4)
set_tests_properties(pitrace_record PROPERTIES ENVIRONMENT "${POCL_ENV}" TIMEOUT 600)

# pitrace record frees what it allocates, on the failure summary's path and
# on the path that removes the sessions (valgrind checks pitrace itself; the
# command runs natively). Not under the sanitizers, which valgrind cannot run.
if(NOT PITRACE_SANITIZE)
  set(record_leak_dir ${CMAKE_CURRENT_BINARY_DIR}/record-leaks)
  set(vg_args "--error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect")
  add_test(NAME pitrace_record_leaks_nothing
    COMMAND sh -c "rm -rf \"$1\" && \
      \"$0\" ${vg_args} \"$2\" record --keep on-failure -o \"$1/a\" -- \
        sh -c '\"$0\" && \"$1\" 3' \"$3\" \"$4\"; st=$?; \
      [ $st -eq 3 ] || { echo \"pitrace record exited $st, not 3\"; exit 1; }; \
      \"$0\" ${vg_args} \"$2\" record --keep on-failure -o \"$1/b\" -- \"$3\" && \
      rm -rf \"$1\""
      ${VALGRIND} ${record_leak_dir} $<TARGET_FILE:pitrace> $<TARGET_FILE:vadd>
      $<TARGET_FILE:recproc_exit>)
  set_tests_properties(pitrace_record_leaks_nothing PROPERTIES
    ENVIRONMENT "${POCL_ENV}" TIMEOUT 300)
endif()

# Installed into a temporary prefix, used by an out-of-tree project
# (tests/install): find_package(pitrace), pkg-config + cc, no LD_LIBRARY_PATH.
if(PITRACE_SANITIZE)
  set(install_consumer_flags "-fsanitize=${sanitizers} -fno-omit-frame-pointer")
else()
  set(install_consumer_flags "")
endif()
add_test(NAME install_and_consume
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install/run.sh ${PROJECT_BINARY_DIR}
          ${CMAKE_CURRENT_SOURCE_DIR}/install ${CMAKE_C_COMPILER} ${CMAKE_COMMAND}
          "${install_consumer_flags}")
set_tests_properties(install_and_consume PROPERTIES TIMEOUT 600)
