#!/bin/sh
# Round 11's second fuzzing run on the GPU host: this round's code, the
# session reader (UBSan-only build, the faster one: 8 workers) and salvage
# (ASan+UBSan: 8 workers) side by side, for the time given (default 540 s).
#   fuzz-run2.sh OUT [SECONDS]
set -eu
sh build-fuzz-pack/long-run.sh -w 8 -t "${2:-540}" "$1" build-fuzz-pack/bin-ubsan/fuzz_session salvage
