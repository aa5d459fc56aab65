#!/bin/sh
# As device-run.sh, more rounds at fewer settings: scalar calls flooding
# at 4 and 1 threads, 15 rounds, base and new alternating (which goes
# first alternates too).
B=$PWD/build-gpu
nproc; uptime
run() { # way workload threads
  if [ "$1" = base ]; then L=$B/base/lib:$B/lib D=$B/base; else L=$B/lib D=$B; fi
  rm -f /tmp/ab.db*
  echo "$2 $3 $1 $(LD_LIBRARY_PATH=$L $D/bin/bench_record --child $D/lib $2 rec-none $3 1000000 0 /tmp/ab.db | grep RESULT | cut -d' ' -f2-)"
}
for r in $(seq 15); do
  for T in 4 1; do
    if [ $((r % 2)) = 0 ]; then run base null-scalar $T; run new null-scalar $T
    else run new null-scalar $T; run base null-scalar $T; fi
  done
done
uptime
