#!/usr/bin/env bash
# Writes a relocatable tunefarm bundle: the workstation and server programs and every shared library
# they need beyond glibc, laid out as bin/ and lib/ with an RPATH of $ORIGIN/../lib, so tunefarm runs
# on a host that has none of Debian's packages (a GPU host with only a driver, a board). LLVM is
# linked in statically with only the back ends tunefarm uses (X86, AArch64, ARM, NVPTX) and the
# binaries are stripped, as compilers' release builds are.
#
# Usage: scripts/bundle.sh [--build DIR] [OUT.tar.xz]
#   OUT.tar.xz     where the bundle goes (default build-bundle/tunefarm-bundle.tar.xz)
#   --build DIR    the build directory (default build-bundle; shared with scripts/gpu_check.sh)
#   -h, --help     this text
# Then: tar xf tunefarm-bundle.tar.xz && tunefarm/bin/tunefarm --help
# Fails (exit 1, nothing written) when a library is missing here, resolves outside the bundle, or
# the bundle exceeds 35 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib/bundle_lib.sh
JOBS=${JOBS:-2}
BUILD=build-bundle
OUT=""
MAX_BYTES=$((35 * 1000 * 1000))
PROGRAMS=(tunefarm tunefarm-run tunefarm-measure-child rpc_tracker rpc_server tuner-daemon)

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --build) BUILD=${2:?--build takes a directory}; shift 2 ;;
    -*) echo "bundle.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) [ -z "$OUT" ] || { echo "bundle.sh: one output path, got '$OUT' and '$1'" >&2; exit 2; }; OUT=$1; shift ;;
  esac
done
OUT=${OUT:-$BUILD/tunefarm-bundle.tar.xz}
case $OUT in *.tar.xz) ;; *) echo "bundle.sh: the output must end in .tar.xz, got '$OUT'" >&2; exit 2 ;; esac

echo "== bundle: building ${PROGRAMS[*]} (static LLVM, RPATH \$ORIGIN/../lib) in $BUILD"
bundle_configure "$BUILD"
cmake --build "$BUILD" -j "$JOBS" --target "${PROGRAMS[@]}"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/tunefarm"
bundle_copy "$BUILD" "$root" "${PROGRAMS[@]}"
cp LICENSE* "$root/" 2>/dev/null || true

bundle_finish bundle "$stage" tunefarm "$OUT" "$MAX_BYTES" "${PROGRAMS[@]}"
