#!/usr/bin/env bash
# Builds tunefarm and runs every test, as CI does:
#   1. Release build with warnings as errors; the style gates (scripts/check_style.sh: clang-format,
#      clang-tidy and clang's thread-safety analysis); all tests (including the Raspberry Pi kernels
#      cross-compiled and run under qemu-user).
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build; the tests again except those labelled
#      slow, qemu or packaging. The slow ones are whole-model compiles and long tuning campaigns:
#      under ASan they took 45 of the 55 minutes of this phase and exercise the same code the unit,
#      fuzz and process tests reach in seconds; the qemu ones run board code the host tests cover.
# Usage: scripts/test.sh        (after scripts/setup.sh on a fresh Debian 12 machine)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}

echo "== tunefarm: release build (-Werror)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUNEFARM_WERROR=ON >/dev/null
cmake --build build -j "$JOBS"
echo "== tunefarm: style (clang-format, clang-tidy with the thread-safety analysis)"
scripts/check_style.sh build
echo "== tunefarm: tests"
ctest --test-dir build --output-on-failure -j "$JOBS"

echo "== tunefarm: ASan + UBSan build"
# -O1 and line tables only (-g1), as sanitizer builds usually are: reports keep their file:line
# stacks, and a build with no ccache to draw on takes a third less time than -O2 -g.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUNEFARM_WERROR=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DTUNEFARM_SANITIZE=ON -DTUNEFARM_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j "$JOBS"
echo "== tunefarm: tests under ASan + UBSan"
ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS="suppressions=$PWD/tests/lsan_suppressions.txt" \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --test-dir build-asan --output-on-failure -j "$JOBS" -LE 'slow|qemu|packaging'
echo "== tunefarm: all tests passed"
