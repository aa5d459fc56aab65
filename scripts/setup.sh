#!/bin/sh
# Installs everything pitrace needs on Debian 12 (as root, or through sudo),
# then configures and builds it into build/.
#
#   scripts/setup.sh            install, configure, build
#   PITRACE_SKIP_APT=1 ...      skip the package installation
set -eu
cd "$(dirname "$0")/.."

# libclang-rt-dev: clang's sanitizer runtimes (scripts/test.sh builds with ASan and
# UBSan); clang only recommends them, and recommends are not installed here.
packages="build-essential clang cmake ninja-build pkg-config python3
  ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-headers clinfo
  pocl-opencl-icd mesa-opencl-icd
  libcriterion-dev valgrind chromium libclang-rt-dev
  libsqlite3-dev sqlite3 libunwind-dev libxxhash-dev libzstd-dev zstd
  libze1 libze-dev
  clpeak python3-pyopencl python3-numpy libclblast-dev hashcat darktable ffmpeg
  python3-opencv"

if [ "${PITRACE_SKIP_APT:-0}" != 1 ]; then
  missing=$(for p in $packages; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || echo "$p"
  done)
  if [ -n "$missing" ]; then
    as_root=""
    [ "$(id -u)" -eq 0 ] || as_root="sudo"
    echo "setup: installing $(echo $missing | tr '\n' ' ')"
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing
  fi
fi

cmake -S . -B build -G Ninja -DPITRACE_WERROR=ON
cmake --build build
