#!/bin/sh
# Round 9, second device call: the final build. As device-run.sh (build-gpu/
# and build-gpu/base/ of the base commit); then scripts/gpu-check.sh.
B=$PWD/build-gpu
R=${R:-30}
export LD_LIBRARY_PATH=$B/lib
uptime
echo "== bench_fixed (null plugin through the runtime; base = --base)"
$B/bin/bench_fixed --rounds "$R" --base "$B/base/lib" --ways rec-none,rec-all,trace | tail -n +3
mkdir -p /tmp/vendors
icd=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "$icd" > /tmp/vendors/nvidia.icd
N=${N:-4194304}
echo "== vadd $N, NVIDIA OpenCL, data none: round way wall-us"
for r in $(seq 20); do
  for w in plain base new; do
    D=$B; [ $w = base ] && D=$B/base
    rm -f /tmp/r9.db*
    if [ $w = plain ]; then set --; else set -- SYCL_PI_RECORD=/tmp/r9.db SYCL_PI_RECORD_DATA=none; fi
    s=$(date +%s%N)
    env "$@" LD_LIBRARY_PATH=$D/lib:$B/lib OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd \
      SYCL_DEVICE_FILTER=opencl $D/bin/vadd $N > /tmp/r9.out 2>&1 || echo "FAIL $w"
    e=$(date +%s%N)
    grep -q verified /tmp/r9.out || echo "NOTVERIFIED $w"
    echo "$r $w $(( (e-s)/1000 ))"
  done
done
echo "== a recorded process with stacks (libunwind loaded by the shim)"
rm -f /tmp/r9s.db*
SYCL_PI_RECORD=/tmp/r9s.db SYCL_PI_RECORD_BACKTRACE=1 OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd \
  SYCL_DEVICE_FILTER=opencl $B/bin/vadd 1024 2>&1 | grep -E "pitrace:|verified"
echo "== gpu-check"
OUT=/tmp/pitrace-gpu sh scripts/gpu-check.sh > /tmp/gpu-check.txt 2>&1; echo "gpu-check exit $?"
grep -E "^(ok|FAIL|PASS|step|==)|passed|failed" /tmp/gpu-check.txt | tail -25
uptime
