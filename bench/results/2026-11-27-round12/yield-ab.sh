#!/bin/sh
# Round 12 on the GPU host: a producer whose ring is full yields the
# processor 16 times before it naps (reserve_slow), or naps at once
# (PITRACE_YIELDS=0), one build, alternating within each round:
# bench_record children, data none, 1000000 calls a thread, scalar calls
# flooding at 8, 4 and 1 threads, info queries by name at 8.
# Also the machine's topology (does a vCPU share its core?).
# Prints "WORKLOAD THREADS yields=X ns/call calls/s bytes/call cpu merge enc".
B=$PWD/build-gpu
nproc; uptime; grep -m1 'model name' /proc/cpuinfo
lscpu | grep -E 'Thread|Core|Socket|NUMA|L2|L3'
cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null
run() { # yields workload threads
  rm -f /tmp/ab.db*
  echo "$2 $3 yields=$1 $(PITRACE_YIELDS=$1 LD_LIBRARY_PATH=$B/lib $B/bin/bench_record --child $B/lib $2 rec-none $3 1000000 0 /tmp/ab.db | grep RESULT | cut -d' ' -f2-)"
}
for r in 1 2 3 4 5 6 7 8; do
  for T in 8 4 1; do
    if [ $((r % 2)) = 1 ]; then run 16 null-scalar $T; run 0 null-scalar $T;
    else run 0 null-scalar $T; run 16 null-scalar $T; fi
  done
  if [ $r -le 4 ]; then run 16 null-info-name 8; run 0 null-info-name 8; fi
done
uptime
