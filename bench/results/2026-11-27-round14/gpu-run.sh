#!/bin/sh
# Round 14 on the GPU host: data-ab.sh (vadd, e630d55's recorder against
# this round's) and real-apps.sh (vadd, CLBlast) on NVIDIA OpenCL, from the
# packed builds build-gpu (this round) and build-gpu-base (e630d55).
set -u
OUT=${OUT:-/tmp/round14}
mkdir -p "$OUT"
nv=$(grep -ls nvidia /etc/OpenCL/vendors/*.icd 2>/dev/null | head -n1)
if [ -z "$nv" ]; then
  lib=$( (ldconfig -p | awk '/libnvidia-opencl\.so\.1/ {print $NF}';
          find /usr/local/nvidia /usr/lib /usr/lib64 /usr/local/lib -name 'libnvidia-opencl.so.1' \
            2>/dev/null) | head -n1)
  [ -n "$lib" ] || { echo "gpu-run: no NVIDIA OpenCL here"; exit 77; }
  nv=$OUT/nvidia.icd
  echo "$lib" >"$nv"
fi
echo "NVIDIA OpenCL: $nv ($(cat "$nv"))"
nproc
ICD=$nv NEW=build-gpu BASE=build-gpu-base ROUNDS=${ROUNDS:-20} OUT=$OUT/ab \
  sh bench/results/2026-11-27-round14/data-ab.sh
LD_LIBRARY_PATH=$PWD/build-gpu/lib sh scripts/real-apps.sh --rounds "${APP_ROUNDS:-15}" --apps "vadd clblast" \
  --ways "direct rec-none rec-all" --icd "$nv" build-gpu 2>&1 | sed -n '/^Real applications/,$p'
