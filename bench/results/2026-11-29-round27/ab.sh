#!/bin/sh
# ab.sh BASE NOW OUT PAIRS [bench_record options...]
#
# Two builds of the recorder side by side on one machine (round 27: the
# session's base 98fb3e2 against its end): BASE/bin/bench_record (a
# Release build, whose bench_record runs its own shim and stand-in plugin
# from BASE/lib, found first on LD_LIBRARY_PATH, as NOW's in NOW/lib) and
# NOW/bin/bench_record,
# alternating, PAIRS times (base first in odd pairs, now first in even
# ones), each with the same options; each run's output into
# OUT/base-K.txt or OUT/now-K.txt. summarize.py OUT puts them side by side.
set -eu
base=$1 now=$2 out=$3 pairs=$4
shift 4
mkdir -p "$out"
k=1
while [ "$k" -le "$pairs" ]; do
  if [ $((k % 2)) -eq 1 ]; then order="base now"; else order="now base"; fi
  for way in $order; do
    if [ "$way" = base ]; then dir=$base; else dir=$now; fi
    echo "== $way run $k: $(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg)" >&2
    LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$dir/bin/bench_record" "$@" >"$out/$way-$k.txt" 2>&1
  done
  k=$((k + 1))
done
