#!/usr/bin/env bash
# The main job, for now: build tunefarm and run the kernel benchmark on this machine (tunefarm's
# kernels with fallback configs and the best of K random configs, against oneDNN and the FMA peak).
# Later issues grow it into the tune -> compile -> run flow.
# Usage: scripts/main.sh [bench_kernels flags, e.g. --threads 2 --k 64 --json out.json]
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "${JOBS:-2}"
exec build/bin/bench_kernels "$@"
