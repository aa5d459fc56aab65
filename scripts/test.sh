#!/bin/sh
# Runs the whole test suite: the gcc build in build/ under CTest, gcc
# Release and Debug builds with -Werror in build-release/ and build-debug/
# (built, not tested), then the
# same suites built with clang under AddressSanitizer and UBSan in
# build-asan/ (leak checking there is off: the valgrind test owns it), the
# ThreadSanitizer check in build-tsan/, then a short run of each libFuzzer
# target in build-fuzz/.
set -eu
cd "$(dirname "$0")/.."

ctest --test-dir build --output-on-failure -j2

# Users build Release first, and gcc warns differently at each level (-O3
# sees through inlining, -O0 keeps format lengths it cannot bound): the
# Release and Debug builds must be warning-free too.
for type in Release Debug; do
  cmake -S . -B "build-$(echo $type | tr A-Z a-z)" -G Ninja -DCMAKE_BUILD_TYPE=$type \
    -DPITRACE_WERROR=ON >/dev/null
  cmake --build "build-$(echo $type | tr A-Z a-z)"
done

cmake -S . -B build-asan -G Ninja -DCMAKE_C_COMPILER=clang \
  -DPITRACE_SANITIZE=ON -DPITRACE_WERROR=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-asan
# The crash tests need their signals to reach the recorder, not ASan; and
# an impossible allocation (a damaged recording's size) must fail as malloc
# does, with NULL, not abort. The real applications (app_*, pitrace_run) are
# Debian's, not built with ASan: a sanitized front end cannot load into them,
# so they run in the gcc build only; the front end's own suites (fe_*) run
# here too.
ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:handle_segv=0:handle_abort=0:allocator_may_return_null=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j2 -E 'dlopen_dlclose|^app_|^pitrace_run$'

# ThreadSanitizer, in a build of its own (it does not combine with ASan):
# the recorder's threads (rings, writer, encoders), the trace's buffers and
# the readers' decoding threads, through real programs of the build
# (tests/tsan_check.sh; the Criterion suites cannot run under it), each
# ended by any report.
cmake -S . -B build-tsan -G Ninja -DCMAKE_C_COMPILER=clang -DPITRACE_TSAN=ON \
  -DPITRACE_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-tsan
ctest --test-dir build-tsan --output-on-failure -j2 -L tsan

# The fuzzers (fuzz/README.md), a short run of each over its seed corpus.
# PITRACE_FUZZ instruments the whole build for libFuzzer's coverage, which
# the suites above should not pay for: a build of its own, of what the
# fuzzers and their seeds need (fuzz_all), optimised as a fuzzing build is.
cmake -S . -B build-fuzz -G Ninja -DCMAKE_C_COMPILER=clang -DPITRACE_FUZZ=ON \
  -DPITRACE_WERROR=ON >/dev/null
cmake --build build-fuzz --target fuzz_all
ctest --test-dir build-fuzz --output-on-failure -R '^fuzz_'
