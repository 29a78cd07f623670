#!/usr/bin/env bash
# Installs every Debian 12 package tunefarm needs to build, test and benchmark.
# Idempotent and non-interactive: packages already present are skipped by apt.
# Run as root (or through sudo). Usage: scripts/setup.sh
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkgconf git ca-certificates openssl ccache
  clang-format clang-tidy python3  # style gates (scripts/check_style.sh), the main job's report
  # kernel compiler
  llvm-19-dev lld-19
  # farm protocols (later issues) and shared libraries
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libxgboost-dev xgboost
  libsqlite3-dev sqlite3
  # the records database on PostgreSQL: libpq, and a real server (and psql) for its tests and benchmark
  libpq-dev postgresql postgresql-client
  libboost-dev prometheus-cpp-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libonnx-dev libonnx-testdata
  # tests and benchmarks (prometheus: promtool and a real server for the /metrics tests)
  libgtest-dev libgmock-dev googletest libbenchmark-dev prometheus
  libdnnl-dev
  # the dashboard's browser tests (headless, driven by playwright-core from npm)
  chromium
  # Raspberry Pi cross builds, run under emulation in tests
  g++-aarch64-linux-gnu g++-arm-linux-gnueabihf qemu-user
  help2man lintian debootstrap  # Debian packages: man pages, lintian, the clean-root install test (scripts/package.sh, test_packages.sh)
  xz-utils  # the bundle and the GPU check kit (scripts/bundle.sh, scripts/gpu_check.sh)
)
# The board-side farm (rpc_server) cross-built for aarch64 links Debian's multiarch gRPC; the
# emulated Raspberry Pi test runs it under qemu. Always --no-install-recommends for foreign
# packages: with recommends, apt removes build-essential (../shared/DEPENDENCIES.md §7).
# (armhf works the same way with libgrpc++-dev:armhf; not installed by default: the Debian security
# mirror's armhf index was inconsistent on 2026-11-22 and would fail every apt-get update.)
FOREIGN_ARCHS=(arm64)
FOREIGN_PACKAGES=(libgrpc++-dev:arm64 libprotobuf-dev:arm64)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}" "${FOREIGN_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# Node.js and npm: the dashboard's npm packages (below). Debian's when the machine has none.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then missing+=(nodejs npm); fi

# The dashboard's npm packages, pinned by package-lock.json: ECharts (embedded into the binary at
# build time) and playwright-core (drives Chromium in the dashboard's tests).
install_npm_packages() {
  echo "setup.sh: npm ci in tuner/dashboard/web"
  npm ci --prefix "$(dirname "$0")/../tuner/dashboard/web" --no-audit --no-fund --loglevel=error
  npm ci --prefix "$(dirname "$0")/../deploy/k8s/validate" --no-audit --no-fund --loglevel=error
}

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup.sh: all $(( ${#PACKAGES[@]} + ${#FOREIGN_PACKAGES[@]} )) packages already installed"
  install_npm_packages
  exit 0
fi

for arch in "${FOREIGN_ARCHS[@]}"; do
  if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    $SUDO dpkg --add-architecture "$arch"
  fi
done
echo "setup.sh: installing ${#missing[@]} packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# A mirror in the middle of a sync serves inconsistent indexes for a moment: retry.
for attempt in 1 2 3; do
  if $SUDO apt-get -o DPkg::Lock::Timeout=600 update -q; then break; fi
  if [ "$attempt" = 3 ]; then echo "setup.sh: apt-get update failed 3 times" >&2; exit 1; fi
  sleep 15
done
# --force-unsafe-io: dpkg's per-file fsync triples install time (../shared/DEPENDENCIES.md);
# a crash mid-install is recoverable by re-running this script.
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends \
  -o Dpkg::Options::=--force-unsafe-io "${missing[@]}"
install_npm_packages
echo "setup.sh: done"
