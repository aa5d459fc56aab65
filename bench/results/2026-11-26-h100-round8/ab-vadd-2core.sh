#!/bin/sh
# The 2-core machine's run (PoCL): as ab-vadd.sh, base = a Release build of 756ef15
# in /tmp/base756, new = build-release of this round; prints "round way wall-us task-clock-ms".
N=4194304
for r in $(seq ${R:-8}); do
  for w in plain base-none new-none base-all new-all; do
    L=/work/main/build-release/lib; case $w in base-*) L=/tmp/base756/lib;; esac
    rm -f /tmp/a2.db*
    case $w in plain) env= ;; *-none) env="SYCL_PI_RECORD=/tmp/a2.db SYCL_PI_RECORD_DATA=none";; *-all) env="SYCL_PI_RECORD=/tmp/a2.db SYCL_PI_RECORD_DATA=all";; esac
    s=$(date +%s%N)
    env $env OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd LD_LIBRARY_PATH=$L perf stat -x, -e task-clock -o /tmp/a2.stat /tmp/base756/bin/vadd $N > /tmp/a2.out 2>&1 || echo "FAIL $w"
    e=$(date +%s%N)
    grep -q verified /tmp/a2.out || echo "NOTVERIFIED $w"
    echo "$r $w $(( (e-s)/1000 )) $(grep task-clock /tmp/a2.stat | cut -d, -f1)"
  done
done
