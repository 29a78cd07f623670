#!/usr/bin/env bash
# The main job: the tutorial flow end to end on this machine.
#   1. build tunefarm (Release),
#   2. start a local farm on loopback: rpc_tracker + one rpc_server (key x86-local) as children,
#   3. tune every task of the model through the farm for a time budget (gradient task scheduler),
#   4. compile the model untuned (fallback configs) and tuned (best records),
#   5. run both interleaved and print untuned vs tuned latency, the speedup and the records DB.
# Running it again resumes: the records database keeps every trial, so more time means more trials.
#
# Usage: scripts/main.sh [--model resnet-18|PATH.onnx] [--minutes 4] [--threads 1] [--workdir DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

MODEL=resnet-18
MINUTES=4
THREADS=1
WORKDIR=$ROOT/build/main-job
while [ $# -gt 0 ]; do
  case "$1" in
    --model) MODEL=$2; shift 2 ;;
    --minutes) MINUTES=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --workdir) WORKDIR=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
    *) echo "main.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$MINUTES" in ''|*[!0-9.]*) echo "main.sh: --minutes takes a number" >&2; exit 2 ;; esac
SECONDS_BUDGET=$(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }')

echo "== build"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "${JOBS:-2}" --target tunefarm rpc_tracker rpc_server tunefarm-measure-child tuner-daemon
BIN=$ROOT/build/bin

mkdir -p "$WORKDIR"
DB=$WORKDIR/tunefarm.db
# The farm's shared token: generated once, readable only by this user.
if [ ! -s "$WORKDIR/token" ]; then
  (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$WORKDIR/token")
fi
export TUNEFARM_TOKEN
TUNEFARM_TOKEN=$(cat "$WORKDIR/token")

PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

# Waits for "<name> listening on HOST:PORT" in a log and prints HOST:PORT.
wait_address() {
  for _ in $(seq 1 200); do
    line=$(grep -m1 "listening on" "$1" 2>/dev/null || true)
    if [ -n "$line" ]; then echo "${line##* }"; return 0; fi
    sleep 0.05
  done
  echo "main.sh: $2 did not start; its log: $1" >&2
  cat "$1" >&2
  return 1
}

echo "== local farm on 127.0.0.1"
"$BIN/rpc_tracker" --listen 127.0.0.1:0 > "$WORKDIR/rpc_tracker.log" 2>&1 &
PIDS+=($!)
TRACKER=$(wait_address "$WORKDIR/rpc_tracker.log" rpc_tracker)
"$BIN/rpc_server" --tracker "$TRACKER" --key x86-local --listen 127.0.0.1:0 --threads "$THREADS" \
  --tmp "$WORKDIR" > "$WORKDIR/rpc_server.log" 2>&1 &
PIDS+=($!)
wait_address "$WORKDIR/rpc_server.log" rpc_server > /dev/null
for _ in $(seq 1 100); do grep -q "registered with" "$WORKDIR/rpc_server.log" && break; sleep 0.05; done
echo "rpc_tracker at $TRACKER; rpc_server (key x86-local, $THREADS thread(s)) registered"

# The time limit ends the tuning; the trial budget (10 per second, more than this machine measures) only
# sizes the gradient task scheduler's progress count.
echo "== tune $MODEL for ${MINUTES} min through the farm (records: $DB)"
"$BIN/tunefarm" tune "$MODEL" --target native --tracker "$TRACKER" --key x86-local --threads "$THREADS" \
  --total-trials $((SECONDS_BUDGET * 10)) --time-limit "$SECONDS_BUDGET" --records "$DB"

echo "== compile untuned and tuned"
"$BIN/tunefarm" compile "$MODEL" --target native --records none -o "$WORKDIR/untuned.tfa"
"$BIN/tunefarm" compile "$MODEL" --target native --records "$DB" -o "$WORKDIR/tuned.tfa"

echo "== run (interleaved, 3 rounds of 20 runs each, $THREADS thread(s))"
best_untuned=1e30
best_tuned=1e30
median_of() { "$BIN/tunefarm" run "$1" --repeat 20 --threads "$THREADS" --json | awk -F': ' '/"median_ms"/ { gsub(",", "", $2); print $2 }'; }
for round in 1 2 3; do
  u=$(median_of "$WORKDIR/untuned.tfa")
  t=$(median_of "$WORKDIR/tuned.tfa")
  echo "round $round: untuned median $u ms, tuned median $t ms"
  best_untuned=$(awk -v a="$best_untuned" -v b="$u" 'BEGIN { print (b < a) ? b : a }')
  best_tuned=$(awk -v a="$best_tuned" -v b="$t" 'BEGIN { print (b < a) ? b : a }')
done
TRIALS=$("$BIN/tunefarm" records stats --records "$DB" | awk '{ for (i = 2; i <= NF; i++) if ($i == "trials,") n += $(i - 1) } END { print n + 0 }')
echo
echo "== result: $MODEL, batch 1, $THREADS thread(s), best of 3 round medians"
printf 'untuned (fallback configs): %8.2f ms\n' "$best_untuned"
printf 'tuned (best records):       %8.2f ms\n' "$best_tuned"
awk -v u="$best_untuned" -v t="$best_tuned" 'BEGIN { printf "speedup over untuned:       %8.2fx\n", u / t }'
echo "records database: $DB (${TRIALS:-?} trials; run again to tune more, resuming)"
echo "artifacts: $WORKDIR/untuned.tfa $WORKDIR/tuned.tfa"
