#!/bin/sh
# fork_pool.sh: a pyopencl program whose work runs in a multiprocessing
# pool of forked workers (tests/apps/pyopencl_pool.py), on rusticl,
# recorded with `pitrace record`: the parent's session and one for each
# worker that took a task, every task's calls in a worker's session (a
# forked child used to go unrecorded), and a worker's session replays
# (its buffers, over 64 KiB, salvaged from its payload file: the workers
# end with os._exit).
#
#   fork_pool.sh BUILD SRC
set -u
build=$1 src=$2
pitrace="$build/bin/pitrace"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pitrace-fork-pool.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export OCL_ICD_VENDORS=/etc/OpenCL/vendors/rusticl.icd RUSTICL_ENABLE=swrast PYOPENCL_NO_CACHE=1
cmd="/usr/bin/python3 $src/tests/apps/pyopencl_pool.py 4"
fail() { echo "FAIL [fork pool] $*" >&2; exit 1; }

$cmd >"$tmp/direct.txt" 2>&1 || { cat "$tmp/direct.txt" >&2; fail "the direct run failed"; }
grep -q "pool verified 4 tasks" "$tmp/direct.txt" || fail "the direct run verified nothing"

"$pitrace" record -o "$tmp/s" -- $cmd >"$tmp/rec.txt" 2>&1 ||
  { cat "$tmp/rec.txt" >&2; fail "pitrace record exited $?"; }
cat "$tmp/rec.txt"
grep -q "pool verified 4 tasks" "$tmp/rec.txt" || fail "the recorded run verified nothing"
grep -q "not recorded" "$tmp/rec.txt" && fail "a process was not recorded"
parent="" workers=0 reads=0
for f in "$tmp"/s/*.db; do
  # A buffer read a task, and the parent's one after the pool.
  n=$("$pitrace" sql "$f" "SELECT count(*) FROM pi_calls WHERE api = 'piEnqueueMemBufferRead'")
  launches=$("$pitrace" sql "$f" "SELECT count(*) FROM pi_calls WHERE api = 'piEnqueueKernelLaunch'")
  echo "$(basename "$f"): $n buffer reads, $launches kernel launches"
  if [ "$launches" = 1 ]; then
    [ -z "$parent" ] || fail "two sessions launched the parent's kernel"
    parent=$f
  else
    workers=$((workers + 1)) reads=$((reads + n)) worker=$f
  fi
done
[ -n "$parent" ] || fail "no session of the parent (its kernel launch)"
[ "$workers" -ge 1 ] || fail "no session of a worker"
[ "$reads" = 4 ] || fail "the workers' sessions hold $reads buffer reads, not the 4 tasks'"
"$pitrace" replay "$worker" >"$tmp/rp.txt" 2>&1 ||
  { grep -v '^note' "$tmp/rp.txt" | tail -20 >&2; fail "a worker's session did not replay"; }
tail -n 1 "$tmp/rp.txt"
echo "[fork pool] every step passed"
