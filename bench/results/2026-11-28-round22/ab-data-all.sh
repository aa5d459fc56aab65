#!/bin/sh
# ab-data-all.sh ROUNDS [ICD]: what the payload file costs a recording
# with data all, side by side: vadd 4194304 plain and recorded with
# SYCL_PI_RECORD_DATA=all, the build before the payload file (base:
# build-gpu-base, or BASE) and with it (new: build-gpu, or NEW),
# alternating round by round, each round's recorded minus plain wall time;
# then bench_copyhash of each build. On the GPU host vadd runs on NVIDIA
# OpenCL (SYCL_DEVICE_FILTER=opencl:gpu, the vendor list as
# scripts/gpu-check.sh makes it); elsewhere on what OCL_ICD_VENDORS names.
#
#   OUT=DIR sh ab-data-all.sh 20
set -u
R=${1:-20}
BASE=${BASE:-build-gpu-base} NEW=${NEW:-build-gpu}
OUT=${OUT:-/tmp/ab-data-all}
mkdir -p "$OUT"
if command -v nvidia-smi >/dev/null 2>&1 && ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  lib=$( (ldconfig -p | awk '/libnvidia-opencl\.so\.1/ {print $NF}';
          find /usr/local/nvidia /usr/lib /usr/lib64 /usr/local/lib -name 'libnvidia-opencl.so.1' \
            2>/dev/null) | head -n1)
  if [ -n "$lib" ]; then
    mkdir -p "$OUT/vendors"
    echo "$lib" >"$OUT/vendors/nvidia.icd"
    export OCL_ICD_VENDORS="$OUT/vendors"
  fi
fi
command -v nvidia-smi >/dev/null 2>&1 && export SYCL_DEVICE_FILTER=opencl:gpu
ms() { s=$(date +%s%N); "$@" >/dev/null 2>&1 || echo "FAILED: $*" >&2; e=$(date +%s%N); echo $(( (e - s) / 1000 )); }
echo "build plain_us recorded_us added_us"
for i in $(seq 1 "$R"); do
  for b in base new; do
    d=$BASE; [ $b = new ] && d=$NEW
    rm -f "$OUT/s-$b.db"*
    p=$(LD_LIBRARY_PATH=$PWD/$d/lib ms "$d/bin/vadd" 4194304)
    r=$(LD_LIBRARY_PATH=$PWD/$d/lib SYCL_PI_RECORD="$OUT/s-$b.db" SYCL_PI_RECORD_DATA=all \
        ms "$d/bin/vadd" 4194304)
    echo "$b $p $r $((r - p))"
  done
done
rm -f "$OUT"/s-*.db*
for b in base new; do
  d=$BASE; [ $b = new ] && d=$NEW
  echo "== bench_copyhash, $b"
  LD_LIBRARY_PATH=$PWD/$d/lib "$d/bin/bench_copyhash" --rounds 10
done
