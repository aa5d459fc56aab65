#!/bin/sh
# Compiles check_cuda_decls.c against a CUDA toolkit's cuda.h and runs it:
# a compile error names the declaration of cuda_driver.h that differs from
# cuda.h (see check_cuda_decls.c). Run by CTest where CMake found cuda.h,
# and by scripts/gpu-check.sh where the GPU machine has one.
#
#   check_cuda_decls.sh [CC [CUDA_INCLUDE_DIR [WORKDIR]]]
#
# Defaults: cc, $CUDA_PATH/include or /usr/local/cuda/include, a temporary
# directory. Exit status: 0 when everything matched, 1 when something
# differs, 77 when there is no cuda.h.
set -u
here=$(cd "$(dirname "$0")" && pwd)
cc=${1:-cc}
inc=${2:-${CUDA_PATH:-/usr/local/cuda}/include}
work=${3:-}
if [ ! -f "$inc/cuda.h" ]; then
  echo "check_cuda_decls: no cuda.h in $inc: nothing to compare"
  exit 77
fi
if [ -z "$work" ]; then
  work=$(mktemp -d) || exit 1
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work" || exit 1
flags="-std=c11 -Wall -Wextra -Werror -I$here -isystem $inc"
echo "check_cuda_decls: $here/cuda_driver.h against $inc/cuda.h ($cc)"
# shellcheck disable=SC2086 # $flags is a list of words
$cc $flags -DCHECK_LEGACY_ENTRY_POINTS -c "$here/check_cuda_decls.c" \
  -o "$work/check_cuda_decls_legacy.o" &&
  $cc $flags "$here/check_cuda_decls.c" "$work/check_cuda_decls_legacy.o" \
    -o "$work/check_cuda_decls" || {
  echo "check_cuda_decls: cuda_driver.h differs from $inc/cuda.h (above)"
  exit 1
}
"$work/check_cuda_decls"
