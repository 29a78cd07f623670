#!/usr/bin/env bash
# Builds tunefarm's Debian packages (cmake/Packaging.cmake, CPack's DEB generator):
#   amd64 (build-pkg, Release, no tests or benches): tunefarm, tunefarm-server, tunefarm-runtime
#   arm64 (build-pkg-arm64, the board-side farm cross-built against Debian's multiarch gRPC:
#          libgrpc++-dev:arm64 libprotobuf-dev:arm64 from scripts/setup.sh): tunefarm-server,
#          tunefarm-runtime
#   armhf (build-pkg-armhf) the same, only when libgrpc++-dev:armhf is installed (scripts/setup.sh
#          does not install it: Debian's armhf security index was inconsistent, see there)
# and copies the .debs to OUT_DIR (default build-pkg/debs), replacing older ones there.
# Usage: scripts/package.sh [OUT_DIR]     JOBS=N (default 1) parallel compile jobs
# Check them in a clean Debian 12 root with scripts/test_packages.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
OUT=${1:-$SRC/build-pkg/debs}
JOBS=${JOBS:-1}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

die() { echo "package.sh: $*" >&2; exit 1; }
for tool in cmake ninja cpack dpkg-shlibdeps dpkg-buildflags file; do
  command -v "$tool" >/dev/null || die "$tool is missing (scripts/setup.sh installs it)"
done
command -v help2man >/dev/null || echo "package.sh: help2man is missing: man pages fall back to plain --help text"

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT

# buildflag DEB_ARCH NAME: Debian's hardening flags (dpkg-buildflags, hardening=+all: fortify,
# stack protector, relro, bindnow) for that architecture, without -g, -O2 (Release's -O3 stays) and
# the build-path mapping.
buildflag() {
  DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-architecture -a"$1" -c dpkg-buildflags --get "$2" 2>/dev/null |
    tr ' ' '\n' | grep -v -E '^(-g|-O2|-ffile-prefix-map=.*|)$' | tr '\n' ' '
}
# configure DIR DEB_ARCH ARGS...: configures DIR for /usr with Debian's hardening flags.
configure() {
  local dir=$1 deb_arch=$2; shift 2
  local cppflags
  cppflags=$(buildflag "$deb_arch" CPPFLAGS)
  cmake -S "$SRC" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUNEFARM_BUILD_TESTS=OFF \
    -DTUNEFARM_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX=/usr \
    -DCMAKE_C_FLAGS="$cppflags $(buildflag "$deb_arch" CFLAGS)" -DCMAKE_CXX_FLAGS="$cppflags $(buildflag "$deb_arch" CXXFLAGS)" \
    -DCMAKE_EXE_LINKER_FLAGS="$(buildflag "$deb_arch" LDFLAGS)" "$@" >/dev/null
}
# cpack_in DIR COMPONENTS: packages what is already built in DIR into $STAGE (with Ninja, cpack
# builds nothing itself).
cpack_in() {
  local dir=$1 components=$2
  (cd "$dir" && cpack -G DEB -B "$STAGE/$(basename "$dir")" \
     -D "CPACK_COMPONENTS_ALL=$components" >"$STAGE/cpack-$(basename "$dir").log" 2>&1) || {
    cat "$STAGE/cpack-$(basename "$dir").log" >&2
    die "cpack in $dir failed"
  }
  find "$STAGE/$(basename "$dir")" -maxdepth 1 -name '*.deb' -exec cp {} "$OUT/" \;
}

rm -f "$OUT"/tunefarm*.deb

echo "== package.sh: amd64 (build-pkg)"
configure "$SRC/build-pkg" "$(dpkg --print-architecture)"
cmake --build "$SRC/build-pkg" -j "$JOBS" --target tunefarm tuner-daemon rpc_tracker rpc_server \
  tunefarm-measure-child tunefarm-run tunefarm_runtime
cpack_in "$SRC/build-pkg" "workstation;server;runtime"

# The boards: the FARM_ONLY configuration (rpc_server, its measurement child, the runtime).
cross_built=0
for arch in aarch64-linux-gnu arm-linux-gnueabihf; do
  case $arch in
    aarch64-linux-gnu) deb_arch=arm64 ;;
    arm-linux-gnueabihf) deb_arch=armhf ;;
  esac
  dir=$SRC/build-pkg-$deb_arch
  if ! command -v "$arch-g++" >/dev/null; then
    echo "package.sh: no $arch-g++: skipping $deb_arch (scripts/setup.sh installs the cross compilers)"
    continue
  fi
  if [ ! -e "/usr/lib/$arch/cmake/grpc/gRPCConfig.cmake" ]; then
    echo "package.sh: libgrpc++-dev:$deb_arch is not installed: skipping $deb_arch"
    continue
  fi
  echo "== package.sh: $deb_arch (build-pkg-$deb_arch)"
  configure "$dir" "$deb_arch" -DCMAKE_TOOLCHAIN_FILE="$SRC/cmake/toolchains/$arch-multiarch.cmake" -DTUNEFARM_FARM_ONLY=ON
  cmake --build "$dir" -j "$JOBS" --target rpc_server tunefarm-measure-child tunefarm-run tunefarm_runtime
  cpack_in "$dir" "server;runtime"
  cross_built=$((cross_built + 1))
done
[ "$cross_built" -gt 0 ] || die "no cross-built tunefarm-server (needs g++-aarch64-linux-gnu and libgrpc++-dev:arm64)"

echo "== package.sh: wrote to $OUT"
for deb in "$OUT"/tunefarm*.deb; do
  printf '%-48s %8s KiB  (installed %s KiB)\n' "$(basename "$deb")" "$(( $(stat -c %s "$deb") / 1024 ))" \
    "$(dpkg-deb -f "$deb" Installed-Size)"
done
