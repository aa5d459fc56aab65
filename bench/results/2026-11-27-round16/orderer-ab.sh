#!/bin/sh
# Round 16 on the GPU host: the order of the rings on a thread of its own
# ("pitrace-order", session/writer_merge.c), on and off in one build
# (PITRACE_ORDERER=1/0), alternating within each round: bench_record
# children, data none, CALLS calls a thread (default 2000000), scalar
# calls flooding at 8, 4 and 1 threads, info queries by name at 8.
# Prints "WORKLOAD THREADS orderer=X ns/call calls/s bytes/call cpu merge
# enc order" (CPU in ns a stored call, by thread).
# Run from the repository root with build-gpu/ carried (scripts/gpu-pack.sh).
B=$PWD/build-gpu
CALLS=${CALLS:-2000000}
ROUNDS=${ROUNDS:-6}
nproc; uptime; grep -m1 'model name' /proc/cpuinfo
run() { # orderer workload threads
  rm -f /tmp/ab.db*
  echo "$2 $3 orderer=$1 $(PITRACE_ORDERER=$1 LD_LIBRARY_PATH=$B/lib $B/bin/bench_record --child $B/lib $2 rec-none $3 $CALLS 0 /tmp/ab.db | grep RESULT | cut -d' ' -f2-)"
}
r=1
while [ $r -le $ROUNDS ]; do
  for T in ${THREADS:-8 4 1}; do
    if [ $((r % 2)) = 1 ]; then run 0 null-scalar $T; run 1 null-scalar $T;
    else run 1 null-scalar $T; run 0 null-scalar $T; fi
  done
  if [ $r -le ${INFO_ROUNDS:-2} ]; then run 0 null-info-name 8; run 1 null-info-name 8; fi
  r=$((r + 1))
done
uptime
