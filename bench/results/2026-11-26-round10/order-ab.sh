#!/bin/sh
# The order thread on and off (PITRACE_ORDER_THREAD=1 / 0), the same
# build, alternating: bench_record children flooding scalar calls
# (null-scalar, data none, 1000000 calls a thread) at 1, 2, 4, 8 threads;
# prints "T order RESULT ns/call calls/s bytes/call cpu merge enc".
B=$PWD/build-gpu
P=${P:-4}
export LD_LIBRARY_PATH=$B/lib
nproc; uptime
for T in ${THREADS:-8 4 2 1}; do
  for i in $(seq "$P"); do
    for o in 0 1; do
      rm -f /tmp/ob.db*
      echo "$T $o $(PITRACE_ORDER_THREAD=$o $B/bin/bench_record --child $B/lib null-scalar rec-none $T 1000000 0 /tmp/ob.db | grep RESULT)"
    done
  done
done
uptime
