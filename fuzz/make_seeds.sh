#!/bin/sh
# make_seeds.sh BUILD OUT: the fuzzers' seed corpora, from real recordings
# made with BUILD's programs (see README.md):
#   OUT/config/    plugins config files
#   OUT/filter/    SYCL_DEVICE_FILTER values
#   OUT/session/   session databases: vadd 16 recorded on PoCL (data all),
#                  record_prog's session after salvage ('_exit'), and a
#                  stand-in plugin session, and the version-1 fixture
#                  (tests/fixtures), each compacted (512-byte pages:
#                  about 100 KB, libFuzzer's -max_len); vadd
#                  16's largest chunk as stored (a zstd blob) and its body
#                  ("B" and the decoded body: fuzz_session.c)
#   OUT/salvage/   the ring file of a recording that ended in _exit
#                  (record_prog quickexit 5 on PoCL), its rings cut to 4 KB;
#                  and the ring and payload files of the payloads' recording
#                  (below) as fuzz_salvage takes a pair ("PLD1", the ring
#                  file's length, the two files), the payload file whole and
#                  cut as below
#   OUT/salvage-base.db   that recording's database, session still running
#   OUT/payloads/  the payload file of a recording that ended in _exit with
#                  payloads waiting (record_prog readback 16385: two writes
#                  and a read of just over 64 KiB, then _exit), cut after
#                  its first region and the next one's first page
#   OUT/kernelsig/ a kernel's name and OpenCL C source: matmul.cl's four, and a few
#                  written here
# Needs python3 (its sqlite3 module), the zstd command and PoCL's vendor file.
set -eu
[ $# -eq 2 ] || { echo "usage: make_seeds.sh BUILD OUT" >&2; exit 2; }
build=$(cd "$1" && pwd)
out=$2
PY=${PYTHON:-python3}
POCL=${POCL_ICD:-/etc/OpenCL/vendors/pocl.icd}
[ -r "$POCL" ] || { echo "make_seeds.sh: no $POCL (PoCL's vendor file)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out/config" "$out/filter" "$out/session" "$out/salvage" "$out/payloads" "$out/kernelsig"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pitrace-seeds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# The fuzz build is sanitized: a recording process must exit as it would.
export ASAN_OPTIONS=detect_leaks=0:handle_segv=0:handle_abort=0:allocator_may_return_null=1

printf 'libpi_opencl.so opencl\n' >"$out/config/plain"
printf '# a comment\n/opt/x/libpi_cuda.so   cuda\nlibpi_opencl.so opencl libraries=/opt/x/libfoo.so:/opt/y/libbar.so\n' \
  >"$out/config/options"
printf 'libpi_shim.so opencl target=libpi_opencl.so a=b\n  \t\nlibpi_x.so bogus =x key=value # end\n' \
  >"$out/config/shim"
i=0
for f in 'opencl:cpu:1' cpu 'opencl:gpu' '*:*:0' 'gpu:cuda, opencl' 'level_zero:acc:2,cuda:*' ' cpu : 0 '; do
  i=$((i + 1))
  printf '%s' "$f" >"$out/filter/$i"
done

# Kernel signatures: each of matmul's kernels with matmul.cl, and a few
# written here (images, attributes, a prototype, comments and directives).
src_dir=$(cd "$(dirname "$0")/.." && pwd)
for k in matmul_tiled reduce_sum scan_inclusive histogram; do
  { echo "$k"; cat "$src_dir/examples/matmul/matmul.cl"; } >"$out/kernelsig/matmul-$k"
done
printf 'blend\n__constant sampler_t s = 0;\n/* kernel void blend(global float *x) */\n#define RO read_only \\\n  image2d_t\nkernel void __attribute__((reqd_work_group_size(8, 8, 1)))\nblend(read_only image2d_t a, image2d_t b, __write_only image2d_t c,\n      int rows, __global const float4 * restrict w, global float *const out);\n' \
  >"$out/kernelsig/images"
printf 'f\n__kernel void f(void) { char *s = "kernel void f(global float *x)"; }\n' >"$out/kernelsig/void"
printf 'k\n#ifdef A\nkernel void k(global const float *x, global const float *y) {}\n#else\nkernel void k(global float *x, global const float *y) {}\n#endif\n' \
  >"$out/kernelsig/two-definitions"

# compact DB OUT: one file (no WAL), 512-byte pages, vacuumed
compact() {
  $PY - "$1" "$2" <<'PYEOF'
import shutil, sqlite3, sys
src, dst = sys.argv[1], sys.argv[2]
shutil.copy(src, dst)
c = sqlite3.connect(dst)
c.execute("PRAGMA journal_mode=DELETE")
c.execute("PRAGMA page_size=512")
c.execute("VACUUM")
c.close()
PYEOF
}

OCL_ICD_VENDORS=$POCL SYCL_PI_RECORD=$tmp/vadd.db SYCL_PI_RECORD_DATA=all "$build/bin/vadd" 16 >/dev/null
compact "$tmp/vadd.db" "$out/session/vadd16.db"
compact "$(dirname "$0")/../tests/fixtures/session-v1.db" "$out/session/v1-fixture.db"
$PY - "$tmp/vadd.db" "$out/session/chunk-vadd16.bin" <<'PYEOF'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
blob = c.execute("SELECT calls FROM call_chunks ORDER BY ncalls DESC, id LIMIT 1").fetchone()[0]
assert blob[0] == 1, "not a zstd chunk"
open(sys.argv[2], "wb").write(blob)
PYEOF
{ printf B; tail -c +2 "$out/session/chunk-vadd16.bin" | zstd -d -c; } >"$out/session/body-vadd16.bin"
"$build/bin/bench_replay" --make-session "$tmp/null.db" 30
compact "$tmp/null.db" "$out/session/null30.db"
OCL_ICD_VENDORS=$POCL SYCL_PI_RECORD=$tmp/quick.db "$build/bin/record_prog" quickexit 3 >/dev/null || true
"$build/bin/pitrace" sessions "$tmp/quick.db" >/dev/null # salvages its rings
compact "$tmp/quick.db" "$out/session/exit3-salvaged.db"

# A recording whose writer made its session's row before the _exit (the
# row is made on the writer's thread, while the program's first calls go
# on: nearly always long before the fifth query returns; tried again if
# not, so that the seed is the same kind every time).
for try in 1 2 3 4 5; do
  rm -f "$tmp"/s.db "$tmp"/s.db-*
  OCL_ICD_VENDORS=$POCL SYCL_PI_RECORD=$tmp/s.db "$build/bin/record_prog" quickexit 5 >/dev/null || true
  $PY -c "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); sys.exit(0 if c.execute(\"SELECT count(*) FROM sqlite_master WHERE name = 'sessions'\").fetchone()[0] and c.execute(\"SELECT count(*) FROM sessions WHERE ended = 'running'\").fetchone()[0] == 1 else 1)" "$tmp/s.db" && break
done
set -- "$tmp"/s.db-rings.*
[ -f "$1" ] || { echo "make_seeds.sh: record_prog left no ring file" >&2; exit 1; }
$PY - "$tmp/s.db" "$out/salvage-base.db" <<'PYEOF'
import shutil, sqlite3, sys
db, base = sys.argv[1:3]
# The database as one file, its session still running (opened with SQLite
# alone: nothing salvages it).
c = sqlite3.connect(db)
c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
c.execute("PRAGMA journal_mode=DELETE")
assert c.execute("SELECT count(*) FROM sessions WHERE ended='running'").fetchone()[0] == 1
# Compacted as the session seeds are (a new database has 16 KiB pages:
# 400 KB that every input would copy).
c.execute("PRAGMA page_size=512")
c.execute("VACUUM")
c.close()
shutil.copy(db, base)
PYEOF
# cut_ring RING SEED [PAYLOADS...]: the ring file with each ring cut to the
# least power of two from 4 KB that holds what was written into it; with
# payload files, the pair fuzz_salvage takes, one seed a payload file.
cut_ring() {
  $PY - "$@" <<'PYEOF'
import struct, sys
ring, seed, payloads = sys.argv[1], sys.argv[2], sys.argv[3:]
HEADER, CTL = 32 << 10, 4096
f = open(ring, "rb").read()
magic, version, state, session, start, t0, cap, slot, pid, nslots = struct.unpack_from("<QIIqqQQQiI", f, 0)
assert magic == 0x31474E4952545050 and version in (1, 2, 3, 4) and slot == CTL + cap, "not a ring file"
heads = [struct.unpack_from("<Q", f, HEADER + k * slot)[0] for k in range(nslots)]
new = 4 << 10
while new < max(heads + [0]):
    new *= 2
hdr = bytearray(f[:HEADER])
struct.pack_into("<QQ", hdr, 40, new, CTL + new)  # ring_cap, slot_size
body = b"".join(f[HEADER + k * slot: HEADER + k * slot + CTL + new] for k in range(nslots))
cut = bytes(hdr) + body
if not payloads:
    open(seed, "wb").write(cut)
for i, p in enumerate(payloads):
    open("%s-%d" % (seed, i + 1), "wb").write(b"PLD1" + struct.pack("<I", len(cut)) + cut +
                                               open(p, "rb").read())
print("make_seeds.sh: salvage seed: %d slot(s), heads %s, rings cut to %d bytes" % (nslots, heads, new))
PYEOF
}
cut_ring "$1" "$out/salvage/quickexit5"
# The same with stacks (SYCL_PI_RECORD_BACKTRACE=1): each thread's stacks
# named in its ring (REC_STACK records) before the calls that have them.
rm -f "$tmp"/b.db "$tmp"/b.db-*
OCL_ICD_VENDORS=$POCL SYCL_PI_RECORD=$tmp/b.db SYCL_PI_RECORD_BACKTRACE=1 \
  "$build/bin/record_prog" quickexit 5 >/dev/null || true
set -- "$tmp"/b.db-rings.*
[ -f "$1" ] || { echo "make_seeds.sh: record_prog left no ring file (stacks)" >&2; exit 1; }
cut_ring "$1" "$out/salvage/quickexit5-stacks"
# A payload file: writes and a read of 64 KiB and 4 bytes, the payloads
# written into the file before their calls returned (there whatever the
# writer did before the _exit), cut to 72 KiB: the first region (68 KiB)
# and the first page of the next.
rm -f "$tmp"/p.db "$tmp"/p.db-*
OCL_ICD_VENDORS=$POCL SYCL_PI_RECORD=$tmp/p.db SYCL_PI_RECORD_DATA=all RECORD_PROG_EXIT=_exit \
  "$build/bin/record_prog" readback 16385 >/dev/null || true
set -- "$tmp"/p.db-payloads.*
[ -f "$1" ] || { echo "make_seeds.sh: record_prog left no payload file" >&2; exit 1; }
head -c 73728 "$1" >"$out/payloads/readback"
payloads=$1
set -- "$tmp"/p.db-rings.*
[ -f "$1" ] || { echo "make_seeds.sh: record_prog left no ring file beside its payloads" >&2; exit 1; }
cut_ring "$1" "$out/salvage/readback-payloads" "$payloads" "$out/payloads/readback"
ls "$out"/* | wc -l >/dev/null
echo "make_seeds.sh: seeds in $out"
