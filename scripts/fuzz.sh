#!/usr/bin/env bash
# Coverage-guided fuzzing of the parsers of outside bytes (tests/fuzz/README.md). Builds the
# libFuzzer targets with clang and ASan+UBSan in build-fuzz/ (every library they link carries
# coverage), then runs each from its seeds for RUNS executions with a 1 s limit per input and a
# 4 GiB memory limit. A crash, leak, sanitizer report or timeout stops that target with libFuzzer's
# report and the failing input saved in fuzz-out/; the script then exits non-zero.
#
#   scripts/fuzz.sh [--runs N] [--jobs J] [TARGET ...]     (default: every target, 1,000,000 runs, J=2)
#
# Prints one line per target: executions, seconds, coverage (libFuzzer's "cov"), peak memory.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=1000000
jobs=2
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "scripts/fuzz.sh: unknown flag $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(onnx artifact records_line records_db target kernel_metadata measurement http_request)

command -v clang++ > /dev/null || { echo "scripts/fuzz.sh: clang++ is missing (apt install clang)" >&2; exit 1; }
if [ ! -f build-fuzz/build.ninja ]; then
  cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DTUNEFARM_SANITIZE=ON -DTUNEFARM_LIBFUZZER=ON -DTUNEFARM_BUILD_BENCH=OFF -DTUNEFARM_BUILD_TESTS=ON > /dev/null
fi
build_targets=()
for t in "${targets[@]}"; do build_targets+=("${t}_fuzz" "${t}_fuzz_smoke"); done
cmake --build build-fuzz -j"$jobs" --target "${build_targets[@]}"

mkdir -p fuzz-out
run_one() {
  local t="$1" corpus="fuzz-out/corpus/$1" log="fuzz-out/$1.log"
  rm -rf "$corpus" && mkdir -p "$corpus"
  build-fuzz/bin/"${t}"_fuzz_smoke --write-seeds "$corpus" > /dev/null
  # Leaks are checked at exit (detect_leaks) and per input where libFuzzer can (-detect_leaks=1).
  if build-fuzz/bin/"${t}"_fuzz "$corpus" -runs="$runs" -timeout=1 -rss_limit_mb=4096 -detect_leaks=1 \
       -print_final_stats=1 -artifact_prefix="fuzz-out/${t}-" > "$log" 2>&1; then
    local done cov rss
    done=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    rss=$(grep -o 'stat::peak_rss_mb:[ ]*[0-9]*' "$log" | grep -o '[0-9]*$')
    echo "fuzz $t: ok, ${done#Done }s, ${cov}, peak ${rss} MB"
  else
    echo "fuzz $t: FAILED (libFuzzer's report: $log)"
    return 1
  fi
}
status=0
pids=()
names=()
for t in "${targets[@]}"; do
  run_one "$t" &
  pids+=($!)
  names+=("$t")
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
