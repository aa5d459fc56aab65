#!/bin/sh
# Round 13: the merge thread's and encoders' enumeration-entry cache, one
# thread-local table each (16dd3ee's shim, lib-old) against one shared
# table of atomic pointers (this round's, lib), info queries and scalar
# calls flooding, data none; the two shims alternate within each pair, the
# first of a pair alternating too. Columns of RESULT: ns/call (flooding),
# calls/s stored, bytes/call, recorder CPU ns/call, of it the merge
# thread's, the encoders'.
set -u
B=${B:-build-gpu}
export LD_LIBRARY_PATH=$B/lib
N=${N:-400000}
PAIRS=${PAIRS:-6}
for wl in null-info-name null-info-int null-scalar; do
  for t in 8 1; do
    i=0
    while [ $i -lt $PAIRS ]; do
      if [ $((i % 2)) = 0 ]; then order="lib-old lib"; else order="lib lib-old"; fi
      for d in $order; do
        db=/tmp/enum-ab-$$.db
        rm -f $db*
        echo "$wl $t $d $($B/bin/bench_record --child $PWD/$B/$d $wl rec-none $t $N 0 $db | grep RESULT)"
        rm -f $db*
      done
      i=$((i + 1))
    done
  done
done
