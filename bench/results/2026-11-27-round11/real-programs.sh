#!/bin/sh
# The README's real-programs table again with this round's build, on the
# GPU host: bench/real_programs.sh (vadd 4194304, pipeline 1048576,
# CLBlast 512^3; plain, recorded with data none and all, traced to a file;
# CLBlast also through pitrace unrecorded) on NVIDIA's OpenCL, 10 rounds.
# Run from the repository root with build-gpu/ (scripts/gpu-pack.sh) carried.
set -eu
mkdir -p /tmp/vendors
icd=$(ldconfig -p | awk '/libnvidia-opencl.so.1/ {print $NF; exit}')
echo "$icd" > /tmp/vendors/nvidia.icd
export LD_LIBRARY_PATH=$PWD/build-gpu/lib
uptime
sh bench/real_programs.sh --rounds "${ROUNDS:-10}" --apps "vadd pipeline clblast" \
  --icd /tmp/vendors/nvidia.icd build-gpu
uptime
