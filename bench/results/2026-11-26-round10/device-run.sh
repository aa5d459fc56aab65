#!/bin/sh
# Round 10, one device call: the database opened on the writer's thread.
# build-gpu/ (scripts/gpu-pack.sh build-release) holds this round's build;
# build-gpu/base/{bin,lib} the base commit's runtime, plugins, shim and
# vadd (Release, the same compiler). Every comparison is within this call.
B=$PWD/build-gpu
R=${R:-30}
export LD_LIBRARY_PATH=$B/lib
uptime
for W in 0 20; do
  echo "== bench_fixed --work $W (null plugin through the runtime; base = --base)"
  $B/bin/bench_fixed --rounds "$R" --work "$W" --base "$B/base/lib" --ways rec-none,rec-all | tail -n +3
done
mkdir -p /tmp/vendors
icd=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "$icd" > /tmp/vendors/nvidia.icd
N=${N:-1024}
echo "== vadd $N, NVIDIA OpenCL, data none: round way wall-us"
for r in $(seq 30); do
  for w in plain base new; do
    D=$B; [ $w = base ] && D=$B/base
    rm -f /tmp/r10.db*
    if [ $w = plain ]; then set --; else set -- SYCL_PI_RECORD=/tmp/r10.db SYCL_PI_RECORD_DATA=none; fi
    s=$(date +%s%N)
    env "$@" LD_LIBRARY_PATH=$D/lib:$B/lib OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd \
      SYCL_DEVICE_FILTER=opencl $D/bin/vadd $N > /tmp/r10.out 2>&1 || echo "FAIL $w"
    e=$(date +%s%N)
    grep -q verified /tmp/r10.out || echo "NOTVERIFIED $w"
    echo "$r $w $(( (e-s)/1000 ))"
  done
done
echo "== gpu-check"
OUT=/tmp/pitrace-gpu sh scripts/gpu-check.sh > /tmp/gpu-check.txt 2>&1; echo "gpu-check exit $?"
grep -E "^(ok|FAIL|PASS|step|==)|passed|failed" /tmp/gpu-check.txt | tail -25
uptime
