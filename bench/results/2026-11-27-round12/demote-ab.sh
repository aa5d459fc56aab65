#!/bin/sh
# Round 12 on the GPU host: CLDEMOTE of the ring lines a recording thread
# has finished (interposer/shim.c, demote_written), on and off in one build
# (PITRACE_CLDEMOTE=1/0), alternating within each round: bench_record
# children, data none, 1000000 calls a thread, scalar calls flooding at 8,
# 4 and 1 threads, info queries by name at 8.
# Prints "WORKLOAD THREADS demote=X ns/call calls/s bytes/call cpu merge enc".
# Run from the repository root with build-gpu/ carried (scripts/gpu-pack.sh).
B=$PWD/build-gpu
nproc; uptime; grep -m1 'model name' /proc/cpuinfo
grep -m1 -o -w cldemote /proc/cpuinfo || echo "cpuinfo: no cldemote flag"
run() { # demote workload threads
  rm -f /tmp/ab.db*
  echo "$2 $3 demote=$1 $(PITRACE_CLDEMOTE=$1 LD_LIBRARY_PATH=$B/lib $B/bin/bench_record --child $B/lib $2 rec-none $3 1000000 0 /tmp/ab.db | grep RESULT | cut -d' ' -f2-)"
}
for r in 1 2 3 4 5 6 7 8; do
  for T in 8 4 1; do
    if [ $((r % 2)) = 1 ]; then run 0 null-scalar $T; run 1 null-scalar $T;
    else run 1 null-scalar $T; run 0 null-scalar $T; fi
  done
  if [ $r -le 4 ]; then run 0 null-info-name 8; run 1 null-info-name 8; fi
done
uptime
