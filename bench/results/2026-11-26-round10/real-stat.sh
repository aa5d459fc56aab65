#!/bin/sh
# vadd 4194304 on NVIDIA OpenCL, plain and recorded with data none,
# alternating, under perf stat (software events): where a recorded run's
# extra time might come from (CPU, page faults, context switches).
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib
PERF="env LD_LIBRARY_PATH=$B/perflib:$B/lib $B/bin/perf"
mkdir -p /tmp/vendors
icd=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "$icd" > /tmp/vendors/nvidia.icd
for r in $(seq ${R:-6}); do
  for w in plain new; do
    rm -f /tmp/rs.db*
    if [ $w = plain ]; then e=""; else e="SYCL_PI_RECORD=/tmp/rs.db SYCL_PI_RECORD_DATA=none"; fi
    s=$(date +%s%N)
    env $e OCL_ICD_VENDORS=/tmp/vendors/nvidia.icd SYCL_DEVICE_FILTER=opencl $PERF stat -x, \
      -e task-clock,page-faults,minor-faults,major-faults,context-switches,cpu-migrations \
      $B/bin/vadd 4194304 2>/tmp/rs.stat >/dev/null
    t=$(date +%s%N)
    echo "== $r $w $(( (t-s)/1000 )) us: $(grep -v '^$' /tmp/rs.stat | cut -d, -f1,3 | tr '\n' ' ')"
  done
done
