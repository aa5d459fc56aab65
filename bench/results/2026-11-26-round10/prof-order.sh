#!/bin/sh
# Where the merge and order threads' time goes at 8 flooding threads, the
# order thread on (perf, carried in build-gpu/bin/perf and build-gpu/perflib).
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib
PERF="env LD_LIBRARY_PATH=$B/perflib:$B/lib $B/bin/perf"
for o in 1; do
  rm -f /tmp/p.db* /tmp/p.data
  PITRACE_ORDER_THREAD=$o $PERF record -q -F 15000 -e cpu-clock -o /tmp/p.data $B/bin/bench_record --child $B/lib null-scalar rec-none 8 1000000 0 /tmp/p.db | grep RESULT
  echo "== order $o: samples by comm"
  $PERF report -i /tmp/p.data --sort comm --stdio 2>/dev/null | grep "%" | head -8
  for c in pitrace-merge pitrace-order; do
    echo "== order $o: $c by symbol"
    $PERF report -i /tmp/p.data --comm $c --sort dso,sym --stdio 2>/dev/null | grep "%" | head -16
    echo "== order $o: $c hottest instructions"
    $PERF script -i /tmp/p.data --comm $c -F ip,sym,symoff 2>/dev/null | awk '{c[$2]++; n++} END{for(k in c) printf "%d %.2f%% %s\n", c[k], 100*c[k]/n, k}' | sort -rn | head -25
  done
done
