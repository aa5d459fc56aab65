#!/bin/bash
# vadd on PoCL (this 2-core machine): plain, the base build recorded and
# this build recorded (data $DATA, default none), interleaved round by round; prints
# "round way wall-us". Run from the repository root: BASE=DIR (a build of
# the base commit), NEW=DIR (default build-release), R rounds, VADD_N.
# ways: plain, base (old recorder), new; prints wall us
R=${R:-20}; N=${VADD_N:-1024}; WAYS=${WAYS:-"plain base new"}; APP=${APP:-vadd}
for r in $(seq 1 $R); do
  for w in $WAYS; do
    rm -f /tmp/ab-vadd.db
    unset SYCL_PI_RECORD SYCL_PI_RECORD_DATA
    case $w in
      plain) B=${NEW:-build-release} ;;
      base) B=${BASE:?the base build}; export SYCL_PI_RECORD=/tmp/ab-vadd.db SYCL_PI_RECORD_DATA=${DATA:-none} ;;
      new) B=${NEW:-build-release}; export SYCL_PI_RECORD=/tmp/ab-vadd.db SYCL_PI_RECORD_DATA=${DATA:-none} ;;
    esac
    s=$(date +%s%N)
    OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd SYCL_DEVICE_FILTER=opencl $B/bin/$APP $N >/tmp/ab-vadd.out 2>&1
    e=$(date +%s%N)
    grep -q "result verified" /tmp/ab-vadd.out || echo FAIL $w
    echo "$r $w $(( (e-s)/1000 ))"
  done
done
