#!/bin/sh
# Round 11's fuzzing on the GPU host (16 cores): salvage of damaged ring
# files, 8 workers on this round's build and 8 on feefd31 (the build
# before 24083ad, which made the printers take another process's heap
# payloads as lost: round 10 found a crash there, strnlen(NULL) under
# UBSan, and lost its input), ASan+UBSan, for the time given (default
# 480 s). Findings are copied into OUT.
#   fuzz-run.sh OUT [SECONDS]
set -eu
out=$1
secs=${2:-480}
sh build-fuzz-pack/long-run.sh -w 8 -t "$secs" "$out" salvage build-fuzz-pack/bin-unfixed/fuzz_salvage
