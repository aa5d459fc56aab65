#!/bin/sh
# ab.sh LABEL BASE NOW OUT PAIRS [bench_record options...]
#
# Two builds of the recorder side by side on one machine: BASE/bin/bench_record
# and NOW/bin/bench_record (Release builds; each bench_record runs its own shim
# and stand-in plugin, from its lib/, put first on LD_LIBRARY_PATH),
# alternating, PAIRS times (BASE first in odd pairs, NOW first in even ones),
# each with the same options; each run's output into OUT/LABEL-K.txt or
# OUT/now-K.txt. bench/ab_summarize.py OUT puts them side by side. LABEL
# names the base build in both ("v1": round 17's version-1 recorder; "base":
# a session's start).
set -eu
if [ $# -lt 5 ]; then
  echo "usage: ab.sh LABEL BASE NOW OUT PAIRS [bench_record options...]" >&2
  exit 2
fi
label=$1 base=$2 now=$3 out=$4 pairs=$5
shift 5
if [ "$label" = now ]; then
  echo "ab.sh: LABEL names the base build; 'now' is the other's" >&2
  exit 2
fi
mkdir -p "$out"
k=1
while [ "$k" -le "$pairs" ]; do
  if [ $((k % 2)) -eq 1 ]; then order="$label now"; else order="now $label"; fi
  for way in $order; do
    if [ "$way" = now ]; then dir=$now; else dir=$base; fi
    echo "== $way run $k: $(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg)" >&2
    LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      "$dir/bin/bench_record" "$@" >"$out/$way-$k.txt" 2>&1
  done
  k=$((k + 1))
done
