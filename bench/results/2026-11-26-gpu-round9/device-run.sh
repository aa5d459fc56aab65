#!/bin/sh
# Round 9 on the GPU host, as run from the repository root with build-gpu/
# (scripts/gpu-pack.sh of this round's Release build) and build-gpu/base/
# (bin/ and lib/ of the base commit's Release build, with the third-party
# libraries copied beside them). Prints everything; R rounds.
B=$PWD/build-gpu
R=${R:-30}
export LD_LIBRARY_PATH=$B/lib
lscpu | grep -E "^Model name|^Thread|^Core|^Socket|^CPU\(s\)"
echo "read_ahead_kb: $(cat /sys/block/*/queue/read_ahead_kb | sort -u | tr '\n' ' ')"
uptime
echo "== bench_fixed (null plugin through the runtime; base = --base)"
$B/bin/bench_fixed --rounds "$R" --base "$B/base/lib" --ways rec-none,rec-all | tail -n +3
mkdir -p /tmp/vendors
icd=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "$icd" > /tmp/vendors/nvidia.icd
echo "== vadd 1024, NVIDIA OpenCL: round way wall-us"
for r in $(seq "$R"); do
  for w in plain base new; do
    D=$B; [ $w = base ] && D=$B/base
    rm -f /tmp/r9.db*
    if [ $w = plain ]; then set --; else set -- SYCL_PI_RECORD=/tmp/r9.db SYCL_PI_RECORD_DATA=none; fi
    s=$(date +%s%N)
    env "$@" LD_LIBRARY_PATH=$D/lib:$B/lib OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd \
      SYCL_DEVICE_FILTER=opencl $D/bin/vadd 1024 > /tmp/r9.out 2>&1 || echo "FAIL $w"
    e=$(date +%s%N)
    grep -q verified /tmp/r9.out || echo "NOTVERIFIED $w"
    echo "$r $w $(( (e-s)/1000 ))"
  done
done
echo "== bench_record children, alternating: way workload threads calls pace RESULT ns rate bytes cpu merge enc"
for r in 1 2 3 4; do
  for cfg in "8 300000 0" "1 300000 0" "1 100000 2000"; do
    set -- $cfg
    for w in base new; do
      D=$B; [ $w = base ] && D=$B/base
      rm -f /tmp/r9b.db*
      echo "$w null-scalar $1 $2 $3 $(LD_LIBRARY_PATH=$D/lib:$B/lib $D/bin/bench_record --child $D/lib null-scalar rec-none $1 $2 $3 /tmp/r9b.db | grep RESULT)"
    done
    [ "$3" != 0 ] && echo "direct null-scalar $1 $2 $3 $($B/bin/bench_record --child $B/lib null-scalar direct $1 $2 $3 /tmp/r9b.db | grep RESULT)"
  done
done
uptime
