#!/bin/sh
# vadd 4194304 on NVIDIA OpenCL: plain, base/new x data none/all, interleaved
# rounds; prints "round way wall-us task-clock-ms" per run. As run on the GPU
# host from the repository root, with build-gpu/ (scripts/gpu-pack.sh of this
# round's Release build), build-gpu/base/ (the same of the base commit),
# build-gpu/bin/perf with its libraries in build-gpu/perflib/, and NVIDIA's
# vendor file in /tmp/vendors/nvidia.icd. R (rounds), WAYS, N as below.
B=$PWD/build-gpu
PERF="env LD_LIBRARY_PATH=$B/perflib:$B/lib $B/bin/perf"
export OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd SYCL_DEVICE_FILTER=opencl
N=${N:-4194304}; R=${R:-15}
for r in $(seq $R); do
  for w in ${WAYS:-plain base-none new-none base-all new-all}; do
    D=$B; case $w in base-*) D=$B/base;; esac
    rm -f /tmp/r2.db*
    case $w in plain) env= ;; *-none) env="SYCL_PI_RECORD=/tmp/r2.db SYCL_PI_RECORD_DATA=none";; *-all) env="SYCL_PI_RECORD=/tmp/r2.db SYCL_PI_RECORD_DATA=all";; esac
    s=$(date +%s%N)
    env $env LD_LIBRARY_PATH=$D/lib:$B/lib $PERF stat -x, -e task-clock -o /tmp/r2.stat $D/bin/vadd $N > /tmp/r2.out 2>&1 || echo "FAIL $w"
    e=$(date +%s%N)
    grep -q verified /tmp/r2.out || echo "NOTVERIFIED $w"
    echo "$r $w $(( (e-s)/1000 )) $(grep task-clock /tmp/r2.stat | cut -d, -f1)"
  done
done
