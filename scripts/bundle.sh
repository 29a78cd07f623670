#!/usr/bin/env bash
# Writes a relocatable tunefarm bundle: the workstation and server programs and every shared library
# they need beyond glibc, laid out as bin/ and lib/ with an RPATH of $ORIGIN/../lib, so tunefarm runs
# on a host that has none of Debian's packages (a GPU host with only a driver, a board).
#   scripts/bundle.sh [OUT.tar.xz]      (default: build-bundle/tunefarm-bundle.tar.xz)
# Then: tar xf tunefarm-bundle.tar.xz && tunefarm/bin/tunefarm --help
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
BUILD=build-bundle
OUT=${1:-$BUILD/tunefarm-bundle.tar.xz}
MAX_BYTES=$((55 * 1000 * 1000))
PROGRAMS=(tunefarm tunefarm-run tunefarm-measure-child rpc_tracker rpc_server tuner-daemon)

echo "== bundle: building ${PROGRAMS[*]} with RPATH \$ORIGIN/../lib"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUNEFARM_BUILD_TESTS=OFF -DTUNEFARM_BUILD_BENCH=OFF \
  -DTUNEFARM_BUNDLE_RPATH=ON >/dev/null
cmake --build "$BUILD" -j "$JOBS" --target "${PROGRAMS[@]}"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root="$stage/tunefarm"
mkdir -p "$root/bin" "$root/lib"
for p in "${PROGRAMS[@]}"; do cp "$BUILD/bin/$p" "$root/bin/"; done
cp LICENSE* "$root/" 2>/dev/null || true

# glibc and the dynamic loader come from the host (they must match its kernel interface).
is_glibc() { [[ "$1" =~ ^(libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|ld-linux.*)\.so ]]; }
missing=0
while read -r soname path; do
  if [ "$path" = "not" ]; then echo "bundle: $soname is not found on this machine" >&2; missing=1; continue; fi
  is_glibc "$soname" && continue
  cp -L "$path" "$root/lib/$soname"
done < <(for p in "${PROGRAMS[@]}"; do ldd "$BUILD/bin/$p"; done | awk '/=>/ {print $1, $3}' | sort -u)
[ "$missing" = 0 ] || exit 1

# Check: every non-glibc library resolves inside the bundle, with a clean environment.
unresolved=$(for p in "${PROGRAMS[@]}"; do env -i ldd "$root/bin/$p"; done | awk '/=>/ {print $1, $3}' | sort -u |
  while read -r soname path; do
    is_glibc "$soname" || [[ "$(realpath -m "$path")" == "$root/lib/"* ]] || echo "$soname -> $path"
  done)
if [ -n "$unresolved" ]; then
  echo "bundle: libraries resolved outside the bundle:" >&2
  echo "$unresolved" >&2
  exit 1
fi
env -i "$root/bin/tunefarm" --help >/dev/null

mkdir -p "$(dirname "$OUT")"
XZ_OPT="-9 -T$JOBS" tar -C "$stage" -cJf "$OUT" tunefarm
bytes=$(stat -c %s "$OUT")
echo "bundle: $OUT: $(( bytes / 1000000 )) MB, $(ls "$root/lib" | wc -l) libraries, $(du -sm "$root" | cut -f1) MB unpacked"
if [ "$bytes" -gt "$MAX_BYTES" ]; then
  echo "bundle: larger than $(( MAX_BYTES / 1000000 )) MB" >&2
  exit 1
fi
