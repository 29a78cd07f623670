# Sourced by scripts/test_packages.sh and scripts/test_gpu_kit.sh: one cached Debian 12 minbase root,
# and the way those clean-root tests report.
#
#   say MSG / fail MSG / missing MSG   progress with the seconds since START; a failure (exit 1);
#                                      a missing prerequisite: skip (exit 77), or fail under
#                                      TUNEFARM_REQUIRE_FIXTURES=1. Messages carry $0's name.
#
#   minbase_root_tar CACHE MIRROR LOG   makes sure CACHE/bookworm-minbase.tar holds a debootstrapped
#                                       `--variant=minbase bookworm` root (made once, ~1.5 min, then
#                                       reused by every test that needs a clean root); returns 1 with
#                                       the log's tail on stderr when debootstrap fails
# The caller holds the cache's lock (flock on CACHE/lock) around it and around its own use of CACHE.

minbase_root_tar() {
  local cache=$1 mirror=$2 log=$3
  [ -f "$cache/bookworm-minbase.tar" ] && return 0
  rm -rf "$cache/root.tmp"
  if ! debootstrap --variant=minbase bookworm "$cache/root.tmp" "$mirror" >"$log" 2>&1; then
    tail -30 "$log" >&2
    return 1
  fi
  rm -rf "$cache/root.tmp/var/cache/apt/archives/"*.deb
  tar -C "$cache/root.tmp" --numeric-owner -cf "$cache/bookworm-minbase.tar.new" .
  mv "$cache/bookworm-minbase.tar.new" "$cache/bookworm-minbase.tar"
  rm -rf "$cache/root.tmp"
}

START=${START:-$(date +%s)}
say() { echo "== ${0##*/} [$(( $(date +%s) - START ))s]: $*"; }
fail() { echo "${0##*/}: FAIL: $*" >&2; exit 1; }
missing() {
  if [ "${TUNEFARM_REQUIRE_FIXTURES:-0}" = 1 ]; then fail "missing prerequisite (TUNEFARM_REQUIRE_FIXTURES=1): $*"; fi
  echo "${0##*/}: SKIP: $*" >&2
  exit 77
}
