#!/bin/sh
# cuda-extract.sh: on a GPU host, the examples that run on CUDA (vadd_ptx,
# matmul: PTX kernels) recorded on CUDA, every kernel launch extracted
# (with --inputs: the launches that computed what it reads) and replayed on
# CUDA on its own. Run from the repository root with the packed build
# (scripts/gpu-pack.sh) in build-gpu; OUT names where sessions land.
set -u
B=$PWD/build-gpu
OUT=${OUT:-/tmp/pitrace-cuda-extract}
export LD_LIBRARY_PATH="$B/lib"
mkdir -p "$OUT"
failed=0
for prog in vadd_ptx matmul; do
  s=$OUT/$prog.db
  rm -f "$s"
  SYCL_DEVICE_FILTER=cuda SYCL_PI_RECORD="$s" "$B/bin/$prog" | tail -n 1 || failed=1
  n=$("$B/bin/pitrace" show --compact "$s" | grep -c 'KernelLaunch(')
  echo "$prog: $n kernel launches recorded on CUDA"
  k=1
  while [ "$k" -le "$n" ]; do
    if "$B/bin/pitrace" extract "$s" --kernel "$k" --inputs -o "$OUT/$prog-$k.db" >"$OUT/x.txt" 2>&1 &&
       "$B/bin/pitrace" replay "$OUT/$prog-$k.db" >"$OUT/r.txt" 2>&1; then
      echo "$prog launch $k: $(sed 's/.* of [^ ]*db//; s/ calls into.*/ calls/' "$OUT/x.txt"); $(tail -n 1 "$OUT/r.txt")"
    else
      echo "$prog launch $k: FAILED"; cat "$OUT/x.txt"; tail -n 5 "$OUT/r.txt" 2>/dev/null; failed=1
    fi
    k=$((k + 1))
  done
done
[ "$failed" = 0 ] && echo "cuda-extract: every launch extracted and replayed" ||
  echo "cuda-extract: some FAILED"
exit "$failed"
