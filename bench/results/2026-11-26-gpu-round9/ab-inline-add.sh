#!/bin/sh
# The chunk row added inline (new) against the same build before it (base):
# bench_record children alternating, scalar calls flooding at 8 and 1
# threads, data none; prints "way threads RESULT ns rate bytes cpu merge enc".
B=$PWD/build-gpu
for r in $(seq ${R:-8}); do
  for T in 8 1; do
    for w in base new; do
      D=$B; [ $w = base ] && D=$B/base
      rm -f /tmp/ia.db*
      echo "$w $T $(LD_LIBRARY_PATH=$D/lib:$B/lib $D/bin/bench_record --child $D/lib null-scalar rec-none $T 500000 0 /tmp/ia.db | grep RESULT)"
    done
  done
done
