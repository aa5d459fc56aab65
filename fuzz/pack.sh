#!/bin/sh
# Packs what fuzz/long-run.sh needs into build-fuzz-pack/ (ignored by git),
# for a machine without pitrace's build dependencies (the GPU host: no
# SQLite, zstd or xxHash headers), as scripts/gpu-pack.sh packs the
# programs: the fuzzers of BUILD (bin/) and of each further build
# (bin-<its name past "build-fuzz-">/, e.g. bin-ubsan/ for
# build-fuzz-ubsan), libpirt, the shared libraries they load that such a
# machine may lack (resolved with ldd here), BUILD's seeds, the
# dictionaries and long-run.sh. Build fuzz_all and run make_seeds.sh first.
#
#   fuzz/pack.sh [BUILD [BUILD...]]      (default build-fuzz)
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || set -- build-fuzz
out=build-fuzz-pack
rm -rf "$out"
mkdir -p "$out/lib"
first=$1
for b in "$@"; do
  if [ "$b" = "$first" ]; then
    dir=$out/bin
  else
    dir=$out/bin-$(basename "$b" | sed 's/^build-fuzz-//')
  fi
  mkdir -p "$dir"
  for f in config filter session salvage payloads kernelsig; do
    [ -x "$b/bin/fuzz_$f" ] || { echo "pack.sh: $b/bin/fuzz_$f is missing: build fuzz_all first" >&2; exit 2; }
    cp "$b/bin/fuzz_$f" "$dir/"
  done
done
[ -f "$first/fuzz/seeds/salvage-base.db" ] ||
  { echo "pack.sh: no seeds in $first/fuzz/seeds: run fuzz/make_seeds.sh $first $first/fuzz/seeds" >&2; exit 2; }
cp -r "$first/fuzz/seeds" "$out/seeds"
cp -r fuzz/dict "$out/dict"
cp fuzz/long-run.sh "$out/"
cp -P "$first"/lib/libpirt.so* "$out/lib/"
# Third-party libraries, found by soname among what the fuzzers load here.
# The C library, libstdc++ and the compiler's runtime stay the machine's.
for f in "$out"/bin*/fuzz_*; do ldd "$f" 2>/dev/null; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
  grep -E '^(libsqlite3|libxxhash|libzstd|libunwind|liblzma)\.' | sort -u |
  while read -r soname path; do cp -L "$path" "$out/lib/$soname"; done
du -sh "$out"
