#!/bin/sh
# real_programs.sh: what recording and tracing cost real programs, as wall
# time ratios: the examples (vadd, pipeline: pitrace applications) and the
# front end's real OpenCL applications (PyOpenCL, CLBlast, ffmpeg's OpenCL
# filters, OpenCV from Python; clpeak on request: minutes on PoCL), each
# plain, recorded with data none and all,
# and traced (SYCL_PI_TRACE=2 to a file), the OpenCL applications also
# routed through pitrace unrecorded; the ways interleaved round by round and
# the ratios taken within a round, min / median / max over the rounds, with
# the machine, the commit and the rounds in the header.
#
# It is scripts/real-apps.sh (which see for the ways, the sizes and how
# each run is verified) with this benchmark's programs and 5 rounds:
#
#   bench/real_programs.sh [--rounds N]
#                          [--apps "vadd pipeline pyopencl clblast ffmpeg opencv clpeak"]
#                          [--icd FILE] [--keep] [BUILD]
#
# Sizes: VADD_N (default 4194304), PIPELINE_N (1048576), PYOPENCL_N (4000000),
# CLBLAST_MNK ("512 512 512"), FFMPEG_FRAMES (30), OPENCV_WH ("1920 1080").
# On a GPU host: --icd names NVIDIA's vendor file, BUILD is build-gpu
# (scripts/gpu-pack.sh), and --apps names what that host has (it has no
# ffmpeg or OpenCV: a missing application is refused in one line).
exec sh "$(dirname "$0")/../scripts/real-apps.sh" --rounds 5 \
  --apps "vadd pipeline pyopencl clblast ffmpeg opencv" "$@"
