#!/bin/sh
# The merge's rings ordered by a heap (PITRACE_MERGE_SCAN=0) or by a scan
# (1), the same build, alternating: null-scalar flooding, data none.
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib
uptime
for r in $(seq 10); do
  for T in 8 4; do
    for v in 0 1; do
      [ $((r % 2)) = 0 ] && v=$((1 - v))
      rm -f /tmp/ab.db*
      w=heap; [ $v = 1 ] && w=scan
      echo "null-scalar $T $w $(PITRACE_MERGE_SCAN=$v $B/bin/bench_record --child $B/lib null-scalar rec-none $T 1000000 0 /tmp/ab.db | grep RESULT | cut -d' ' -f2-)"
    done
  done
done
uptime
