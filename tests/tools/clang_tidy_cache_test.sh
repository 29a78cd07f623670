#!/usr/bin/env bash
# scripts/clang_tidy_cached.py on a one-file project built with ninja: a clean unit is cached and not
# checked again; a change to a header it includes (rebuilt or not) has it checked again; a finding
# fails every run and is never cached; once fixed, the unit is cached again.
# Usage: clang_tidy_cache_test.sh SOURCE_DIR
set -euo pipefail
src=$1
tidy=$(command -v clang-tidy-14 || command -v clang-tidy) || {
  echo "FAIL: clang-tidy is missing (scripts/setup.sh installs it)"
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/proj/build"
cd "$work/proj"
printf '%s\n' "Checks: '-*,modernize-use-nullptr'" "HeaderFilterRegex: '.*'" >.clang-tidy
echo 'inline int* First() { return nullptr; }' >a.h
printf '%s\n' '#include "a.h"' 'int* Get() { return First(); }' >a.cc
cat >build/build.ninja <<'EOF'
rule cxx
  command = g++ -MD -MF $out.d -c $in -o $out
  deps = gcc
  depfile = $out.d
build a.o: cxx ../a.cc
EOF
printf '[{"directory": "%s", "command": "g++ -c ../a.cc -o a.o", "file": "%s"}]\n' "$PWD/build" "$PWD/a.cc" \
  >build/compile_commands.json
ninja -C build >/dev/null

run() {
  TUNEFARM_TIDY_CACHE="$work/cache" python3 "$src/scripts/clang_tidy_cached.py" "$tidy" build 1 a.cc -- \
    --quiet --warnings-as-errors='*'
}
expect() {  # expect STATUS TEXT: the run's exit status and a line it prints
  local status=0 out
  out=$(run 2>&1) || status=$?
  if [[ $status != "$1" ]] || ! grep -qF -- "$2" <<<"$out"; then
    echo "FAIL: wanted exit $1 and '$2'; got exit $status:"
    echo "$out"
    exit 1
  fi
}

expect 0 "0 of 1 sources unchanged"  # first run: checked, clean, cached
expect 0 "1 of 1 sources unchanged"  # nothing changed: not checked
echo 'inline int* Second() { return 0; }' >>a.h  # a finding in the header, no rebuild
expect 1 "a.cc has findings"
expect 1 "0 of 1 sources unchanged"  # a finding is never cached
ninja -C build >/dev/null
expect 1 "modernize-use-nullptr"
sed -i 's/return 0;/return nullptr;/' a.h
expect 0 "0 of 1 sources unchanged"
expect 0 "1 of 1 sources unchanged"
echo "PASS: clean units cached, changed headers and findings checked every time"
