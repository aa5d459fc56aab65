#!/bin/sh
# Round 9, third device call: recording with data all against its floor.
# bench_copyhash (copying vadd 4194304's three 16 MiB payloads into fresh
# memory and hashing them), then vadd 4194304 on NVIDIA OpenCL plain and
# recorded with data all by base and this build, interleaved, R rounds
# ("round way wall-us"); build-gpu/ and build-gpu/base/ as device-run.sh.
B=$PWD/build-gpu
R=${R:-20}
export LD_LIBRARY_PATH=$B/lib
uptime
$B/bin/bench_copyhash --rounds "$R"
mkdir -p /tmp/vendors
icd=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "$icd" > /tmp/vendors/nvidia.icd
echo "== vadd 4194304, NVIDIA OpenCL, data all: round way wall-us"
for r in $(seq "$R"); do
  for w in plain base new; do
    D=$B; [ $w = base ] && D=$B/base
    rm -f /tmp/r9.db*
    if [ $w = plain ]; then set --; else set -- SYCL_PI_RECORD=/tmp/r9.db SYCL_PI_RECORD_DATA=all; fi
    s=$(date +%s%N)
    env "$@" LD_LIBRARY_PATH=$D/lib:$B/lib OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd \
      SYCL_DEVICE_FILTER=opencl $D/bin/vadd 4194304 > /tmp/r9.out 2>&1 || echo "FAIL $w"
    e=$(date +%s%N)
    grep -q verified /tmp/r9.out || echo "NOTVERIFIED $w"
    echo "$r $w $(( (e-s)/1000 ))"
  done
done
$B/bin/bench_copyhash --rounds "$R" | tail -4
uptime
