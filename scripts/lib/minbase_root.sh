# Sourced by scripts/test_packages.sh and scripts/test_gpu_kit.sh: one cached Debian 12 minbase root.
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
