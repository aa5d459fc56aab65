#!/bin/sh
# run_verb.sh: `pitrace run` and `pitrace record` route OpenCL applications
# through the front end (and only then): the loader's variables, the user's
# own OCL_ICD_VENDORS kept for the plugin, --no-opencl, a missing vendor
# file, and a recorded OpenCL application.
#
#   run_verb.sh BUILD
set -u
build=$1
pitrace="$build/bin/pitrace"
icd=$(realpath "$build/etc/OpenCL/vendors/pitrace.icd")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pitrace-run.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0
fail() { echo "FAIL: $*" >&2; failed=1; }
expect() { [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"; }

show='echo "$OCL_ICD_VENDORS|${PITRACE_OCL_ICD_VENDORS-unset}"'
expect "run, no previous value" "$(env -u OCL_ICD_VENDORS -u PITRACE_OCL_ICD_VENDORS "$pitrace" run -- sh -c "$show")" "$icd|unset"
expect "run keeps the user's vendors" \
  "$(env -u PITRACE_OCL_ICD_VENDORS OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd "$pitrace" run -- sh -c "$show")" \
  "$icd|/etc/OpenCL/vendors/pocl.icd"
expect "run inside run keeps the outer value" \
  "$(env OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd "$pitrace" run -- "$pitrace" run -- sh -c "$show")" \
  "$icd|/etc/OpenCL/vendors/pocl.icd"
expect "run --no-opencl" "$(env -u OCL_ICD_VENDORS "$pitrace" run --no-opencl -- sh -c 'echo "[${OCL_ICD_VENDORS-}]"')" "[]"
"$pitrace" run -- false; expect "run passes the status on" "$?" 1
"$pitrace" run -- /nonexistent/app 2>/dev/null; expect "run of a missing command" "$?" 127

# A pitrace without its tree: one clear line, exit 2.
cp "$pitrace" "$tmp/pitrace"
out=$("$tmp/pitrace" run -- true 2>&1); rc=$?
expect "run without the vendor file" "$rc" 2
case $out in *"vendor file"*"is missing"*) ;; *) fail "unclear error: $out" ;; esac
out=$("$tmp/pitrace" record -o "$tmp/x" -- true 2>&1); rc=$?
expect "record without the vendor file" "$rc" 2
case $out in *"--no-opencl"*) ;; *) fail "record's error does not name --no-opencl: $out" ;; esac

# SYCL_PI_TRACE=2 alone shows an OpenCL application's PI calls, typed.
export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd
SYCL_PI_TRACE=2 "$pitrace" run -- clinfo -l >"$tmp/trace.txt" 2>&1 || fail "traced clinfo failed"
grep -q -- "---> piDeviceGetInfo(" "$tmp/trace.txt" || fail "no PI call traced"
grep -q "pi_device_info param_name : PI_DEVICE_INFO_NAME" "$tmp/trace.txt" ||
  fail "the trace does not name the query"

# record routes by default: clinfo's calls are recorded; not with --no-opencl.
export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd
"$pitrace" record -o "$tmp/on" -- clinfo -l >"$tmp/on.txt" 2>&1 || fail "record -- clinfo failed"
grep -q "Platform #0" "$tmp/on.txt" || fail "clinfo listed no platform through pitrace"
ls "$tmp/on"/*.db >/dev/null 2>&1 || fail "record -- clinfo kept no session"
"$pitrace" record --no-opencl -o "$tmp/off" -- clinfo -l >"$tmp/off.txt" 2>&1 || fail "record --no-opencl failed"
ls "$tmp/off"/*.db >/dev/null 2>&1 && fail "record --no-opencl recorded clinfo"
[ $failed = 0 ] && echo "pitrace run and record route OpenCL applications as documented"
exit $failed
