#!/bin/sh
# What of recording costs vadd 4194304 on NVIDIA OpenCL its time: plain,
# the shim loaded but every call filtered out (no session), traced to a
# file (SYCL_PI_TRACE=2), recorded with data none; interleaved round by
# round. Prints "prog round way us" (summarize-many.py takes way pairs).
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib
mkdir -p /tmp/vendors
icd=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "$icd" > /tmp/vendors/nvidia.icd
N=${N:-4194304}
for r in $(seq ${R:-40}); do
  for w in plain shim trace new; do
    rm -f /tmp/rp.db* /tmp/rp.trace
    case $w in
      plain) e="" ;;
      shim) e="SYCL_PI_RECORD=/tmp/rp.db SYCL_PI_RECORD_FILTER=-pi*" ;;
      trace) e="SYCL_PI_TRACE=2 SYCL_PI_TRACE_FILE=/tmp/rp.trace" ;;
      new) e="SYCL_PI_RECORD=/tmp/rp.db SYCL_PI_RECORD_DATA=none" ;;
    esac
    s=$(date +%s%N)
    env $e OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd SYCL_DEVICE_FILTER=opencl $B/bin/vadd $N > /tmp/rp.out 2>&1 || echo "FAIL $w"
    t=$(date +%s%N)
    grep -q verified /tmp/rp.out || echo "NOTVERIFIED $w: $(tail -1 /tmp/rp.out)"
    echo "vadd$N $r $w $(( (t-s)/1000 ))"
  done
done
