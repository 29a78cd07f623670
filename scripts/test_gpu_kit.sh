#!/usr/bin/env bash
# Rehearses the GPU check on this GPU-less machine, as a GPU host would meet it:
#   1. builds the GPU check kit (scripts/gpu_check.sh --kit) and the bundle (scripts/bundle.sh) from
#      one static-LLVM build directory, and checks their sizes: kit <= 40 MB, bundle under its limit
#   2. unpacks the kit into a clean Debian 12 root (debootstrap --variant=minbase, cached; no -dev
#      package, nothing from the build tree), checks that every binary's libraries resolve inside
#      the kit or to glibc there, and runs the kit's runner in it (chroot, an empty environment)
#   3. asserts the runner says "no CUDA driver" cleanly: the probe fails with the driver's message,
#      every GPU step is reported skipped for that reason, the report (Markdown + JSON) is written,
#      and the exit status is 1
# Usage: scripts/test_gpu_kit.sh [--build DIR] [--cache DIR]
#   --build DIR   the static-LLVM build directory (default build-bundle)
#   --cache DIR   the cached Debian root (default DIR/bootstrap-cache; CTest passes the packaging test's)
# Environment: TUNEFARM_DEBIAN_MIRROR, TUNEFARM_REQUIRE_FIXTURES=1 (a missing prerequisite fails
# instead of skipping with exit 77), KEEP=1. Needs root (debootstrap, chroot) and, the first time, the network.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
START=$(date +%s)
source scripts/lib/minbase_root.sh  # also say, fail, missing

BUILD=$SRC/build-bundle CACHE=""
while [ $# -gt 0 ]; do
  case $1 in
    --build) BUILD=${2:?--build takes a directory}; shift 2 ;;
    --cache) CACHE=${2:?--cache takes a directory}; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown argument $1 (--help)" ;;
  esac
done
CACHE=${CACHE:-$BUILD/bootstrap-cache}
MIRROR=${TUNEFARM_DEBIAN_MIRROR:-http://deb.debian.org/debian}

[ "$(id -u)" = 0 ] || missing "needs root (debootstrap and chroot)"
for tool in debootstrap chroot strip xz; do command -v "$tool" >/dev/null || missing "$tool is not installed (scripts/setup.sh)"; done

WORK=$(mktemp -d /tmp/tunefarm-gpu-kit.XXXXXX)
MOUNTS=()
cleanup() {
  local rc=$? i
  for (( i=${#MOUNTS[@]}-1; i>=0; i-- )); do umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null || true; done
  if grep -q " $WORK" /proc/mounts; then
    echo "test_gpu_kit.sh: still mounted under $WORK; not removing it" >&2
  elif [ "${KEEP:-0}" = 1 ]; then
    echo "test_gpu_kit.sh: kept $WORK"
  else
    rm -rf "$WORK"
  fi
  [ "$rc" = 0 ] && say "PASS ($(( $(date +%s) - START )) s)"
  exit "$rc"
}
trap cleanup EXIT

# ---- 1. the kit and the bundle, and their sizes
# Packing at xz preset 1 rather than 6 (scripts/lib/bundle_lib.sh): 32 s instead of 160 s per pack
# on these 2 cores, 33.1 MB instead of 29.1 MB for the bundle. A preset-6 pack is always smaller, so
# the limits checked here hold a fortiori for the archives users build.
export TUNEFARM_XZ_PRESET=${TUNEFARM_XZ_PRESET:-1}
say "building the kit in $BUILD"
KIT=$WORK/gpu-kit.tar.xz
scripts/gpu_check.sh --kit "$KIT" --build "$BUILD" >"$WORK/kit.log" 2>&1 || { tail -40 "$WORK/kit.log" >&2; fail "gpu_check.sh --kit failed"; }
grep '^gpu_check kit:' "$WORK/kit.log"
kit_bytes=$(stat -c %s "$KIT")
[ "$kit_bytes" -le $((40 * 1000 * 1000)) ] || fail "the kit is $kit_bytes bytes, over 40 MB"
say "building the bundle from the same build directory"
scripts/bundle.sh --build "$BUILD" "$WORK/bundle.tar.xz" >"$WORK/bundle.log" 2>&1 || { tail -20 "$WORK/bundle.log" >&2; fail "bundle.sh failed"; }
grep '^bundle:' "$WORK/bundle.log"
scripts/bundle.sh --help | grep -q '^Usage: scripts/bundle.sh' || fail "bundle.sh --help does not print its usage"
[ ! -e ./--help ] || fail "bundle.sh --help wrote a file named --help"

# ---- 2. a clean Debian 12 root with the kit in it
mkdir -p "$CACHE"
exec 9>"$CACHE/lock"
flock 9
[ -f "$CACHE/bookworm-minbase.tar" ] || {
  mirror_host=${MIRROR#*://}; mirror_host=${mirror_host%%/*}
  timeout 20 bash -c "exec 3<>/dev/tcp/$mirror_host/80" 2>/dev/null || missing "cannot reach $mirror_host (debootstrap needs the network once)"
  say "debootstrap --variant=minbase bookworm (once; cached in $CACHE)"
}
minbase_root_tar "$CACHE" "$MIRROR" "$WORK/debootstrap.log" || fail "debootstrap failed (log above)"
flock -u 9
R=$WORK/root
mkdir -p "$R"
tar -C "$R" --numeric-owner -xf "$CACHE/bookworm-minbase.tar"
if chroot "$R" dpkg-query -W -f '${Package}\n' | grep -- '-dev$'; then fail "the clean root holds -dev packages (above)"; fi
# /proc as on any host: the loader resolves $ORIGIN (the kit's RPATH) through /proc/self/exe.
mount -t proc proc "$R/proc"
MOUNTS+=("$R/proc")
mkdir -p "$R/opt"
tar -C "$R/opt" -xJf "$KIT"
K=/opt/tunefarm-gpu-check

say "every binary of the kit resolves inside it or to the root's glibc"
bad=$(chroot "$R" /usr/bin/env -i /bin/sh -c "for p in $K/bin/*; do ldd \$p; done" |
      awk '/=>/ { print $1, $3 }' | sort -u | while read -r soname path; do
        path=$(realpath -m -s "$path")  # lexically: bin/../lib -> lib
        case $path in $K/lib/*) ;; /lib/x86_64-linux-gnu/* | /usr/lib/x86_64-linux-gnu/*)
          [[ "$soname" =~ ^(libc|libm|libpthread|libdl|librt|libresolv|ld-linux.*)\.so ]] || echo "$soname -> $path (outside the kit)" ;;
          *) echo "$soname -> $path" ;; esac
      done)
[ -z "$bad" ] || fail "libraries not resolved inside the kit: $bad"
chroot "$R" /usr/bin/env -i $K/bin/tunefarm --help >/dev/null || fail "tunefarm --help does not run in the clean root"

# ---- 3. the runner, with no driver
say "running the kit's runner in the clean root (no GPU, no driver)"
rc=0
chroot "$R" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root /bin/bash $K/gpu_check.sh --run $K --report /tmp/report \
  >"$WORK/run.log" 2>&1 || rc=$?
cat "$WORK/run.log"
[ "$rc" = 1 ] || fail "the runner exited $rc without a GPU (1 expected: the probe failed, everything else skipped)"
REPORT=$R/tmp/report
[ -s "$REPORT/gpu_check.md" ] && [ -s "$REPORT/gpu_check.json" ] || fail "no report in /tmp/report"
grep -q '"step": "probe", "status": "fail", "summary": "[^"]*no CUDA driver: libcuda.so.1 cannot be loaded' "$REPORT/gpu_check.json" ||
  fail "the probe does not say 'no CUDA driver: libcuda.so.1 cannot be loaded' (gpu_check.json above)"
for step in templates kernels build models farm latency pytorch tasks hostile; do
  grep -q "\"step\": \"$step\", \"status\": \"skip\", \"summary\": \"not run: no usable GPU (no CUDA driver" "$REPORT/gpu_check.json" ||
    fail "step $step is not reported skipped for the missing driver"
done
grep -q '"failed": 1,' "$REPORT/gpu_check.json" || fail "the JSON report does not count one failure"
grep -q '"step": "libraries"' "$REPORT/gpu_check.json" && fail "the runner found libraries missing from the kit"
grep -q '^== GPU check: 10 steps, 1 failed, 9 skipped' "$WORK/run.log" || fail "the summary line is not '10 steps, 1 failed, 9 skipped'"
say "kit $(( kit_bytes / 1000000 )) MB; the runner reported the missing driver cleanly"
