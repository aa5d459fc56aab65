#!/bin/sh
# One scenario of the ThreadSanitizer check (tests/tsan_tests.cmake): real
# programs of this build, run with TSAN_OPTIONS set so that any report of
# ThreadSanitizer ends them with status 66, and their results checked as
# the suites check them. The Criterion suites cannot run under
# ThreadSanitizer (Criterion's arena: Snaipe/Criterion#274), so the
# recorder's threads are exercised here by the programs the suites drive.
#
#   tsan_check.sh BINDIR LIBDIR WORKDIR SCENARIO
set -u
bin=$1 lib=$2 work=$3 scenario=$4
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1"
export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd
rm -rf "$work" && mkdir -p "$work" || exit 1

fail() { echo "tsan_check $scenario: $*" >&2; exit 1; }

# run WHAT CMD...: runs CMD; a ThreadSanitizer report or a failure fails
# the scenario. `expect` sets the status CMD must end with (default 0).
expect=0
run() {
  what=$1
  shift
  "$@" >"$work/out" 2>&1
  st=$?
  # ThreadSanitizer of clang 14 cannot start where the kernel randomizes
  # mappings with more bits than it expects (vm.mmap_rnd_bits of 32, newer
  # kernels than Debian 12's): once more with the randomization off.
  if grep -q "unexpected memory mapping" "$work/out"; then
    setarch "$(uname -m)" -R "$@" >"$work/out" 2>&1
    st=$?
  fi
  if [ $st -eq 66 ] || grep -q "ThreadSanitizer" "$work/out"; then
    cat "$work/out" >&2
    fail "ThreadSanitizer reported $what"
  fi
  [ $st -eq "$expect" ] || { cat "$work/out" >&2; fail "$what exited $st, not $expect"; }
  expect=0
}

# queries DB N: the session holds the N device queries the threads made
# (and the few of the device's selection, under 16), none lost or doubled.
queries() {
  run "pitrace stats" "$bin/pitrace" stats "$1"
  got=$(awk '$1 == "piDeviceGetInfo" { print $2 }' "$work/out")
  [ -n "$got" ] && [ "$got" -ge "$2" ] && [ "$got" -lt $(($2 + 16)) ] ||
    { cat "$work/out" >&2; fail "$1 holds ${got:-no} device queries, not $2 and the selection's"; }
}

case $scenario in
bundle)
  # One thread sets a bundle's spec constants while another gets its
  # kernel and launches it.
  run "a bundle shared by two threads" "$bin/bundle_threads"
  grep -q "bundle_threads: done" "$work/out" || { cat "$work/out" >&2; fail "bundle_threads"; }
  ;;
threads)
  # 8 threads flooding their rings, data all, the encoders printing later:
  # every call stored once; then the verbs that read with threads of their
  # own (the cursor's decoder, the loader's, diff's seek).
  SYCL_PI_RECORD=$work/s.db SYCL_PI_RECORD_DATA=all PITRACE_PRINT_LATER=1 \
    run "recording 8 threads" "$bin/record_prog" threads 8 4000
  queries "$work/s.db" 32000
  run "show" "$bin/pitrace" show --compact "$work/s.db"
  run "export" "$bin/pitrace" export --format jsonl -o "$work/s.jsonl" "$work/s.db"
  run "diff" "$bin/pitrace" diff "$work/s.db" "$work/s.db"
  ;;
handoff)
  # Buffers made on one thread and released on another, 4 pairs.
  SYCL_PI_RECORD=$work/s.db run "recording handoff" "$bin/record_prog" handoff 4 2000
  run "check" "$bin/pitrace" stats "$work/s.db"
  ;;
bigwrites)
  # Payloads too large for the rings (the heap payloads the writer frees).
  SYCL_PI_RECORD=$work/s.db SYCL_PI_RECORD_DATA=all \
    run "recording big writes" "$bin/record_prog" bigwrites 4 8
  run "replay" "$bin/pitrace" replay "$work/s.db"
  ;;
salvage)
  # Threads that end with _exit: the rings salvaged by the next verb.
  expect=3
  SYCL_PI_RECORD=$work/s.db run "recording threads, then _exit" "$bin/record_prog" threadsexit 4 3000
  queries "$work/s.db" 12000
  # Thread after thread from 4 threads at once, each taking a ring an
  # exited one left (handed over at its exit, its records not yet all
  # read), then _exit and the salvage.
  expect=3
  SYCL_PI_RECORD=$work/c.db run "recording thread after thread" "$bin/record_prog" churn 100 4
  queries "$work/c.db" 400
  # A ring handed over with records not yet committed, then _exit.
  expect=3
  SYCL_PI_RECORD=$work/h.db run "recording a ring handed over" "$bin/record_prog" handover
  queries "$work/h.db" 30002
  ;;
flood)
  # bench_record's child: 4 threads of info queries by name, data all,
  # printing later; then the same traced to a file.
  PITRACE_PRINT_LATER=1 run "recording info queries" \
    "$bin/bench_record" --child "$lib" null-info-name rec-all 4 20000 0 "$work/b.db"
  run "tracing info queries" \
    "$bin/bench_record" --child "$lib" null-info-name trace 4 20000 0 "$work/b.txt"
  ;;
record)
  # pitrace record over a program with threads, and replays that use
  # threads (the replay plugin following two recorded threads).
  run "pitrace record" "$bin/pitrace" record -o "$work/r" -- "$bin/record_prog" threads 4 2000
  # Forks while a thread floods the recorder, each child recording a
  # session of its own (its writer's thread started after a fork of a
  # process with threads: ThreadSanitizer kills such a child unless told
  # not to, as it cannot know that no lock was held at the fork).
  TSAN_OPTIONS="$TSAN_OPTIONS die_after_fork=0" SYCL_PI_RECORD=$work/f.db \
    run "forks while a thread floods the recorder" "$bin/record_prog" forkmany 6
  SYCL_PI_RECORD=$work/t.db run "recording replay_threads" "$bin/replay_threads" data
  run "replay" "$bin/pitrace" replay "$work/t.db"
  SYCL_PI_REPLAY=$work/t.db OCL_ICD_VENDORS=/nonexistent \
    run "replay_threads under the replay plugin" "$bin/replay_threads" data
  # The runtime unloaded and loaded again while a thread that used it
  # lives: a session each time, that thread leaving its last ring.
  SYCL_PI_RECORD=$work/d.db run "dlopen_cycle across" "$bin/dlopen_cycle" "$lib/libpirt.so" 3 across
  run "pitrace sessions" "$bin/pitrace" sessions "$work/d.db"
  [ "$(grep -c teardown "$work/out")" -eq 3 ] || { cat "$work/out" >&2; fail "not 3 sessions"; }
  ;;
callbacks)
  # An application that waits for its event callbacks (through the
  # instrumented front end), recorded, then re-run against its recording:
  # the replay plugin's callback thread, holding and waking the
  # application's.
  run "pitrace record callback_app" "$bin/pitrace" record -o "$work/c" -- "$bin/callback_app"
  set -- "$work"/c/*.db
  SYCL_PI_REPLAY=$1 OCL_ICD_VENDORS="$bin/../etc/OpenCL/vendors/pitrace.icd" \
    run "callback_app under the replay plugin" "$bin/callback_app"
  grep -q "8 callbacks ran" "$work/out" || { cat "$work/out" >&2; fail "the callbacks did not run"; }
  # A map whose end a callback tells: its bytes kept by the recorder's own
  # callback on the map's event, on the implementation's thread.
  run "pitrace record callback_app mapcallback" "$bin/pitrace" record -o "$work/m" -- \
    "$bin/callback_app" mapcallback
  set -- "$work"/m/*.db
  run "replay of the map" "$bin/pitrace" replay "$1"
  grep -q "1 read-backs verified" "$work/out" || { cat "$work/out" >&2; fail "the map's bytes were not kept"; }
  ;;
*)
  fail "no such scenario"
  ;;
esac
rm -rf "$work"
echo "tsan_check $scenario: no report, results as expected"
