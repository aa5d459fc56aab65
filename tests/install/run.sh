#!/bin/sh
# The install test: installs a build into a temporary prefix, checks the
# layout, builds this directory's consumer project out of tree against it
# (find_package(pitrace) with CMake, and pkg-config + cc), and runs each
# program with LD_LIBRARY_PATH and SYCL_PI_CONFIG unset on PoCL: each must
# verify its result, with SYCL_PI_TRACE=1 showing the installed plugins
# config read and the installed plugins loaded. Last, the installed
# `pitrace record` records a consumer through the installed shim (and the
# installed `pitrace sql` reads its calls through the installed SQLite
# extension); the
# installed `pitrace run` finds the installed pitrace.icd (which names the
# installed front end) and runs an OpenCL application (clinfo) through it;
# and a staged install (DESTDIR) writes pitrace.icd naming the final path,
# which pitrace run reports missing, in one line, until it is there.
#
#   run.sh BUILD_DIR CONSUMER_SOURCE_DIR CC CMAKE [CFLAGS]
#
# CFLAGS is for sanitized builds (the consumer must be built like the
# runtime it links). The temporary directory is removed on success and
# kept (and named) on failure.
set -eu
build=$1 src=$2 cc=$3 cmake=$4 cflags=${5:-}

work=$(mktemp -d /tmp/pitrace-install-test-XXXXXX)
prefix=$work/prefix
fail() {
  echo "install test: $*" >&2
  echo "install test: kept $work for a look" >&2
  exit 1
}

"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install $build failed"; }

# ---- The layout ----------------------------------------------------------------
for f in bin/pitrace bin/pitrace_embed \
         lib/libpirt.so lib/libpirt.so.0 \
         lib/libpi_opencl.so lib/libpi_level_zero.so lib/libpi_shim.so lib/libpi_sigfwd.so \
         lib/libpitrace_opencl.so lib/libpitrace_sqlite.so etc/OpenCL/vendors/pitrace.icd include/pirt_pi.h \
         include/pirt.h include/pi/pi.h include/pi/pi_gen.h include/pi/pi_desc.h \
         etc/pitrace/plugins.conf lib/pkgconfig/pitrace.pc \
         lib/cmake/pitrace/pitraceConfig.cmake \
         lib/cmake/pitrace/pitraceConfigVersion.cmake \
         lib/cmake/pitrace/pitraceTargets.cmake; do
  [ -e "$prefix/$f" ] || fail "$f is not installed"
done
ls "$prefix"/lib/libpirt.so.0.* >/dev/null 2>&1 || fail "libpirt.so has no versioned file"
[ "$(readlink "$prefix/lib/libpirt.so")" = libpirt.so.0 ] || fail "libpirt.so does not link to libpirt.so.0"
# The optional plugins are installed exactly when they were built.
for opt in libpi_cuda.so libpi_replay.so; do
  if [ -e "$build/lib/$opt" ] && [ ! -e "$prefix/lib/$opt" ]; then
    fail "$opt was built but is not installed"
  fi
done
for line in "libpi_opencl.so *opencl" "libpi_level_zero.so *level_zero" "libpi_cuda.so *cuda"; do
  grep -q "^$line\$" "$prefix/etc/pitrace/plugins.conf" ||
    fail "etc/pitrace/plugins.conf lacks '$line'"
done
# Nothing installed looks into the build tree for libraries.
for f in bin/pitrace bin/pitrace_embed lib/libpirt.so.0 lib/libpi_opencl.so lib/libpi_shim.so; do
  if readelf -d "$prefix/$f" | grep -E 'R(UN)?PATH' | grep -q "$build"; then
    fail "$f has the build tree in its RUNPATH: $(readelf -d "$prefix/$f" | grep -E 'R(UN)?PATH')"
  fi
done

# ---- The consumer, with CMake ------------------------------------------------------
unset LD_LIBRARY_PATH SYCL_PI_CONFIG SYCL_PI_RECORD SYCL_DEVICE_FILTER SYCL_BE \
  SYCL_PI_TRACE SYCL_PI_TRACE_FILE || true
export OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd

"$cmake" -S "$src" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$cflags" -DCMAKE_BUILD_TYPE=Release \
  >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; fail "configuring the consumer failed"; }
grep -q "^pitrace_DIR:PATH=$prefix/lib/cmake/pitrace\$" "$work/consumer/CMakeCache.txt" ||
  fail "find_package(pitrace) did not find $prefix: $(grep pitrace_DIR "$work/consumer/CMakeCache.txt")"
"$cmake" --build "$work/consumer" >"$work/build.log" 2>&1 ||
  { cat "$work/build.log"; fail "building the consumer failed"; }

# ---- The consumer, with pkg-config + cc ---------------------------------------------
PKG_CONFIG_PATH=$prefix/lib/pkgconfig
export PKG_CONFIG_PATH
pc_flags=$(pkg-config --cflags --libs pitrace) || fail "pkg-config does not know pitrace"
pc_libdir=$(pkg-config --variable=libdir pitrace)
# shellcheck disable=SC2086
"$cc" $cflags -o "$work/vadd_pkgconfig" "$src/vadd.c" $pc_flags -Wl,-rpath,"$pc_libdir" \
  2>"$work/cc.log" || { cat "$work/cc.log"; fail "cc with pkg-config's flags failed: $pc_flags"; }

# ---- Running them -------------------------------------------------------------------
conf=$(cd "$prefix/etc/pitrace" && pwd -P)/plugins.conf
libdir=$(cd "$prefix/lib" && pwd -P)
for prog in "$work/consumer/consumer_vadd" "$work/consumer/consumer_scale" "$work/vadd_pkgconfig"; do
  name=$(basename "$prog")
  out=$(SYCL_PI_TRACE=1 "$prog" 2>&1) || { echo "$out"; fail "$name failed"; }
  echo "$out" | grep -q "result verified" || { echo "$out"; fail "$name did not verify"; }
  read_conf=$(echo "$out" | sed -n 's/^SYCL_PI_TRACE\[basic\]: Reading plugins config //p')
  [ -n "$read_conf" ] || { echo "$out"; fail "$name read no plugins config"; }
  [ "$(cd "$(dirname "$read_conf")" && pwd -P)/$(basename "$read_conf")" = "$conf" ] ||
    fail "$name read $read_conf, not the installed $conf"
  loaded=$(echo "$out" | sed -n 's/^.*Plugin found and successfully loaded: libpi_opencl.so .*(\([^,]*\), backend opencl.*$/\1/p')
  [ -n "$loaded" ] || { echo "$out"; fail "$name loaded no OpenCL plugin"; }
  [ "$(cd "$(dirname "$loaded")" && pwd -P)" = "$libdir" ] ||
    fail "$name loaded the OpenCL plugin from $loaded, not from $libdir"
  echo "install test: $name verified with the installed runtime ($loaded, $read_conf)"
done

# ---- The installed pitrace records through the installed shim -------------------------
"$prefix/bin/pitrace" record -o "$work/sessions" -- "$work/consumer/consumer_vadd" \
  >"$work/record.log" 2>&1 || { cat "$work/record.log"; fail "the installed pitrace record failed"; }
set -- "$work"/sessions/pitrace-*.db
[ $# -eq 1 ] && [ -f "$1" ] || fail "the installed pitrace record left $# sessions, not 1"
if command -v sqlite3 >/dev/null; then
  ended=$(sqlite3 "$1" "SELECT ended || ' ' || (calls > 0) FROM sessions")
  [ "$ended" = "teardown 1" ] || fail "the recorded session ended '$ended'"
fi
echo "install test: the installed pitrace recorded $1"
# The installed pitrace sql finds the installed SQLite extension: the views answer.
if command -v sqlite3 >/dev/null; then
  n=$("$prefix/bin/pitrace" sql "$1" "SELECT count(*) FROM pi_calls WHERE result = 'PI_SUCCESS'") ||
    fail "the installed pitrace sql failed: $n"
  [ "$n" -gt 0 ] || fail "the installed pitrace sql found no calls ($n)"
  echo "install test: the installed pitrace sql answered pi_calls ($n calls)"
fi

# ---- The installed front end: an OpenCL application through pitrace run ------------
[ "$(cat "$prefix/etc/OpenCL/vendors/pitrace.icd")" = "$prefix/lib/libpitrace_opencl.so" ] ||
  fail "pitrace.icd does not name the installed front end"
"$prefix/bin/pitrace" run -- true || fail "the installed pitrace run -- true failed"
icd=$(cd "$prefix/etc/OpenCL/vendors" && pwd -P)/pitrace.icd
got=$("$prefix/bin/pitrace" run -- sh -c 'echo "$OCL_ICD_VENDORS|$PITRACE_OCL_ICD_VENDORS"')
[ "$got" = "$icd|/etc/OpenCL/vendors/pocl.icd" ] ||
  fail "the installed pitrace run set '$got', not '$icd|/etc/OpenCL/vendors/pocl.icd'"
echo "install test: the installed pitrace run routes through $icd"
# Debian's clinfo is not sanitized: a sanitized front end cannot load into it.
if [ -n "$cflags" ]; then
  echo "install test: clinfo through the installed front end skipped (sanitized build)"
elif command -v clinfo >/dev/null; then
  out=$(OCL_ICD_VENDORS=/etc/OpenCL/vendors/pocl.icd SYCL_PI_TRACE=1 \
        "$prefix/bin/pitrace" run -- clinfo -l 2>&1) || { echo "$out"; fail "pitrace run -- clinfo failed"; }
  echo "$out" | grep -q "Platform #0" || { echo "$out"; fail "clinfo saw no platform through the installed front end"; }
  loaded=$(echo "$out" | sed -n 's/^.*Plugin found and successfully loaded: libpi_opencl.so .*(\([^,]*\), backend opencl.*$/\1/p')
  [ -n "$loaded" ] && [ "$(cd "$(dirname "$loaded")" && pwd -P)" = "$libdir" ] ||
    { echo "$out"; fail "the installed front end did not use the installed OpenCL plugin"; }
  echo "install test: clinfo ran through the installed front end"
fi

# ---- Staged (DESTDIR): pitrace.icd names where the library will lie -------------------
DESTDIR=$work/staged "$cmake" --install "$build" --prefix /opt/pitrace-staged \
  >"$work/staged.log" 2>&1 || { cat "$work/staged.log"; fail "cmake --install with DESTDIR failed"; }
staged=$work/staged/opt/pitrace-staged
[ -e "$staged/lib/libpitrace_opencl.so" ] || fail "DESTDIR: libpitrace_opencl.so is not staged"
[ "$(cat "$staged/etc/OpenCL/vendors/pitrace.icd")" = /opt/pitrace-staged/lib/libpitrace_opencl.so ] ||
  fail "DESTDIR: pitrace.icd names $(cat "$staged/etc/OpenCL/vendors/pitrace.icd"), not /opt/pitrace-staged/lib/libpitrace_opencl.so"
# Not installed where it names: pitrace run says so in one line, exit 2.
rc=0; out=$("$staged/bin/pitrace" run -- true 2>&1) || rc=$?
[ $rc -eq 2 ] && [ "$(echo "$out" | wc -l)" -eq 1 ] && echo "$out" | grep -q "which is missing" ||
  fail "pitrace run with a vendor file naming a missing library: exit $rc: $out"
"$staged/bin/pitrace" run --no-opencl -- true || fail "pitrace run --no-opencl needs no vendor file"
echo "install test: a staged pitrace.icd names /opt/pitrace-staged/lib/libpitrace_opencl.so"

rm -rf "$work"
echo "install test: passed"
