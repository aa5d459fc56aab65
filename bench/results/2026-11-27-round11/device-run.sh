#!/bin/sh
# Round 11 on the GPU host: the writer split into files (55f1e22) against
# the recorder before it (752dc76), both Release, alternating round by
# round: bench_record children (data none), scalar calls flooding at 8, 4
# and 1 threads, info queries by name at 8 and 1; 1000000 calls a thread.
# Prints "WORKLOAD THREADS way ns/call calls/s bytes/call cpu merge enc".
# Run from the repository root with build-gpu/ (new) and build-gpu/base/
# (base's bench_record and libraries) carried.
B=$PWD/build-gpu
nproc; uptime; grep -m1 'model name' /proc/cpuinfo
run() { # way workload threads
  if [ "$1" = base ]; then L=$B/base/lib:$B/lib D=$B/base; else L=$B/lib D=$B; fi
  rm -f /tmp/ab.db*
  echo "$2 $3 $1 $(LD_LIBRARY_PATH=$L $D/bin/bench_record --child $D/lib $2 rec-none $3 1000000 0 /tmp/ab.db | grep RESULT | cut -d' ' -f2-)"
}
for r in 1 2 3 4 5 6; do
  for T in 8 4 1; do run base null-scalar $T; run new null-scalar $T; done
  if [ $r -le 4 ]; then
    for T in 8 1; do run base null-info-name $T; run new null-info-name $T; done
  fi
done
uptime
