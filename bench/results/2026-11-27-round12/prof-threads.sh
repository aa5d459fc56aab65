#!/bin/sh
# Round 12 on the GPU host: where the merge thread's time goes at 4 and at
# 8 flooding threads (scalar calls, data none, 1000000 calls a thread), to
# see what grows with the number of rings (perf carried in build-gpu/bin
# and build-gpu/perflib; cpu-clock: this VM counts no cycles).
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib
PERF="env LD_LIBRARY_PATH=$B/perflib:$B/lib $B/bin/perf"
for T in 4 8 4 8; do
  rm -f /tmp/p.db* /tmp/p.data
  echo "== $T threads: $($PERF record -q -F 15000 -e cpu-clock -o /tmp/p.data $B/bin/bench_record --child $B/lib null-scalar rec-none $T 1000000 0 /tmp/p.db | grep RESULT)"
  echo "== $T threads: samples by comm"
  $PERF report -i /tmp/p.data --sort comm --stdio 2>/dev/null | grep "%" | head -6
  echo "== $T threads: pitrace-merge by symbol"
  $PERF report -i /tmp/p.data --comm pitrace-merge --sort dso,sym --stdio 2>/dev/null | grep "%" | head -22
done
