#!/bin/sh
# The CUDA checks, on a machine with an NVIDIA GPU, over build-gpu/ from
# scripts/gpu-pack.sh (see plugins/cuda/README.md):
#   0. the plugin's driver API declarations (plugins/cuda/cuda_driver.h)
#      against this driver, and against this machine's cuda.h if it has one
#      and a C compiler;
#   1. the CUDA plugin's suite (test_cuda_plain);
#   2. vadd_ptx, shared_lib and spec_const through the CUDA plugin, verified;
#   3. those sessions recorded on CUDA and replayed on CUDA (exit 0);
#   4. shared_lib and spec_const recorded on the NVIDIA OpenCL platform of the
#      same GPU, replayed there, and diffed against the CUDA sessions;
#   5. bench_record --cuda: what recording adds to real CUDA calls.
# Sessions, the diffs as JSON and an HTML report land in $OUT (default
# /tmp/pitrace-gpu). Exit status: 0 when every step did what it should.
set -u
cd "$(dirname "$0")/.."
B=$PWD/build-gpu
OUT=${OUT:-/tmp/pitrace-gpu}
mkdir -p "$OUT"
export LD_LIBRARY_PATH="$B/lib"
failed=0

# step EXPECTED-STATUS DESCRIPTION CMD...: runs CMD, says whether it exited
# as expected.
step() {
  want=$1 what=$2
  shift 2
  echo "== $what"
  "$@"
  rc=$?
  if [ "$rc" = "$want" ]; then echo "-- ok (exit $rc)"; else echo "-- FAILED: exit $rc, expected $want"; failed=1; fi
}

nvidia-smi -L || { echo "gpu-check: no NVIDIA GPU here"; exit 77; }

# The NVIDIA OpenCL platform: the ICD loader reads /etc/OpenCL/vendors. Where
# no ICD there names NVIDIA's library (a driver mounted into a container),
# find libnvidia-opencl and give the loader a vendor list of its own.
if ! grep -qs nvidia /etc/OpenCL/vendors/*.icd; then
  lib=$( (ldconfig -p | awk '/libnvidia-opencl\.so\.1/ {print $NF}';
          find /usr/local/nvidia /usr/lib /usr/lib64 /usr/local/lib -name 'libnvidia-opencl.so.1' \
            2>/dev/null) | head -n1)
  if [ -n "$lib" ]; then
    vendors="$OUT/vendors"
    mkdir -p "$vendors"
    echo "$lib" >"$vendors/nvidia.icd"
    for f in /etc/OpenCL/vendors/*.icd; do [ -e "$f" ] && cp "$f" "$vendors/"; done
    export OCL_ICD_VENDORS="$vendors"
    echo "gpu-check: NVIDIA OpenCL from $lib (OCL_ICD_VENDORS=$vendors)"
  else
    echo "gpu-check: no libnvidia-opencl.so.1 on this machine: no NVIDIA OpenCL platform"
  fi
fi
ls /etc/OpenCL/vendors 2>/dev/null
step 0 "cuda_driver.h against this driver" "$B/bin/check_cuda_driver"
inc=
for d in ${CUDA_PATH:+"$CUDA_PATH/include"} /usr/local/cuda/include /usr/include; do
  [ -f "$d/cuda.h" ] && { inc=$d; break; }
done
cc=$(command -v cc || command -v gcc || command -v clang)
if [ -n "$inc" ] && [ -n "$cc" ]; then
  step 0 "cuda_driver.h against $inc/cuda.h" sh plugins/cuda/check_cuda_decls.sh "$cc" "$inc"
else
  [ -z "$inc" ] && why="no cuda.h" || why="no C compiler"
  echo "gpu-check: $why here: cuda_driver.h is checked against cuda.h where it is built"
fi
step 0 "the CUDA plugin's suite" "$B/bin/test_cuda_plain"
SYCL_PI_TRACE=1 SYCL_DEVICE_FILTER=opencl:gpu "$B/bin/vadd" 16 | grep -i "device\|verified"

for ex in vadd_ptx shared_lib spec_const; do
  rm -f "$OUT/cuda-$ex.db"
  step 0 "$ex on CUDA, recorded" env SYCL_DEVICE_FILTER=cuda SYCL_PI_TRACE=1 \
    SYCL_PI_RECORD="$OUT/cuda-$ex.db" SYCL_PI_RECORD_LABEL="$ex cuda" "$B/bin/$ex"
  step 0 "$ex's CUDA session replayed on CUDA" "$B/bin/pitrace" replay --stats "$OUT/cuda-$ex.db"
done
for ex in shared_lib spec_const; do
  rm -f "$OUT/ocl-$ex.db"
  step 0 "$ex on the NVIDIA OpenCL platform, recorded" env SYCL_DEVICE_FILTER=opencl:gpu \
    SYCL_PI_TRACE=1 SYCL_PI_RECORD="$OUT/ocl-$ex.db" SYCL_PI_RECORD_LABEL="$ex opencl" \
    "$B/bin/$ex"
  step 0 "$ex's OpenCL session replayed on OpenCL" "$B/bin/pitrace" replay "$OUT/ocl-$ex.db"
  step 1 "diff: $ex on CUDA against OpenCL (they differ)" "$B/bin/pitrace" diff --no-info \
    "$OUT/cuda-$ex.db" "$OUT/ocl-$ex.db"
  "$B/bin/pitrace" diff --json "$OUT/cuda-$ex.db" "$OUT/ocl-$ex.db" >"$OUT/diff-$ex.json"
done
"$B/bin/pitrace" sessions "$OUT/cuda-shared_lib.db"
"$B/bin/pitrace" stats "$OUT/cuda-shared_lib.db"
step 0 "report of the shared_lib diff" "$B/bin/pitrace" report "$OUT/cuda-shared_lib.db" \
  "$OUT/ocl-shared_lib.db" -o "$OUT/report-shared_lib.html"
step 0 "recording cost on CUDA calls" "$B/bin/bench_record" --cuda --calls "${CALLS:-100000}"
[ "$failed" = 0 ] && echo "gpu-check: every step passed" || echo "gpu-check: some steps FAILED"
exit "$failed"
