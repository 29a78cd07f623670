# Sourced by scripts/bundle.sh and scripts/gpu_check.sh: one definition of how a relocatable
# tunefarm tree is built and checked.
#
#   bundle_configure BUILD        configure BUILD for relocatable programs: Release, LLVM linked
#                                 statically with only the X86/AArch64/ARM/NVPTX back ends
#                                 (TUNEFARM_STATIC_LLVM), RPATH $ORIGIN/../lib (TUNEFARM_BUNDLE_RPATH)
#   bundle_copy BUILD ROOT NAME.. copy BUILD/bin/NAME... stripped into ROOT/bin and every shared
#                                 library they need beyond glibc into ROOT/lib
#   bundle_check ROOT NAME...     every library of ROOT/bin/NAME... resolves inside ROOT (or is
#                                 glibc), with an empty environment; prints the offenders
#   bundle_pack DIR NAME OUT      DIR/NAME as OUT.tar.xz: one LZMA2 stream with a 192 MiB
#                                 dictionary, so the copies of LLVM inside each program (70 MB
#                                 apart) compress once (~3 min on 2 cores; 192 MiB to unpack).
#                                 TUNEFARM_XZ_PRESET (default 6): the rehearsal (test_gpu_kit.sh)
#                                 packs at 1, 5x faster and ~14% larger, so its size checks are
#                                 stricter than what a user's preset-6 pack must meet
#   bundle_finish WHAT DIR NAME OUT MAX NAME...
#                                 bundle_check, `tunefarm --help` with an empty environment, then
#                                 bundle_pack; refuses (nothing written) an archive over MAX bytes
# CCACHE_BASEDIR makes a second build directory reuse the first one's objects (the compile lines
# differ only in the build directory's own path).

BUNDLE_SRC=${BUNDLE_SRC:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$BUNDLE_SRC}

bundle_configure() {
  local build=$1
  # --gc-sections drops the LLVM code nothing calls (LLVM's archives are built per-function).
  cmake -S "$BUNDLE_SRC" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTUNEFARM_BUILD_BENCH=OFF \
    -DTUNEFARM_STATIC_LLVM=ON -DTUNEFARM_BUNDLE_RPATH=ON -DTUNEFARM_WERROR="${TUNEFARM_WERROR:-OFF}" \
    -DCMAKE_EXE_LINKER_FLAGS=-Wl,--gc-sections >/dev/null
}

# glibc and the dynamic loader come from the host (they must match its kernel interface).
bundle_is_glibc() { [[ "$1" =~ ^(libc|libm|libpthread|libdl|librt|libresolv|libutil|libanl|libnsl|ld-linux.*)\.so ]]; }

bundle_copy() {
  local build=$1 root=$2; shift 2
  mkdir -p "$root/bin" "$root/lib"
  local p soname path missing=0
  for p in "$@"; do
    [ -x "$build/bin/$p" ] || { echo "bundle: $build/bin/$p was not built" >&2; return 1; }
    strip --strip-unneeded -o "$root/bin/$p" "$build/bin/$p"
  done
  while read -r soname path; do
    if [ "$path" = "not" ]; then echo "bundle: $soname is not found on this machine" >&2; missing=1; continue; fi
    bundle_is_glibc "$soname" && continue
    [ -e "$root/lib/$soname" ] && continue
    cp -L "$path" "$root/lib/$soname"
    chmod u+w "$root/lib/$soname"
    strip --strip-unneeded "$root/lib/$soname" 2>/dev/null || true
  done < <(for p in "$@"; do ldd "$build/bin/$p"; done | awk '/=>/ {print $1, $3}' | sort -u)
  return "$missing"
}

bundle_check() {
  local root=$1; shift
  local p
  for p in "$@"; do env -i ldd "$root/bin/$p"; done | awk '/=>/ {print $1, $3}' | sort -u |
    while read -r soname path; do
      bundle_is_glibc "$soname" || [[ "$(realpath -m "$path")" == "$root/lib/"* ]] || echo "$soname -> $path"
    done
}

bundle_pack() {
  local dir=$1 name=$2 out=$3
  tar -C "$dir" -cf - "$name" | xz --lzma2=preset="${TUNEFARM_XZ_PRESET:-6}",dict=192MiB -T1 >"$out"
}

bundle_finish() {
  local what=$1 dir=$2 name=$3 out=$4 max=$5
  shift 5
  local root=$dir/$name unresolved bytes
  unresolved=$(bundle_check "$root" "$@")
  if [ -n "$unresolved" ]; then
    echo "$what: libraries resolved outside it:" >&2
    echo "$unresolved" >&2
    return 1
  fi
  env -i "$root/bin/tunefarm" --help >/dev/null || { echo "$what: tunefarm --help fails in an empty environment" >&2; return 1; }
  mkdir -p "$(dirname "$out")"
  echo "== $what: packing (one xz stream, preset ${TUNEFARM_XZ_PRESET:-6}; ~3 min at 6)"
  bundle_pack "$dir" "$name" "$out.tmp"
  bytes=$(stat -c %s "$out.tmp")
  echo "$what: $out: $(( bytes / 1000000 )) MB ($bytes bytes), $(ls "$root/lib" | wc -l) libraries," \
       "$(du -sm "$root" | cut -f1) MB unpacked"
  if [ "$bytes" -gt "$max" ]; then
    rm -f "$out.tmp"
    echo "$what: larger than $(( max / 1000000 )) MB" >&2
    return 1
  fi
  mv "$out.tmp" "$out"
}
