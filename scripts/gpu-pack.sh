#!/bin/sh
# Packs what scripts/gpu-check.sh needs into build-gpu/ (ignored by git), for
# a GPU machine that has the NVIDIA driver but none of pitrace's build
# dependencies (no SQLite, xxHash, libunwind or Criterion): the programs and
# plugins from build/, and the shared libraries they load that such a machine
# may lack, resolved with ldd here. Run scripts/setup.sh first.
#
#   scripts/gpu-pack.sh [BUILD]     (default build/)
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
out=build-gpu
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
progs="test_cuda_plain check_cuda_driver vadd vadd_ptx pipeline shared_lib spec_const matmul pitrace bench_record bench_replay bench_fixed bench_copyhash
  bench_frontend clblast_client image_app rect_app test_api"
for p in $progs; do
  [ -x "$build/bin/$p" ] || { echo "gpu-pack: $build/bin/$p is missing: build first" >&2; exit 2; }
  cp "$build/bin/$p" "$out/bin/"
done
cp -P "$build"/lib/libpirt.so* "$build"/lib/libpi_*.so "$build/lib/libmathdev.so" \
  "$build/lib/libpitrace_opencl.so" "$out/lib/"
# OpenCL applications for the front end's check: Debian's clinfo and clpeak, and the
# OpenCL headers clinfo_compare.py reads the property names from.
cp /usr/bin/clinfo /usr/bin/clpeak "$out/bin/"
mkdir -p "$out/include"
cp -r /usr/include/CL "$out/include/"
# Third-party libraries, found by soname among what the programs and plugins
# load here. The C library and the driver's own stay the machine's. The
# shim loads libunwind itself (for SYCL_PI_RECORD_BACKTRACE=1): it and what
# it loads are taken too.
unwind=$(ldconfig -p | awk '$1 ~ /^libunwind\.so\.[0-9]+$/ {print $NF; exit}')
{ for f in "$out"/bin/* "$out"/lib/*.so $unwind; do ldd "$f" 2>/dev/null; done
  [ -n "$unwind" ] && echo "$(basename "$unwind") => $unwind (0)"; } |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  grep -E '^(libsqlite3|libxxhash|libunwind|liblzma|libzstd|libOpenCL|libclblast)\.' | sort -u |
  while read -r soname path; do cp -L "$path" "$out/lib/$soname"; done
# test_api is a Criterion suite (the runtime's API and the OpenCL plugin
# called directly): Criterion and what it loads go into a folder of their
# own, on the library path of that step alone, so that the machine's own
# copies of common libraries (zlib, OpenSSL) stay what everything else loads.
mkdir -p "$out/critlib"
ldd "$out/bin/test_api" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  grep -vE '^(libc|libm|libpthread|libdl|librt|libresolv|libgcc_s)\.so|^libpirt\.' |
  while read -r soname path; do cp -L "$path" "$out/critlib/$soname"; done
du -sh "$out"
