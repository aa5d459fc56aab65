#!/bin/bash
# turns.sh BASE NEW [ROUNDS]: a process recording beside a stream of large
# payloads, both into one file. Per round and build, alternating: A =
# `record_prog bigwrites 4 100` (data all: 400 writes of 2 MiB) starts,
# 0.5 s later B = `record_prog plain 3` (three queries) records into the
# same file; prints each one's wall time, B's session's duration (its
# first call to its teardown: its own run, which the processors A keeps
# busy slow down too) and how B's session ended. B's wall time less its
# duration is about its wait at its end for its calls to be stored.
# OCL_ICD_VENDORS: PoCL's by default (the GPU host: its default device).
set -eu
base=$1 new=$2 rounds=${3:-5}
export OCL_ICD_VENDORS=${OCL_ICD_VENDORS:-/etc/OpenCL/vendors/pocl.icd} SYCL_PI_RECORD_DATA=all
tmp=$(mktemp -d /tmp/turns.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
printf 'round build A_s B_s B_session_s B_ended\n'
for r in $(seq 1 "$rounds"); do
  for b in base new; do
    dir=$base; [ $b = new ] && dir=$new
    export LD_LIBRARY_PATH=$dir/lib
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
    awk -v r="$r" -v b="$b" -v a="$(awk -v x="$t3" -v y="$t0" 'BEGIN {print x - y}')" \
        -v w="$(awk -v x="$t2" -v y="$t1" 'BEGIN {print x - y}')" -v row="${row:-none none}" \
        'BEGIN {printf "%d %s %.2f %.2f %s\n", r, b, a, w, row}'
  done
done
