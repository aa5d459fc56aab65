#!/bin/sh
# device-run.sh: round 27 on the GPU host, in one device call: the base
# (98fb3e2) and this round's recorder side by side (bench/ab.sh, 3 pairs), the
# workloads whose per-call path this round touched: a scalar call, a
# kernel argument (a payload item: write_items marks each) and an integer
# info query, recorded with data none and traced to a file, 1 and 8
# threads. Run from the repository root with build-gpu/ carried (ab/base,
# ab/now: each bin/bench_record and lib/; the third-party libraries in
# build-gpu/lib).
set -u
out=${OUT:-/tmp}/ab
export LD_LIBRARY_PATH=$PWD/build-gpu/lib
sh bench/ab.sh base build-gpu/ab/base build-gpu/ab/now "$out" 3 \
  --threads 1,8 --rounds 3 --calls 200000 \
  --workloads null-scalar,null-setarg,null-info-int --modes rec-none,trace
python3 bench/ab_summarize.py "$out" >"$out/summary.md" 2>&1
cat "$out/summary.md"
