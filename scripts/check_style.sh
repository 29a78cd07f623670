#!/usr/bin/env bash
# The style gates, as CI runs them (scripts/test.sh runs this after the release build):
#   1. clang-format: every tracked C++ file is as the committed .clang-format writes it
#      (clang-format --dry-run -Werror).
#      (Lines over 120 columns that clang-format leaves alone, such as long string literals, are
#      Walls.NoLineIsOver120Columns's.)
#   2. clang-tidy with the committed .clang-tidy on the project's sources (every .cc of compiler,
#      runtime, tuner, tracker, rpc_server, service and tools in the build's compile_commands.json),
#      with clang's thread-safety analysis on (-Wthread-safety: the GUARDED_BY/REQUIRES annotations
#      of runtime/include/tunefarm/runtime/mutex.h), every finding an error. Clean results are cached
#      by the hash of everything the result depends on (scripts/clang_tidy_cached.py), as ccache
#      caches objects: an unchanged source is not checked twice.
# Usage: scripts/check_style.sh [--format-only] [BUILD_DIR]   (BUILD_DIR default: build, configured
#        and built: clang-tidy reads its compile_commands.json and generated protobuf headers)
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-2}
format_only=0
if [[ ${1:-} == --format-only ]]; then
  format_only=1
  shift
fi
build=${1:-build}

# Debian 12's clang 14: another version formats some constructs differently.
pick() { for c in "$@"; do if command -v "$c" >/dev/null; then echo "$c"; return; fi; done; }
clang_format=$(pick clang-format-14 clang-format)
clang_tidy=$(pick clang-tidy-14 clang-tidy)
[[ -n $clang_format ]] || { echo "check_style: clang-format is missing (scripts/setup.sh installs it)" >&2; exit 1; }

mapfile -t cxx < <(git ls-files '*.cc' '*.h' '*.cpp' '*.hpp')
echo "check_style: $clang_format on ${#cxx[@]} files"
if ! printf '%s\0' "${cxx[@]}" | xargs -0 -P "$JOBS" -n 32 "$clang_format" --dry-run -Werror; then
  echo "check_style: files above differ from .clang-format's style; fix with: clang-format -i FILE" >&2
  exit 1
fi
echo "check_style: formatted"
[[ $format_only == 1 ]] && exit 0

[[ -n $clang_tidy ]] || { echo "check_style: clang-tidy is missing (scripts/setup.sh installs it)" >&2; exit 1; }
[[ -f $build/compile_commands.json ]] || {
  echo "check_style: $build/compile_commands.json is missing: configure and build first (scripts/test.sh)" >&2
  exit 1
}
mapfile -t sources < <(python3 - "$build/compile_commands.json" "$PWD" <<'PY'
import json, os, sys
root = sys.argv[2] + os.sep
components = {"compiler", "runtime", "tuner", "tracker", "rpc_server", "service", "tools"}
files = {e["file"] for e in json.load(open(sys.argv[1]))}
for f in sorted(files):
    rel = f[len(root):] if f.startswith(root) else None
    if rel and rel.endswith(".cc") and rel.split(os.sep)[0] in components:
        print(rel)
PY
)
echo "check_style: $clang_tidy on ${#sources[@]} sources ($JOBS at a time)"
# A source whose every input (clang-tidy, .clang-tidy, its compile command, the content of each file
# it reads as the build recorded them) is as in an earlier clean run is not checked again
# (scripts/clang_tidy_cached.py; a finding is never cached).
if ! python3 scripts/clang_tidy_cached.py "$clang_tidy" "$build" "$JOBS" "${sources[@]}" -- --quiet \
  --warnings-as-errors='*' --extra-arg=-Wthread-safety --extra-arg=-Wno-unknown-warning-option; then
  echo "check_style: clang-tidy findings above (.clang-tidy; thread safety: runtime/include/tunefarm/runtime/mutex.h)" >&2
  exit 1
fi
echo "check_style: clean"
