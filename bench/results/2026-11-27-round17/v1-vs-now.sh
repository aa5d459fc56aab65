#!/bin/sh
# v1-vs-now.sh V1 NOW OUT PAIRS [bench_record options...]
#
# The version-1 recorder against this one, side by side on one machine:
# V1/bin/bench_record (a Release build of 94dfa50, whose bench_record runs
# its own shim and stand-in plugin from V1/lib, found first on
# LD_LIBRARY_PATH, as NOW's in NOW/lib) and NOW/bin/bench_record,
# alternating, PAIRS times (v1 first in odd pairs, now first in even
# ones), each with the same options; each run's output into
# OUT/v1-K.txt or OUT/now-K.txt. summarize.py OUT puts them side by side.
set -eu
v1=$1 now=$2 out=$3 pairs=$4
shift 4
mkdir -p "$out"
k=1
while [ "$k" -le "$pairs" ]; do
  if [ $((k % 2)) -eq 1 ]; then order="v1 now"; else order="now v1"; fi
  for way in $order; do
    if [ "$way" = v1 ]; then dir=$v1; else dir=$now; fi
    echo "== $way run $k: $(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg)" >&2
    LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$dir/bin/bench_record" "$@" >"$out/$way-$k.txt" 2>&1
  done
  k=$((k + 1))
done
