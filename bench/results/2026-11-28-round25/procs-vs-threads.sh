#!/bin/sh
# The premise of docs/recorder-parallel.md, measured without building it:
# 8 recording threads in one process (one merge thread orders and handles
# all their calls) against the same 8 threads spread over 2 or 4 processes
# (each process's merge thread handles its own threads' calls, in parallel
# with the others': what K handlers over groups of rings would do, less the
# shared handle map and the merge of tickets at commit). Each shape is
# bench_record's child (one workload, one way, T threads), started at once
# in every process of the shape; the rate = all calls / the wall time from
# the start until the last process has stored its calls and exited.
#
#   procs-vs-threads.sh BIN CALLS ROUNDS     (BIN: a bin/ with bench_record
#                                             and ../lib beside it)
set -eu
bin=$1 calls=${2:-1000000} rounds=${3:-5}
dir=$(mktemp -d /tmp/procs-XXXXXX)
trap 'rm -rf "$dir"' EXIT
lib=$(cd "$bin/../lib" && pwd)
now() { date +%s%N; }
shape() { # PROCS THREADS -> prints the calls/s of one run
  p=$1 t=$2 i=0
  start=$(now)
  while [ $i -lt "$p" ]; do
    mkdir -p "$dir/$i"
    "$bin/bench_record" --child "$lib" null-scalar rec-none "$t" "$calls" 0 "$dir/$i/s.db" \
      >"$dir/$i/out" 2>&1 &
    i=$((i + 1))
  done
  wait
  end=$(now)
  i=0
  while [ $i -lt "$p" ]; do
    grep -q '^RESULT' "$dir/$i/out" || { echo "process $i failed:" >&2; cat "$dir/$i/out" >&2; exit 1; }
    rm -rf "$dir/$i"
    i=$((i + 1))
  done
  # calls + 200 warm-up calls a thread, as bench_record counts them stored
  echo "$p $t $end $start" | awk -v c="$calls" '{printf "%.2f", ($1*$2*(c+200))/(($3-$4)/1e9)/1e6}'
}
echo "null-scalar, data none, $calls calls a thread; M calls/s stored (all calls / wall time of the shape)"
echo "round 1x8 2x4 4x2 8x1"
r=1
while [ $r -le "$rounds" ]; do
  a=$(shape 1 8); b=$(shape 2 4); c=$(shape 4 2); d=$(shape 8 1)
  echo "$r $a $b $c $d"
  r=$((r + 1))
done
