#!/bin/sh
# base vs new, alternating, bench_record children: WORKLOAD THREADS N
# (A=BASE_BUILD [B=NEW_BUILD] P=ROUNDS WL=WORKLOADS THREADS=LIST N=CALLS)
# prints "W T way ns/call calls/s bytes cpu merge enc"
A=${A:?A: the base build (Release)}; B=${B:-build-release}
for r in $(seq ${P:-5}); do
  for W in ${WL:-null-scalar}; do for T in ${THREADS:-1 2}; do
    for way in base new; do
      D=$A; [ $way = new ] && D=$B
      rm -f /tmp/ab-2core.db*
      echo "$W $T $way $(LD_LIBRARY_PATH=$D/lib $D/bin/bench_record --child $D/lib $W rec-none $T ${N:-1000000} 0 /tmp/ab-2core.db | grep RESULT | cut -d' ' -f2-)"
    done
  done; done
done
