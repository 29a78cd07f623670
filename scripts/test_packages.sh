#!/usr/bin/env bash
# Proves tunefarm's Debian packages install into a clean Debian 12 root and work there:
#   1. lintian on every .deb: no errors (E:)
#   2. debootstrap --variant=minbase bookworm (cached), then `apt-get install` of the amd64
#      tunefarm, tunefarm-server and tunefarm-runtime from the .debs, dependencies from the archive
#   3. in that root: the user `tunefarm`, the units installed and not enabled (and clean under the
#      host's `systemd-analyze verify`), the /etc/default files as conffiles, man pages;
#      `tunefarm compile resnet-18`, `tunefarm run` and
#      `tunefarm-run` on the artifact; each unit's ExecStart (with its /etc/default file) run as
#      the tunefarm user: rpc_tracker, rpc_server registering with it, tuner-daemon
#   4. the C API from tunefarm-runtime (headers, static library, pkg-config file) runs that artifact
#   5. the arm64 tunefarm-server (dpkg-deb -x) under qemu-aarch64 registers with the root's
#      rpc_tracker; `tunefarm tracker status` there shows it
#   6. the maintainer scripts: a unit enabled by hand stays enabled over a reinstall; purge removes
#      the enable links and the /etc/default files, and keeps the records in /var/lib/tunefarm
# Usage:
#   scripts/test_packages.sh [DEB_DIR]     the .debs in DEB_DIR (default build-pkg/debs; made by
#                                          scripts/package.sh first when it holds none)
#   scripts/test_packages.sh --from-build BUILD [--arm64-build DIR]
#                                          package what BUILD (and DIR, a TUNEFARM_FARM_ONLY aarch64
#                                          build) already built with cpack, and test that (CTest)
# Environment: TUNEFARM_BOOTSTRAP_CACHE (default build-pkg/bootstrap-cache, with --from-build
# BUILD/packaging/bootstrap-cache: the debootstrapped root as a tarball, apt's lists and downloads;
# delete it to start afresh), TUNEFARM_DEBIAN_MIRROR (http://deb.debian.org/debian),
# TUNEFARM_REQUIRE_FIXTURES=1 (a missing prerequisite fails instead of skipping with exit 77),
# KEEP=1 (keep the work directory). Needs root (debootstrap, chroot, mounts) and the network.
set -euo pipefail
cd "$(dirname "$0")/.."
SRC=$PWD
START=$(date +%s)
source scripts/lib/minbase_root.sh  # also say, fail, missing
trap 'echo "test_packages.sh: FAIL: line $LINENO: $BASH_COMMAND" >&2' ERR

DEB_DIR="" FROM_BUILD="" ARM64_BUILD=""
while [ $# -gt 0 ]; do
  case $1 in
    --from-build) FROM_BUILD=$2; shift 2 ;;
    --arm64-build) ARM64_BUILD=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) fail "unknown option $1 (--help)" ;;
    *) DEB_DIR=$1; shift ;;
  esac
done
if [ -n "$FROM_BUILD" ]; then
  CACHE=${TUNEFARM_BOOTSTRAP_CACHE:-$FROM_BUILD/packaging/bootstrap-cache}
else
  CACHE=${TUNEFARM_BOOTSTRAP_CACHE:-$SRC/build-pkg/bootstrap-cache}
fi
MIRROR=${TUNEFARM_DEBIAN_MIRROR:-http://deb.debian.org/debian}
HOST_ARCH=$(dpkg --print-architecture)

# ---- prerequisites --------------------------------------------------------------------------
[ "$(id -u)" = 0 ] || missing "needs root (debootstrap, chroot and mounts)"
for tool in debootstrap lintian dpkg-deb chroot mount qemu-aarch64 cc; do
  command -v "$tool" >/dev/null || missing "$tool is not installed (scripts/setup.sh)"
done
mirror_host=${MIRROR#*://}; mirror_host=${mirror_host%%/*}
case $MIRROR in https://*) mirror_port=443 ;; *) mirror_port=80 ;; esac
timeout 20 bash -c "exec 3<>/dev/tcp/$mirror_host/$mirror_port" 2>/dev/null ||
  missing "cannot reach $mirror_host:$mirror_port (debootstrap and apt need the network)"

# ---- work directory and cleanup -------------------------------------------------------------
WORK=$(mktemp -d /tmp/tunefarm-debs.XXXXXX)
R=$WORK/root
MOUNTS=() PIDS=()
cleanup() {
  local rc=$?
  trap - ERR
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  local i
  for (( i=${#MOUNTS[@]}-1; i>=0; i-- )); do
    umount "${MOUNTS[i]}" 2>/dev/null || umount -l "${MOUNTS[i]}" 2>/dev/null || true
  done
  if grep -q " $WORK" /proc/mounts; then
    echo "test_packages.sh: still mounted under $WORK; not removing it" >&2
  elif [ "${KEEP:-0}" = 1 ]; then
    echo "test_packages.sh: kept $WORK"
  else
    rm -rf "$WORK"
  fi
  if [ "$rc" = 0 ]; then say "PASS ($(( $(date +%s) - START )) s)"; fi
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "test_packages.sh: interrupted" >&2; exit 130' INT TERM
mount_in() {  # mount_in TARGET MOUNT-ARGS...
  local target=$1; shift
  mount "$@" "$target"
  MOUNTS+=("$target")
}

# ---- the .debs ------------------------------------------------------------------------------
DEBS=$WORK/debs
mkdir -p "$DEBS"
if [ -n "$FROM_BUILD" ]; then
  # What the build directories already built (with Ninja, cpack builds nothing itself).
  cpack_in() {
    local dir=$1 components=$2 name=$3
    [ -f "$dir/CPackConfig.cmake" ] || fail "$dir has no CPackConfig.cmake (configure it with cmake/Packaging.cmake)"
    say "cpack in $dir ($components)"
    (cd "$dir" && cpack -G DEB -B "$WORK/cpack-$name" -D "CPACK_COMPONENTS_ALL=$components" \
       >"$WORK/cpack-$name.log" 2>&1) || { cat "$WORK/cpack-$name.log" >&2; fail "cpack in $dir failed"; }
    cp "$WORK/cpack-$name"/*.deb "$DEBS/"
  }
  cpack_in "$FROM_BUILD" "workstation;server;runtime" host
  if [ -n "$ARM64_BUILD" ]; then
    [ -x "$ARM64_BUILD/bin/rpc_server" ] || missing "no cross-built aarch64 rpc_server in $ARM64_BUILD/bin (g++-aarch64-linux-gnu, libgrpc++-dev:arm64)"
    cpack_in "$ARM64_BUILD" "server" arm64
  fi
else
  DEB_DIR=${DEB_DIR:-$SRC/build-pkg/debs}
  if ! ls "$DEB_DIR"/tunefarm_*_"$HOST_ARCH".deb >/dev/null 2>&1; then
    say "no packages in $DEB_DIR: scripts/package.sh"
    "$SRC/scripts/package.sh" "$DEB_DIR"
  fi
  cp "$DEB_DIR"/tunefarm*.deb "$DEBS/"
fi
one_deb() {  # one_deb PACKAGE ARCH: the path of its .deb (exactly one)
  local found=("$DEBS/$1"_*_"$2".deb)
  [ -f "${found[0]}" ] || fail "no $1 .deb for $2 in $DEBS"
  [ ${#found[@]} = 1 ] || fail "several $1 .debs for $2 in $DEBS: ${found[*]}"
  echo "${found[0]}"
}
WS_DEB=$(one_deb tunefarm "$HOST_ARCH")
SERVER_DEB=$(one_deb tunefarm-server "$HOST_ARCH")
RUNTIME_DEB=$(one_deb tunefarm-runtime "$HOST_ARCH")
ARM64_DEB=""
if [ -n "$FROM_BUILD" ] && [ -z "$ARM64_BUILD" ]; then
  say "no --arm64-build: the arm64 tunefarm-server is not checked"
else
  ARM64_DEB=$(one_deb tunefarm-server arm64)
fi
for deb in "$DEBS"/*.deb; do
  printf '   %-46s %7s KiB  installed %6s KiB  Depends: %s\n' "$(basename "$deb")" "$(( $(stat -c %s "$deb") / 1024 ))" \
    "$(dpkg-deb -f "$deb" Installed-Size)" "$(dpkg-deb -f "$deb" Depends)"
done

# ---- 1. lintian -----------------------------------------------------------------------------
say "lintian"
lintian_failed=0
for deb in "$DEBS"/*.deb; do
  out=$(lintian --allow-root --tag-display-limit 0 "$deb" 2>&1) || true
  [ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/   /'
  if echo "$out" | grep -q '^E: '; then lintian_failed=1; fi
done
[ "$lintian_failed" = 0 ] || fail "lintian reported errors (E:) above"

# ---- 2. a clean Debian 12 root --------------------------------------------------------------
mkdir -p "$CACHE/apt-archives/partial" "$CACHE/apt-lists/partial"
exec 9>"$CACHE/lock"
flock 9  # one run at a time uses the cache
[ -f "$CACHE/bookworm-minbase.tar" ] || say "debootstrap --variant=minbase bookworm (once; cached in $CACHE)"
minbase_root_tar "$CACHE" "$MIRROR" "$WORK/debootstrap.log" || fail "debootstrap failed (log above)"
say "unpacking the cached root"
mkdir -p "$R"
tar -C "$R" --numeric-owner -xf "$CACHE/bookworm-minbase.tar"
mount_in "$R/proc" -t proc proc
mount_in "$R/dev" --bind /dev
mount_in "$R/dev/pts" --bind /dev/pts
mount_in "$R/var/cache/apt/archives" --bind "$CACHE/apt-archives"
mount_in "$R/var/lib/apt/lists" --bind "$CACHE/apt-lists"
cp -L /etc/resolv.conf "$R/etc/resolv.conf"
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d"  # no service starts in a chroot
chmod 0755 "$R/usr/sbin/policy-rc.d"
echo "deb $MIRROR bookworm main" >"$R/etc/apt/sources.list"
echo "deb $MIRROR bookworm-updates main" >>"$R/etc/apt/sources.list"
echo "deb http://security.debian.org/debian-security bookworm-security main" >>"$R/etc/apt/sources.list"
in_root() {  # in_root CMD...: CMD in the root as root, with a clean environment
  chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
say "apt-get update in the root"
for attempt in 1 2 3; do
  if in_root apt-get -q update >"$WORK/apt-update.log" 2>&1; then break; fi
  [ "$attempt" = 3 ] && { cat "$WORK/apt-update.log" >&2; fail "apt-get update in the root failed 3 times"; }
  sleep 10
done

mkdir -p "$R/tmp/debs"
cp "$WS_DEB" "$SERVER_DEB" "$RUNTIME_DEB" "$R/tmp/debs/"
say "apt-get install ./$(basename "$WS_DEB") ./$(basename "$SERVER_DEB") ./$(basename "$RUNTIME_DEB")"
in_root apt-get install -y -q -o Dpkg::Options::=--force-unsafe-io \
  "/tmp/debs/$(basename "$WS_DEB")" "/tmp/debs/$(basename "$SERVER_DEB")" "/tmp/debs/$(basename "$RUNTIME_DEB")" \
  >"$WORK/apt-install.log" 2>&1 || { tail -40 "$WORK/apt-install.log" >&2; fail "apt-get install of the packages failed"; }
grep -E '^(Need to get|After this operation|[0-9]+ upgraded)' "$WORK/apt-install.log" | sed 's/^/   /'

# ---- 3. the installed system ----------------------------------------------------------------
say "checks in the root"
# shellcheck disable=SC2016 # dpkg-query's own ${field} syntax
STATUS_FMT='${Status}' CONFFILES_FMT='${Conffiles}\n'
for p in tunefarm tunefarm-server tunefarm-runtime; do
  [ "$(in_root dpkg-query -W -f="$STATUS_FMT" "$p")" = "install ok installed" ] || fail "$p is not installed"
done
passwd_line=$(in_root getent passwd tunefarm) || fail "no user tunefarm in the root (postinst)"
IFS=: read -r _ _ TF_UID TF_GID _ TF_HOME TF_SHELL <<<"$passwd_line"
[ "$TF_UID" -lt 1000 ] || fail "tunefarm is not a system user (uid $TF_UID)"
[ "$TF_HOME" = /var/lib/tunefarm ] || fail "tunefarm's home is $TF_HOME, not /var/lib/tunefarm"
case $TF_SHELL in */nologin|/bin/false) ;; *) fail "tunefarm has a login shell ($TF_SHELL)" ;; esac
in_root getent group tunefarm >/dev/null || fail "no group tunefarm"
[ "$(stat -c '%u:%g %a' "$R/etc/tunefarm")" = "0:$TF_GID 750" ] || fail "/etc/tunefarm is not root:tunefarm 0750"
echo "   user tunefarm: uid $TF_UID, home $TF_HOME, shell $TF_SHELL; /etc/tunefarm root:tunefarm 0750"

declare -A UNIT_PACKAGE=([rpc_tracker]=tunefarm [tuner-daemon]=tunefarm [rpc_server]=tunefarm-server)
declare -A UNIT_DEFAULT=([rpc_tracker]=tunefarm-rpc-tracker [tuner-daemon]=tunefarm-tuner-daemon [rpc_server]=tunefarm-rpc-server)
for unit in rpc_tracker tuner-daemon rpc_server; do
  f=$R/lib/systemd/system/$unit.service
  [ -f "$f" ] || fail "$unit.service is not installed in /lib/systemd/system"
  for line in "User=tunefarm" "EnvironmentFile=/etc/default/${UNIT_DEFAULT[$unit]}" "NoNewPrivileges=yes" "PrivateTmp=yes" \
              "ProtectSystem=strict" "ProtectHome=yes" "ExecStart=/usr/bin/$unit "; do
    grep -q "^$line" "$f" || fail "$unit.service lacks $line"
  done
  [ -f "$R/etc/default/${UNIT_DEFAULT[$unit]}" ] || fail "/etc/default/${UNIT_DEFAULT[$unit]} is missing"
  in_root dpkg-query -W -f="$CONFFILES_FMT" "${UNIT_PACKAGE[$unit]}" | grep -q " /etc/default/${UNIT_DEFAULT[$unit]} " ||
    fail "/etc/default/${UNIT_DEFAULT[$unit]} is not a conffile of ${UNIT_PACKAGE[$unit]}"
  # Not enabled: no symlink to the unit anywhere under /etc/systemd/system (systemd does not run in
  # a chroot, so this is what `systemctl is-enabled` would read).
  links=$(find "$R/etc/systemd/system" -name "$unit.service" 2>/dev/null || true)
  [ -z "$links" ] || fail "$unit.service is enabled after install: $links"
done
grep -q '^StateDirectory=tunefarm' "$R/lib/systemd/system/tuner-daemon.service" || fail "tuner-daemon.service lacks StateDirectory=tunefarm"
# The host's systemd-analyze checks every directive (the root has no systemd): a copy of each unit
# with ExecStart pointing into the root, so that its program exists; any message is a failure.
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$WORK/units"
  for unit in rpc_tracker tuner-daemon rpc_server; do
    sed "s#^ExecStart=/usr/bin/#ExecStart=$R/usr/bin/#" "$R/lib/systemd/system/$unit.service" >"$WORK/units/$unit.service"
    out=$(systemd-analyze verify --man=no "$WORK/units/$unit.service" 2>&1) || true
    [ -z "$out" ] || fail "systemd-analyze verify $unit.service: $out"
    echo "   $unit.service: systemd-analyze verify clean, $(systemd-analyze security --offline=true --root="$R" "$unit.service" 2>&1 |
      sed -n 's/^.*Overall exposure level for [^:]*: //p')"
  done
fi
echo "   units installed, hardened, not enabled; /etc/default files are conffiles"
for page in tunefarm tuner-daemon rpc_tracker rpc_server tunefarm-measure-child tunefarm-run; do
  [ -f "$R/usr/share/man/man1/$page.1.gz" ] || fail "no man page for $page"
done
for prog in tunefarm tuner-daemon rpc_tracker rpc_server tunefarm-run; do
  in_root "$prog" --help >"$WORK/help.txt" 2>&1 || { cat "$WORK/help.txt" >&2; fail "$prog --help failed in the root"; }
done
[ -x "$R/usr/bin/tunefarm-measure-child" ] || fail "tunefarm-measure-child is not beside rpc_server in /usr/bin"
echo "   man pages present; --help of every program works"

say "tunefarm compile resnet-18 (in the root)"
in_root tunefarm compile resnet-18 -o /tmp/r18.tfa >"$WORK/compile.log" 2>&1 || {
  cat "$WORK/compile.log" >&2; fail "tunefarm compile resnet-18 failed in the root"; }
tail -3 "$WORK/compile.log" | sed 's/^/   /'
in_root tunefarm run /tmp/r18.tfa --repeat 2 >"$WORK/run.log" 2>&1 || { cat "$WORK/run.log" >&2; fail "tunefarm run failed in the root"; }
sed 's/^/   /' "$WORK/run.log" | tail -4
in_root tunefarm-run /tmp/r18.tfa --repeat 0 --output /tmp/r18_out.npy >"$WORK/run2.log" 2>&1 || {
  cat "$WORK/run2.log" >&2; fail "tunefarm-run failed in the root"; }
[ -s "$R/tmp/r18_out.npy" ] || fail "tunefarm-run wrote no output"
echo "   tunefarm-run (tunefarm-runtime) ran the artifact too"

# Each unit's ExecStart, with its /etc/default file, as the tunefarm user (the settings systemd
# would pass; the listen addresses on port 0 and the tracker the one started here).
head -c 24 /dev/urandom | base64 >"$R/etc/tunefarm/token"
chown "0:$TF_GID" "$R/etc/tunefarm/token"
chmod 0640 "$R/etc/tunefarm/token"
unit_argv() {  # unit_argv UNIT NAME=VALUE...: ExecStart's words, ${X} one word, $X split
  local unit=$1; shift
  local -A env=()
  while IFS= read -r line; do
    case $line in ''|'#'*) continue ;; esac
    env[${line%%=*}]=${line#*=}
  done <"$R/etc/default/${UNIT_DEFAULT[$unit]}"
  for kv in "$@"; do env[${kv%%=*}]=${kv#*=}; done
  local exec_start
  exec_start=$(sed -n 's/^ExecStart=//p' "$R/lib/systemd/system/$unit.service")
  ARGV=()
  for word in $exec_start; do
    if [[ $word =~ ^\$\{([A-Z_]+)\}$ ]]; then ARGV+=("${env[${BASH_REMATCH[1]}]-}")
    elif [[ $word =~ ^\$([A-Z_]+)$ ]]; then for w in ${env[${BASH_REMATCH[1]}]-}; do ARGV+=("$w"); done
    else ARGV+=("$word"); fi
  done
}
start_as_tunefarm() {  # start_as_tunefarm LOG CMD...: in the root, as tunefarm, in the background
  local log=$1; shift
  timeout 300 chroot --userspec="$TF_UID:$TF_GID" "$R" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/var/lib/tunefarm \
    LC_ALL=C.UTF-8 "$@" >"$log" 2>&1 &
  PIDS+=($!)
}
wait_for() {  # wait_for LOG PATTERN SECONDS: the first matching line
  local end=$(( $(date +%s) + $3 ))
  while [ "$(date +%s)" -lt "$end" ]; do
    if grep -m1 -E "$2" "$1" 2>/dev/null; then return 0; fi
    sleep 0.5
  done
  echo "--- $1:" >&2; cat "$1" >&2
  return 1
}
say "the units' command lines, as the tunefarm user"
unit_argv rpc_tracker LISTEN=127.0.0.1:0
start_as_tunefarm "$WORK/tracker.log" "${ARGV[@]}"
line=$(wait_for "$WORK/tracker.log" "listening on" 30) || fail "rpc_tracker from rpc_tracker.service did not start"
TRACKER=${line##* }
echo "   rpc_tracker.service: ${ARGV[*]} -> $TRACKER"
mkdir -p "$R/var/lib/tunefarm"  # StateDirectory= would make it
chown "$TF_UID:$TF_GID" "$R/var/lib/tunefarm"
unit_argv tuner-daemon LISTEN=127.0.0.1:0 "TRACKER=$TRACKER"
start_as_tunefarm "$WORK/daemon.log" "${ARGV[@]}"
wait_for "$WORK/daemon.log" "listening on" 30 >/dev/null || fail "tuner-daemon from tuner-daemon.service did not start"
[ -f "$R/var/lib/tunefarm/tunefarm.db" ] || fail "tuner-daemon made no records database in /var/lib/tunefarm"
echo "   tuner-daemon.service: ${ARGV[*]}"
unit_argv tuner-daemon LISTEN=127.0.0.1:0 TRACKER= KEY= RECORDS=/var/lib/tunefarm/local.db
start_as_tunefarm "$WORK/daemon-local.log" "${ARGV[@]}"
wait_for "$WORK/daemon-local.log" "listening on" 30 >/dev/null || fail "tuner-daemon with TRACKER= KEY= (measure locally) did not start"
echo "   tuner-daemon.service with TRACKER= KEY= (measure on this machine) starts too"
unit_argv rpc_server LISTEN=127.0.0.1:0 "TRACKER=$TRACKER" KEY=pkg-x86
start_as_tunefarm "$WORK/server.log" "${ARGV[@]}"
wait_for "$WORK/server.log" "registered with" 60 >/dev/null || fail "rpc_server from rpc_server.service did not register"
echo "   rpc_server.service: ${ARGV[*]}"

# ---- 4. the C API from tunefarm-runtime ------------------------------------------------------
say "the C API of tunefarm-runtime (headers, libtunefarm_runtime.a, pkg-config)"
mkdir -p "$WORK/rt"
dpkg-deb -x "$RUNTIME_DEB" "$WORK/rt"
cat >"$WORK/c_api_check.c" <<'EOF'
#include <stdio.h>
#include "tunefarm/runtime/c_api.h"
int main(int argc, char** argv) {
  char* error = NULL;
  TunefarmModel* m = tunefarm_model_load(argv[1], &error);
  if (!m) { fprintf(stderr, "load: %s\n", error); return 1; }
  if (tunefarm_model_run(m, &error) != 0) { fprintf(stderr, "run: %s\n", error); return 1; }
  size_t bytes = 0;
  if (!tunefarm_model_output(m, 0, &bytes) || bytes == 0) { fprintf(stderr, "no output\n"); return 1; }
  printf("%d input(s), output 0 '%s': %zu bytes\n", tunefarm_model_num_inputs(m), tunefarm_model_output_name(m, 0), bytes);
  tunefarm_model_free(m);
  (void)argc;
  return 0;
}
EOF
pc_dir=$(dirname "$(find "$WORK/rt" -name tunefarm-runtime.pc)")
flags=$(PKG_CONFIG_PATH=$pc_dir PKG_CONFIG_SYSROOT_DIR=$WORK/rt pkg-config --cflags --libs tunefarm-runtime) ||
  fail "pkg-config tunefarm-runtime failed"
# shellcheck disable=SC2086
cc -std=c99 -Wall -Werror -o "$WORK/c_api_check" "$WORK/c_api_check.c" $flags || fail "a C program does not build against tunefarm-runtime"
"$WORK/c_api_check" "$R/tmp/r18.tfa" | sed 's/^/   /' || fail "the C API did not run resnet-18"

# ---- 5. the arm64 tunefarm-server under qemu ------------------------------------------------
if [ -n "$ARM64_DEB" ]; then
  say "arm64 tunefarm-server under qemu-aarch64, registering with the root's rpc_tracker"
  mkdir -p "$WORK/arm64" "$WORK/arm64-tmp"
  dpkg-deb -x "$ARM64_DEB" "$WORK/arm64"
  file -b "$WORK/arm64/usr/bin/rpc_server" | grep -q "ARM aarch64" || fail "the arm64 rpc_server is not an aarch64 program"
  [ -f "$WORK/arm64/usr/share/man/man1/rpc_server.1.gz" ] || fail "the arm64 package has no man page for rpc_server"
  # Its Depends must be Debian's arm64 packages, all installable here (multiarch, scripts/setup.sh).
  apt-get -s -q install "$ARM64_DEB" >"$WORK/arm64-deps.log" 2>&1 || {
    cat "$WORK/arm64-deps.log" >&2; fail "the arm64 tunefarm-server's dependencies do not resolve (dpkg --add-architecture arm64?)"; }
  # Multiarch programs run under plain qemu-aarch64: libc6:arm64 provides the loader (with
  # `-L /usr/aarch64-linux-gnu` the cross toolchain's glibc would mix with it; see
  # cmake/toolchains/aarch64-linux-gnu-multiarch.cmake).
  cp "$R/etc/tunefarm/token" "$WORK/token"
  timeout 300 qemu-aarch64 "$WORK/arm64/usr/bin/rpc_server" --tracker "$TRACKER" --key pkg-rasp4b --listen 127.0.0.1:0 \
    --token-file "$WORK/token" --tmp "$WORK/arm64-tmp" --child-launcher qemu-aarch64 >"$WORK/arm64.log" 2>&1 &
  PIDS+=($!)
  wait_for "$WORK/arm64.log" "registered with" 120 | sed 's/^/   /' || fail "the arm64 rpc_server did not register with $TRACKER"
  in_root tunefarm tracker status --tracker "$TRACKER" --token-file /etc/tunefarm/token >"$WORK/status.txt" 2>&1 || {
    cat "$WORK/status.txt" >&2; fail "tunefarm tracker status failed"; }
  sed 's/^/   /' "$WORK/status.txt"
  grep -q "pkg-rasp4b" "$WORK/status.txt" || fail "tunefarm tracker status does not list the arm64 server (key pkg-rasp4b)"
  grep "pkg-rasp4b" "$WORK/status.txt" | grep -q aarch64 || grep -q aarch64 "$WORK/status.txt" ||
    fail "tunefarm tracker status does not show the arm64 server as aarch64"
  grep -q "pkg-x86" "$WORK/status.txt" || fail "tunefarm tracker status does not list the x86 server (key pkg-x86)"
fi

# ---- 6. the maintainer scripts: an administrator's enable survives a reinstall, purge cleans up -
say "maintainer scripts: enable by hand, reinstall, purge"
for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
PIDS=()
# What `systemctl enable rpc_server` does (WantedBy=multi-user.target); no systemd in a chroot.
link=$R/etc/systemd/system/multi-user.target.wants/rpc_server.service
mkdir -p "$(dirname "$link")"
ln -s /lib/systemd/system/rpc_server.service "$link"
in_root dpkg -i "/tmp/debs/$(basename "$SERVER_DEB")" >"$WORK/reinstall.log" 2>&1 || {
  cat "$WORK/reinstall.log" >&2; fail "reinstalling tunefarm-server failed"; }
[ -L "$link" ] || fail "reinstalling tunefarm-server dropped the administrator's enable of rpc_server.service"
in_root apt-get purge -y -q tunefarm tunefarm-server tunefarm-runtime >"$WORK/purge.log" 2>&1 || {
  cat "$WORK/purge.log" >&2; fail "apt-get purge of the packages failed"; }
left=$(find "$R/etc/systemd/system" \( -name 'rpc_server.service' -o -name 'rpc_tracker.service' -o -name 'tuner-daemon.service' \) 2>/dev/null || true)
[ -z "$left" ] || fail "links to the units are left after purge: $left"
for f in /etc/default/tunefarm-rpc-server /etc/default/tunefarm-rpc-tracker /etc/default/tunefarm-tuner-daemon \
         /usr/bin/rpc_server /lib/systemd/system/rpc_server.service; do
  [ ! -e "$R$f" ] || fail "$f is left after purge"
done
[ -f "$R/var/lib/tunefarm/tunefarm.db" ] || fail "purge deleted the tuner-daemon's records database"
grep -q "keeping /var/lib/tunefarm" "$WORK/purge.log" || fail "purge did not say that it keeps /var/lib/tunefarm"
echo "   an enabled unit stays enabled over a reinstall; purge removes links and /etc/default files, keeps the records"
