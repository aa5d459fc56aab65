#!/bin/sh
# Round 14: what recording with data all adds to a real program, the
# recorder of e630d55 (BASE: payloads copied into malloc'd memory, stored
# by binding them) against this round's (NEW: payloads in 2 MiB pages kept
# for reuse, written into their blob rows in place), side by side: each
# round runs vadd N directly and recorded by both with data all and data
# none, in an order that rotates from round to round; differences are
# taken within a round. The floor (bench_copyhash, NEW's) runs first.
#
#   OUT=DIR ICD=FILE NEW=build BASE=/tmp/base/build ROUNDS=20 N=4194304 \
#     sh data-ab.sh
set -u
NEW=${NEW:-build-gpu}
BASE=${BASE:-build-gpu-base}
ICD=${ICD:-/etc/OpenCL/vendors/pocl.icd}
N=${N:-4194304}
ROUNDS=${ROUNDS:-20}
OUT=${OUT:-/tmp/data-ab.$$}
mkdir -p "$OUT"
times=$OUT/times
: >"$times"
now() { date +%s%N; }
# run ROUND WAY: one timed run of vadd; WAY is direct, or BUILD-DATA
run() {
  db=$OUT/s.db
  rm -f "$db" "$db-journal" "$db"-rings.*
  case $2 in
  direct) b=$NEW data= ;;
  base-*) b=$BASE data=${2#base-} ;;
  new-*)  b=$NEW data=${2#new-} ;;
  esac
  t0=$(now)
  if [ -z "$data" ]; then
    env OCL_ICD_VENDORS="$ICD" SYCL_DEVICE_FILTER=opencl LD_LIBRARY_PATH="$b/lib" \
      "$b/bin/vadd" "$N" >"$OUT/o" 2>&1
  else
    env OCL_ICD_VENDORS="$ICD" SYCL_DEVICE_FILTER=opencl LD_LIBRARY_PATH="$b/lib" \
      SYCL_PI_RECORD="$db" SYCL_PI_RECORD_DATA="$data" "$b/bin/vadd" "$N" >"$OUT/o" 2>&1
  fi
  t1=$(now)
  if ! grep -q "result verified" "$OUT/o"; then
    echo "data-ab: $2 in round $1 failed:" >&2
    cat "$OUT/o" >&2
    exit 1
  fi
  echo "$1 $2 $(( (t1 - t0) / 1000 ))" >>"$times"
}
LD_LIBRARY_PATH=$NEW/lib "$NEW/bin/bench_copyhash" --rounds 20
ways="direct base-all new-all base-none new-none"
run 0 direct # warm-up: kernel caches, the driver
r=1
while [ $r -le "$ROUNDS" ]; do
  # the order rotates: round r starts at way r mod 5
  set -- $ways
  k=$(( r % 5 ))
  while [ $k -gt 0 ]; do w=$1; shift; set -- "$@" "$w"; k=$((k - 1)); done
  for w in "$@"; do run "$r" "$w"; done
  r=$((r + 1))
done
python3 - "$times" "$N" <<'PY'
import sys, math, collections
t = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    r, w, us = line.split()
    if r != "0":
        t[int(r)][w] = int(us) / 1000.0
rounds = sorted(t)
n = len(rounds)
def stats(v):
    v = sorted(v)
    m = v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2
    h = 1.96 * math.sqrt(len(v)) / 2
    lo = v[max(0, int(math.floor(len(v) / 2 - h)))]
    hi = v[min(len(v) - 1, int(math.ceil(len(v) / 2 + h)))]
    return "%+.1f / %+.1f / %+.1f (median in %+.1f..%+.1f)" % (v[0], m, v[-1], lo, hi)
print("vadd %s, %d rounds; ms, min / median / max over the rounds (differences taken within a round)" % (sys.argv[2], n))
print("direct run (ms): %s" % stats([t[r]["direct"] for r in rounds]).replace("+", ""))
for w in ("base-none", "new-none", "base-all", "new-all"):
    print("%-10s - direct: %s" % (w, stats([t[r][w] - t[r]["direct"] for r in rounds])))
print("new-all - base-all: %s" % stats([t[r]["new-all"] - t[r]["base-all"] for r in rounds]))
print("new-all - new-none: %s" % stats([t[r]["new-all"] - t[r]["new-none"] for r in rounds]))
PY
