#!/bin/sh
# Runs the whole test suite: the gcc build in build/ under CTest, a gcc
# Release build with -Werror in build-release/ (built, not tested), then the
# same suites built with clang under AddressSanitizer and UBSan in
# build-asan/ (leak checking there is off: the valgrind test owns it).
set -eu
cd "$(dirname "$0")/.."

ctest --test-dir build --output-on-failure -j2

# Users build Release first, and gcc -O3 warns where Debug does not (it
# sees through inlining): the Release build must be warning-free too.
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DPITRACE_WERROR=ON >/dev/null
cmake --build build-release

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
