#!/bin/sh
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib
PERF="env LD_LIBRARY_PATH=$B/perflib:$B/lib $B/bin/perf"
for T in 8 1; do
  rm -f /tmp/p.db* /tmp/p.data
  $PERF record -q -F 15000 -e cpu-clock -o /tmp/p.data $B/bin/bench_record --child $B/lib null-scalar rec-none $T 1000000 0 /tmp/p.db | grep RESULT
  echo "== threads $T: samples by comm"
  $PERF report -i /tmp/p.data --sort comm --stdio 2>/dev/null | grep "%" | head -8
  echo "== threads $T: merge thread by symbol"
  $PERF report -i /tmp/p.data --comm pitrace-merge --sort dso,sym --stdio 2>/dev/null | grep "%" | head -25
  echo "== threads $T: merge thread hottest instructions (count sym+off)"
  $PERF script -i /tmp/p.data --comm pitrace-merge -F ip,sym,symoff 2>/dev/null | awk '{c[$2]++; n++} END{for(k in c) printf "%d %.2f%% %s\n", c[k], 100*c[k]/n, k}' | sort -rn | head -70
done
