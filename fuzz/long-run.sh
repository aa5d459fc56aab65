#!/bin/sh
# long-run.sh: the long fuzzing run (README.md, "Running"): each named
# target with N workers for T seconds, all targets at once, in libFuzzer's
# fork mode (-fork=N: a crash, leak or timeout is kept and the run goes
# on), one corpus directory per target seeded from the seeds; then, per
# target, the executions summed over its workers, the executions a second
# per worker, and the crash, leak, timeout and out-of-memory inputs found,
# copied flat into OUT.
#
#   fuzz/long-run.sh [-w WORKERS] [-t SECONDS] OUT TARGET...
#
# TARGET: config, filter, session, salvage, payloads or kernelsig (the fuzzer BIN/fuzz_TARGET),
# or the path of a fuzzer binary (another build of one, e.g. the
# UBSan-only build: bin-ubsan/fuzz_session). Defaults: 8 workers, 540
# seconds. Where the files are: in a pack (fuzz/pack.sh) the folders
# beside this script (bin/, lib/, seeds/, dict/); in a source tree
# build-fuzz/ and fuzz/dict; FUZZ_BIN, FUZZ_LIB, FUZZ_SEEDS and FUZZ_DICT
# override; FUZZ_FLAGS adds libFuzzer flags (-max_len=N, ...). OUT/TARGET/
# keeps each target's corpus and log.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
workers=8
secs=540
while getopts w:t: o; do
  case $o in
    w) workers=$OPTARG ;;
    t) secs=$OPTARG ;;
    *) echo "usage: long-run.sh [-w WORKERS] [-t SECONDS] OUT TARGET..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -ge 2 ] || { echo "usage: long-run.sh [-w WORKERS] [-t SECONDS] OUT TARGET..." >&2; exit 2; }
if [ -d "$here/bin" ] && [ -d "$here/seeds" ]; then
  root=$here
  : "${FUZZ_BIN:=$root/bin}" "${FUZZ_LIB:=$root/lib}" "${FUZZ_SEEDS:=$root/seeds}" \
    "${FUZZ_DICT:=$root/dict}"
else
  root=$(cd "$here/.." && pwd)
  : "${FUZZ_BIN:=$root/build-fuzz/bin}" "${FUZZ_LIB:=$root/build-fuzz/lib}" \
    "${FUZZ_SEEDS:=$root/build-fuzz/fuzz/seeds}" "${FUZZ_DICT:=$here/dict}"
fi
out=$1
shift
mkdir -p "$out"
out=$(cd "$out" && pwd)
export LD_LIBRARY_PATH="$FUZZ_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PITRACE_FUZZ_SALVAGE_DB="$FUZZ_SEEDS/salvage-base.db"
# As the suite runs them (fuzz/CMakeLists.txt): an impossible allocation
# (a damaged file's size) fails as malloc does; leaks are findings.
export ASAN_OPTIONS="${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"

# A target's binary, its name (of its seeds and dictionary) and label
# (what OUT/LABEL/ and its findings are named by) into bin, name, label.
target() {
  case $1 in
    /*) bin=$1 ;;
    */*) bin=$PWD/$1 ;;
    *) bin=$FUZZ_BIN/fuzz_$1 ;;
  esac
  case $1 in
    */*) name=$(basename "$1"); name=${name#fuzz_}
         label=$(basename "$(dirname "$1")")-$name ;;
    *) name=$1; label=$1 ;;
  esac
}

# Every target checked before anything starts.
labels=""
for t in "$@"; do
  target "$t"
  [ -x "$bin" ] || { echo "long-run.sh: no fuzzer $bin (build fuzz_all, or pack with fuzz/pack.sh)" >&2; exit 2; }
  [ -d "$FUZZ_SEEDS/$name" ] || { echo "long-run.sh: no seeds $FUZZ_SEEDS/$name (run fuzz/make_seeds.sh)" >&2; exit 2; }
  case " $labels " in *" $label "*) echo "long-run.sh: $label named twice" >&2; exit 2 ;; esac
  labels="$labels $label"
done

pids=""
for t in "$@"; do
  target "$t"
  d=$out/$label
  rm -rf "$d"
  mkdir -p "$d/corpus" "$d/artifacts"
  cp "$FUZZ_SEEDS/$name"/* "$d/corpus/"
  dict=""
  [ -f "$FUZZ_DICT/$name.dict" ] && dict=-dict=$FUZZ_DICT/$name.dict
  # -timeout: an input takes milliseconds; one that takes 25 s is a hang.
  (cd "$d" && exec "$bin" -fork="$workers" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
     -max_total_time="$secs" -timeout=25 -artifact_prefix="$d/artifacts/" $dict \
     ${FUZZ_FLAGS:-} corpus \
     >log 2>&1) &
  pids="$pids $!"
done
echo "long-run.sh: $# target(s), $workers worker(s) each, $secs s; logs in $out/*/log"
status=0
for p in $pids; do
  wait "$p" || status=1
done

# The fork-mode parent's last progress line: "#EXECS: ... time: Ts ...".
found=0
for label in $labels; do
  d=$out/$label
  last=$(grep -E '^#[0-9]+: cov:' "$d/log" | tail -n 1)
  execs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
  took=$(echo "$last" | sed -n 's/.* time: \([0-9]*\)s.*/\1/p')
  if [ -z "$execs" ] || [ -z "$took" ] || [ "$took" -eq 0 ]; then
    echo "$label: no progress line in $d/log (did it start? see the log)"
    status=1
    continue
  fi
  files=""
  for f in "$d"/artifacts/*; do
    [ -f "$f" ] || continue
    cp "$f" "$out/$label-$(basename "$f")"
    files="$files $label-$(basename "$f")"
    found=$((found + 1))
  done
  echo "$label: $execs executions in ${took}s over $workers workers," \
    "$((execs / took / workers)) a second per worker; findings:${files:- none}"
done
[ "$found" -eq 0 ] || echo "long-run.sh: $found finding(s) in $out: rerun one with its fuzzer to reproduce it"
exit $status
