# Real OpenCL applications from Debian (installed by scripts/setup.sh), run
# directly and through the OpenCL front end: recorded, replayed, diffed
# (tests/apps/app_test.sh says what each step checks). clinfo's properties
# are compared with its direct output; clpeak runs one of its tests (the
# whole of clpeak takes minutes: scripts/real-apps.sh runs it, for the
# README's figures); pyopencl and CLBlast run clients of ours that verify
# their results against the host; hashcat cracks an MD5 hash; darktable-cli
# develops a picture through its OpenCL pixel pipeline (on rusticl); ffmpeg
# runs video frames through its OpenCL filters; a Python script runs
# OpenCV's transparent API (cv2.UMat) and checks it against OpenCV's CPU code.
find_program(CLINFO clinfo)
find_program(CLPEAK clpeak)
find_program(HASHCAT hashcat)
find_program(DARKTABLE_CLI darktable-cli)
find_program(FFMPEG ffmpeg)
find_library(CLBLAST_LIB clblast)
find_path(CLBLAST_INCLUDE clblast_c.h)
set(_app_test ${CMAKE_CURRENT_SOURCE_DIR}/apps/app_test.sh)
set(_app_deps pitrace pitrace_opencl pi_opencl pi_shim pi_replay)

function(pitrace_app_test app)
  add_test(NAME app_${app}
    COMMAND sh ${_app_test} ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR} ${app})
  # Minutes of work on a 2-core machine; the apps' own output explains a
  # failure, so keep them apart from the timing-sensitive suites.
  set_tests_properties(app_${app} PROPERTIES TIMEOUT 900 RUN_SERIAL TRUE)
endfunction()

if(CLINFO)
  pitrace_app_test(clinfo)
endif()
if(CLPEAK)
  pitrace_app_test(clpeak)
endif()
if(HASHCAT)
  pitrace_app_test(hashcat)
endif()
if(DARKTABLE_CLI)
  pitrace_app_test(darktable)
endif()
if(FFMPEG)
  pitrace_app_test(ffmpeg)
endif()
execute_process(COMMAND /usr/bin/python3 -c "import pyopencl, numpy"
  RESULT_VARIABLE _no_pyopencl OUTPUT_QUIET ERROR_QUIET)
if(_no_pyopencl EQUAL 0)
  pitrace_app_test(pyopencl)
  # pyopencl's work in a pool of forked workers (tests/apps/fork_pool.sh).
  add_test(NAME app_pyopencl_fork_pool
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/apps/fork_pool.sh ${PROJECT_BINARY_DIR} ${PROJECT_SOURCE_DIR})
  set_tests_properties(app_pyopencl_fork_pool PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE)
endif()
execute_process(COMMAND /usr/bin/python3 -c "import cv2, numpy"
  RESULT_VARIABLE _no_opencv OUTPUT_QUIET ERROR_QUIET)
if(_no_opencv EQUAL 0)
  pitrace_app_test(opencv)
endif()
if(CLBLAST_LIB AND CLBLAST_INCLUDE)
  add_executable(clblast_client apps/clblast_client.c)
  target_include_directories(clblast_client PRIVATE ${CLBLAST_INCLUDE} ${OpenCL_INCLUDE_DIRS})
  target_link_libraries(clblast_client PRIVATE ${CLBLAST_LIB} OpenCL::OpenCL m)
  pitrace_app_test(clblast)
endif()

# pitrace run / record: how applications get routed.
if(CLINFO)
  add_test(NAME pitrace_run COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/apps/run_verb.sh ${PROJECT_BINARY_DIR})
endif()
