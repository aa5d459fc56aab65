#!/bin/bash
# payload-file-size.sh T M [B]: record_prog bigwrites T M [B] recorded with
# data all on PoCL; prints the largest length and allocation the payload
# file beside the session had (polled every 5 ms). BUILD (default build)
# is the build directory, run from the repository's root.
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
( SYCL_PI_RECORD=$d/s.db SYCL_PI_RECORD_DATA=all OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd \
    "${BUILD:-build}/bin/record_prog" bigwrites "$@" ) &
pid=$!
max=0; maxb=0
while kill -0 $pid 2>/dev/null; do
  for f in "$d"/s.db-payloads.*; do
    [ -e "$f" ] || continue
    s=$(stat -c '%s %b' "$f" 2>/dev/null) || continue
    set -- $s
    [ "$1" -gt $max ] && max=$1
    b=$(( $2 * 512 )); [ $b -gt $maxb ] && maxb=$b
  done
  sleep 0.005
done
wait $pid
echo "longest $((max >> 20)) MiB, most allocated $((maxb >> 20)) MiB"
