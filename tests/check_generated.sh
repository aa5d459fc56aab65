#!/bin/sh
# Fails when the checked-in generated files differ from what
# tools/gen_pi_api.py makes of runtime/api/pi.api now.
set -eu
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${PYTHON:-python3}" "$src/tools/gen_pi_api.py" --out "$tmp"
status=0
for f in runtime/include/pi/pi_gen.h runtime/src/pi_gen.c runtime/src/pi_calls_gen.h interposer/shim_gen.h \
    runtime/include/pirt_pi.h runtime/src/pirt_pi_gen.c; do
  if ! cmp -s "$tmp/$f" "$src/$f"; then
    echo "generated file $f is stale: run 'cmake --build build --target regen'"
    diff -u "$src/$f" "$tmp/$f" | head -20
    status=1
  fi
done
[ $status -eq 0 ] && echo "generated files are current"
exit $status
