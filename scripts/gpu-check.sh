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
#   5. bench_record --cuda: what recording adds to real CUDA calls; vadd_ptx
#      on CUDA and shared_lib on NVIDIA OpenCL recorded with --profile, and
#      pitrace stats showing their kernels' device times; matmul (four
#      kernels: its PTX on CUDA, its OpenCL C on NVIDIA OpenCL) the same, each
#      kernel timed, and traced on CUDA with SYCL_PI_TRACE=2 and
#      SYCL_PI_RECORD_PROFILE=1 (a device-time line per launch, no session);
#   6. OpenCL applications through the front end (frontends/opencl): clinfo
#      through pitrace run agrees with clinfo on the NVIDIA OpenCL platform
#      for every property PI can query (tests/apps/clinfo_compare.py, where
#      python3 is); the CUDA device appears too, with no OpenCL C compiler;
#      the CLBlast client runs through pitrace record with its results
#      verified, its session replays on NVIDIA OpenCL, and so does its first
#      kernel launch extracted; image_app (tests/progs: kernels reading and
#      writing images, padded pitches) the same, both launches extracted,
#      and again with an image filled and copied into (image_app copy);
#      pipeline's last launch extracted with the launches before it
#      (--inputs) and image_app's second with its first (--from 1), each
#      replayed with its read-backs verified; image_app re-run against its
#      recording (the replay plugin) sees NVIDIA's image formats again;
#      rect_app (buffers moved only by rectangles) recorded, replayed, its
#      launch extracted and replayed with the rectangle read checked row
#      by row; bench_frontend against NVIDIA's ICD.
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
# The runtime's API and the OpenCL plugin's PI calls (test_api, the suite
# CTest runs on PoCL 3.1 and rusticl here) on NVIDIA's OpenCL, and on the
# host's own PoCL where it has one (the H200 host's is PoCL 5.0, with
# sub-groups: its answer of 0 sub-groups for a kernel was found so).
step 0 "the API and OpenCL plugin suites on NVIDIA OpenCL" env SYCL_DEVICE_FILTER=opencl:gpu \
  LD_LIBRARY_PATH="$B/lib:$B/critlib" "$B/bin/test_api" -j4
if ls "${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}" 2>/dev/null | grep -q pocl; then
  step 0 "the API and OpenCL plugin suites on this host's PoCL" env SYCL_DEVICE_FILTER=opencl:cpu \
    LD_LIBRARY_PATH="$B/lib:$B/critlib" "$B/bin/test_api" -j4
fi
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
# pipeline's three launches hand their results on through device buffers
# nothing reads back: its last launch extracted with the two before it.
rm -f "$OUT/ocl-pipeline.db"
step 0 "pipeline on the NVIDIA OpenCL platform, recorded" env SYCL_DEVICE_FILTER=opencl:gpu \
  SYCL_PI_RECORD="$OUT/ocl-pipeline.db" "$B/bin/pipeline"
step 0 "its launch 3 extracted with the launches that computed its inputs" \
  "$B/bin/pitrace" extract "$OUT/ocl-pipeline.db" --kernel 3 --inputs -o "$OUT/ocl-pipeline-3.db"
step 0 "that repro replayed on NVIDIA OpenCL, its read-back verified" sh -c \
  "'$B/bin/pitrace' replay '$OUT/ocl-pipeline-3.db' >'$OUT/ocl-pipeline-3.txt' 2>&1;
   tail -n 1 '$OUT/ocl-pipeline-3.txt'; grep -q '1 read-backs verified' '$OUT/ocl-pipeline-3.txt'"
"$B/bin/pitrace" sessions "$OUT/cuda-shared_lib.db"
"$B/bin/pitrace" stats "$OUT/cuda-shared_lib.db"
step 0 "report of the shared_lib diff" "$B/bin/pitrace" report "$OUT/cuda-shared_lib.db" \
  "$OUT/ocl-shared_lib.db" -o "$OUT/report-shared_lib.html"
# One thread and three rounds here (the check's budget); the thread scaling
# is bench_record's own run (README, Benchmarks).
step 0 "recording cost on CUDA calls" "$B/bin/bench_record" --cuda --calls "${CALLS:-100000}" \
  --threads "${BENCH_THREADS:-1}" --rounds "${BENCH_ROUNDS:-3}"

# Device times (pitrace record --profile): stats must show the kernels'
# device time ("timed" column, a kernel row timed at least once); on CUDA
# the device clock must map to the session's (piGetDeviceAndHostTimer).
devtime_ok() { # DIR [mapped]
  db=$(ls "$1"/*.db | head -1) && "$B/bin/pitrace" stats "$db" >"$1/stats.txt" &&
    cat "$1/stats.txt" && grep -q "timed      device" "$1/stats.txt" &&
    awk '/^kernel .*timed/ {k=1; next} k && NF==0 {k=0} k && $5+0 >= 1 {ok=1} END {exit !ok}' \
      "$1/stats.txt" &&
    { [ -z "${2:-}" ] || grep -q "^device times: .* on the session's clock" "$1/stats.txt"; }
}
rm -rf "$OUT/prof-cuda" "$OUT/prof-ocl"
# pirt programs: nothing to route through the front end (--no-opencl).
step 0 "vadd_ptx on CUDA recorded with --profile" env SYCL_DEVICE_FILTER=cuda \
  "$B/bin/pitrace" record --no-opencl --profile -o "$OUT/prof-cuda" -- "$B/bin/vadd_ptx"
step 0 "stats of it show each kernel's device time, on the session's clock" \
  devtime_ok "$OUT/prof-cuda" mapped
step 0 "shared_lib on NVIDIA OpenCL recorded with --profile" env SYCL_DEVICE_FILTER=opencl:gpu \
  "$B/bin/pitrace" record --no-opencl --profile -o "$OUT/prof-ocl" -- "$B/bin/shared_lib"
step 0 "stats of it show each kernel's device time" devtime_ok "$OUT/prof-ocl"

# matmul's four kernels, each with its row in stats timed on every launch
# (3 rounds) and a device total above zero.
four_kernels_timed() { # DIR
  db=$(ls "$1"/*.db | head -1) && "$B/bin/pitrace" stats "$db" >"$1/stats.txt" &&
    cat "$1/stats.txt" &&
    for k in matmul_tiled reduce_sum scan_inclusive histogram; do
      awk -v k="$k" '/^kernel .*timed/ {t=1; next} t && NF==0 {t=0}
        t && $1 == k && $2 == 3 && $5 == 3 && $6 > 0 {ok=1} END {exit !ok}' "$1/stats.txt" ||
        { echo "gpu-check: $k not timed 3 times in $1/stats.txt"; return 1; }
    done
}
rm -rf "$OUT/matmul-cuda" "$OUT/matmul-ocl"
step 0 "matmul (PTX) on CUDA recorded with --profile" env SYCL_DEVICE_FILTER=cuda \
  "$B/bin/pitrace" record --no-opencl --profile -o "$OUT/matmul-cuda" -- "$B/bin/matmul" 3
step 0 "stats of it time each of the four kernels" four_kernels_timed "$OUT/matmul-cuda"
step 0 "its device clock is mapped to the session's" \
  grep -q "^device times: .* on the session's clock" "$OUT/matmul-cuda/stats.txt"
step 0 "matmul (OpenCL C) on NVIDIA OpenCL recorded with --profile" \
  env SYCL_DEVICE_FILTER=opencl:gpu \
  "$B/bin/pitrace" record --no-opencl --profile -o "$OUT/matmul-ocl" -- "$B/bin/matmul" 3
step 0 "stats of it time each of the four kernels" four_kernels_timed "$OUT/matmul-ocl"
# Device times in the trace, without recording: one line per launch.
trace_times_ok() { # TRACE
  cat "$1" | grep "^---> device time: " &&
    [ "$(grep -c '^---> piEnqueueKernelLaunch(' "$1")" = 12 ] &&
    for k in matmul_tiled reduce_sum scan_inclusive histogram; do
      [ "$(grep -c "^---> device time: piEnqueueKernelLaunch (call [0-9]*, kernel $k) [0-9.]* us on queue#" "$1")" = 3 ] ||
        { echo "gpu-check: $k has not 3 device-time lines in $1"; return 1; }
    done
}
rm -f "$OUT/matmul-cuda.trace"
step 0 "matmul on CUDA with SYCL_PI_TRACE=2 SYCL_PI_RECORD_PROFILE=1 (no recording)" \
  env SYCL_DEVICE_FILTER=cuda SYCL_PI_TRACE=2 SYCL_PI_RECORD_PROFILE=1 \
  SYCL_PI_TRACE_FILE="$OUT/matmul-cuda.trace" "$B/bin/matmul" 3
step 0 "its trace has a device-time line for each launch" trace_times_ok "$OUT/matmul-cuda.trace"

# ---- 6. OpenCL applications through the front end ---------------------------------
# pitrace run reads <bin>/../etc/OpenCL/vendors/pitrace.icd, which names the
# front end by its path on this machine.
mkdir -p "$B/etc/OpenCL/vendors"
echo "$B/lib/libpitrace_opencl.so" >"$B/etc/OpenCL/vendors/pitrace.icd"
nv=$(grep -ls nvidia ${OCL_ICD_VENDORS:-/etc/OpenCL/vendors}/*.icd ${OCL_ICD_VENDORS:+$OCL_ICD_VENDORS} 2>/dev/null | head -n1)
if [ -z "$nv" ]; then
  echo "gpu-check: no NVIDIA vendor file: the front end's NVIDIA OpenCL steps cannot run"
  failed=1
else
  echo "gpu-check: NVIDIA's vendor file: $nv"
  step 0 "clinfo directly on NVIDIA OpenCL" sh -c \
    "OCL_ICD_VENDORS='$nv' '$B/bin/clinfo' --raw >'$OUT/clinfo-direct.txt' 2>&1"
  step 0 "clinfo through pitrace run on NVIDIA OpenCL" sh -c \
    "OCL_ICD_VENDORS='$nv' SYCL_DEVICE_FILTER=opencl '$B/bin/pitrace' run -- '$B/bin/clinfo' --raw >'$OUT/clinfo-pitrace.txt' 2>&1"
  if command -v python3 >/dev/null; then
    step 0 "clinfo: every property PI can query equals clinfo's direct answer" \
      python3 tests/apps/clinfo_compare.py runtime/api/pi.api "$B/include/CL/cl.h" \
      "$OUT/clinfo-direct.txt" "$OUT/clinfo-pitrace.txt"
  else
    echo "gpu-check: no python3 here: clinfo's answers are kept in $OUT, not compared"
  fi
  step 0 "the CUDA device through the front end: listed, no OpenCL C compiler" sh -c \
    "SYCL_DEVICE_FILTER=cuda '$B/bin/pitrace' run -- '$B/bin/clinfo' --raw >'$OUT/clinfo-cuda.txt' 2>&1 &&
     grep -q 'CL_DEVICE_NAME.*[A-Za-z]' '$OUT/clinfo-cuda.txt' &&
     grep -q 'CL_DEVICE_COMPILER_AVAILABLE *CL_FALSE' '$OUT/clinfo-cuda.txt'"
  # through_front_end NAME LABEL VERIFIED LAUNCHES [ARG]: $B/bin/NAME (with
  # ARG) recorded through the front end on NVIDIA OpenCL (its output must
  # hold VERIFIED), its session replayed there, and each of its first
  # LAUNCHES kernel launches extracted and replayed on its own. (Its
  # variables are fe_*: step sets `what`.)
  through_front_end() {
    fe_name=$1 fe_label=$2 fe_verified=$3 fe_launches=$4 fe_arg=${5:-}
    fe_tag=$fe_name${fe_arg:+-$fe_arg}
    rm -rf "$OUT/$fe_tag"
    step 0 "$fe_label recorded through the front end on NVIDIA OpenCL, verified" sh -c \
      "OCL_ICD_VENDORS='$nv' SYCL_DEVICE_FILTER=opencl '$B/bin/pitrace' record -o '$OUT/$fe_tag' -- '$B/bin/$fe_name' $fe_arg >'$OUT/$fe_tag.txt' 2>&1 &&
       grep '$fe_verified' '$OUT/$fe_tag.txt'"
    s=$(ls "$OUT/$fe_tag"/*.db 2>/dev/null | head -n1)
    step 0 "the $fe_label session replayed on NVIDIA OpenCL" env OCL_ICD_VENDORS="$nv" \
      "$B/bin/pitrace" replay --stats "$s"
    k=1
    while [ $k -le "$fe_launches" ]; do
      step 0 "its kernel launch $k extracted" "$B/bin/pitrace" extract "$s" --kernel $k \
        -o "$OUT/$fe_tag-launch$k.db"
      step 0 "the extracted launch replayed on NVIDIA OpenCL" env OCL_ICD_VENDORS="$nv" \
        "$B/bin/pitrace" replay "$OUT/$fe_tag-launch$k.db"
      k=$((k + 1))
    done
  }
  through_front_end clblast_client "CLBlast client" "all verified" 1
  "$B/bin/pitrace" stats "$s" | head -n 30
  through_front_end image_app "image_app (images)" "result verified" 2
  step 0 "image_app's launch 2 extracted with launch 1 (--from 1)" "$B/bin/pitrace" extract \
    "$s" --kernel 2 --from 1 -o "$OUT/image_app-window.db"
  step 0 "that repro replayed on NVIDIA OpenCL, C checked between the launches" sh -c \
    "OCL_ICD_VENDORS='$nv' '$B/bin/pitrace' replay '$OUT/image_app-window.db' >'$OUT/image_app-window.txt' 2>&1;
     tail -n 1 '$OUT/image_app-window.txt'; grep -q '2 read-backs verified' '$OUT/image_app-window.txt'"
  # The implementation's image formats (NVIDIA's, through the context's
  # native handle) are in the session as a note: run against its recording
  # (the replay plugin, no OpenCL implementation), image_app sees as many.
  step 0 "image_app re-run against its recording: NVIDIA's image formats again" sh -c \
    "SYCL_PI_REPLAY='$s' SYCL_DEVICE_FILTER=opencl OCL_ICD_VENDORS='$B/etc/OpenCL/vendors/pitrace.icd' '$B/bin/image_app' \
       >'$OUT/image_app-plugin.txt' 2>&1; grep 'image formats' '$OUT/image_app.txt' '$OUT/image_app-plugin.txt';
     grep -q 'result verified' '$OUT/image_app-plugin.txt' &&
     [ \"\$(grep 'image formats' '$OUT/image_app.txt')\" = \"\$(grep 'image formats' '$OUT/image_app-plugin.txt')\" ]"
  through_front_end image_app "image_app copy (an image filled, then copied into)" \
    "result verified" 1 copy
  # rect_app's launch reads a grid whose data came only by a rectangle
  # write and a rectangle copy; its repro checks the rectangle read after
  # the launch row by row (4 rows) and a plain read.
  through_front_end rect_app "rect_app (buffers moved by rectangles)" "result verified" 1
  step 0 "rect_app's launch: its rectangle read checked row by row" sh -c \
    "OCL_ICD_VENDORS='$nv' '$B/bin/pitrace' replay '$OUT/rect_app-launch1.db' 2>&1 | tail -n 1 |
     grep '5 read-backs verified'"
  step 0 "what the front end adds per call over NVIDIA's ICD" "$B/bin/bench_frontend" \
    --icd "$nv" --calls "${FE_CALLS:-200000}" --rounds 5
fi

[ "$failed" = 0 ] && echo "gpu-check: every step passed" || echo "gpu-check: some steps FAILED"
exit "$failed"
