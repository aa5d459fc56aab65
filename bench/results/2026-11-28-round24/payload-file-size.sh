#!/bin/bash
# usage: plwatch.sh T M  -> prints max apparent and allocated size of the payload file
d=/tmp/pl; rm -f $d/s.db*
( cd /work/main/build && SYCL_PI_RECORD=$d/s.db SYCL_PI_RECORD_DATA=all OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd /usr/bin/time -f "%e s %M KiB" ./bin/record_prog bigwrites $1 $2 $3 ) &
pid=$!
max=0; maxb=0
while kill -0 $pid 2>/dev/null; do
  for f in $d/s.db-payloads.*; do [ -e "$f" ] || continue; s=$(stat -c '%s %b' "$f" 2>/dev/null) || continue; set -- $s; [ "$1" -gt $max ] && max=$1; b=$(( $2*512 )); [ $b -gt $maxb ] && maxb=$b; done
  sleep 0.005
done
wait $pid
echo "max apparent $((max>>20)) MiB, max allocated $((maxb>>20)) MiB"
