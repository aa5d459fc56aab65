#!/bin/sh
# Real programs on NVIDIA OpenCL, plain and recorded with data none (this
# round's build), interleaved round by round, many rounds: their own
# spread between runs (about +-25 ms) hides a few milliseconds in 20 or 30
# rounds; the median of many paired differences, with its confidence
# interval (summarize-many.py), can bound it. Prints "program round way us".
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib
mkdir -p /tmp/vendors
icd=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "$icd" > /tmp/vendors/nvidia.icd
uptime
run() { # name rounds command...
  name=$1; R=$2; shift 2
  for r in $(seq "$R"); do
    for w in plain new; do
      rm -f /tmp/rm.db*
      if [ $w = plain ]; then set -- "$@"; e=""; else e="SYCL_PI_RECORD=/tmp/rm.db SYCL_PI_RECORD_DATA=none"; fi
      s=$(date +%s%N)
      env $e OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd SYCL_DEVICE_FILTER=opencl "$@" > /tmp/rm.out 2>&1 || echo "FAIL $name $w"
      t=$(date +%s%N)
      grep -qiE "verified|passed" /tmp/rm.out || echo "NOTVERIFIED $name $w: $(tail -1 /tmp/rm.out)"
      echo "$name $r $w $(( (t-s)/1000 ))"
    done
  done
}
run vadd1024 ${R1:-100} $B/bin/vadd 1024
run vadd4194304 ${R2:-100} $B/bin/vadd 4194304
run pipeline1048576 ${R3:-50} $B/bin/pipeline 1048576
uptime
