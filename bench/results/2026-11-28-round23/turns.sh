#!/bin/bash
# turns.sh BASE NEW [ROUNDS]: a process recording beside a stream of large
# payloads, both into one file. Per round and build, alternating: A =
# `record_prog bigwrites 4 100` (data all: 400 writes of 2 MiB) starts,
# 0.5 s later B = `record_prog plain 3` (three queries) records into the
# same file; prints each one's wall time, B's session's duration (its
# first call to its teardown: its own run, which the processors A keeps
# busy slow down too) and how B's session ended. B's wall time less its
# duration is about its wait at its end for its calls to be stored.
set -eu
base=$1 new=$2 rounds=${3:-5}
export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd SYCL_PI_RECORD_DATA=all
tmp=$(mktemp -d /tmp/turns.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'round build A_s B_s B_session_s B_ended\n'
for r in $(seq 1 "$rounds"); do
  for b in base new; do
    dir=$base; [ $b = new ] && dir=$new
    rm -f "$tmp"/s.db*
    export SYCL_PI_RECORD=$tmp/s.db
    t0=$(date +%s.%N)
    "$dir/bin/record_prog" bigwrites 4 100 >/dev/null 2>&1 &
    a=$!
    sleep 0.5
    t1=$(date +%s.%N)
    "$dir/bin/record_prog" plain 3 >/dev/null 2>&1
    t2=$(date +%s.%N)
    wait $a
    t3=$(date +%s.%N)
    row=$("$dir/bin/pitrace" sql "$tmp/s.db" "SELECT round(duration_ns / 1e9, 2) || ' ' || ended FROM sessions WHERE id = 2" 2>/dev/null || true)
    printf '%d %s %.2f %.2f %s\n' "$r" "$b" "$(echo "$t3 - $t0" | bc)" "$(echo "$t2 - $t1" | bc)" "${row:-none none}"
  done
done
