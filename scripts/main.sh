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
#                        [--target native|cuda] [--bin DIR]
# --target cuda runs the same flow on this machine's first NVIDIA GPU (rpc_server --device cuda,
# CUDA artifacts, tunefarm run --device cuda) and, when PyTorch is installed, times PyTorch's
# model too; on a machine without a GPU it says so and stops.
# --bin DIR uses the programs in DIR instead of building them (a GPU host with the relocatable
# bundle and no compiler: --bin tunefarm/bin).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

MODEL=resnet-18
MINUTES=4
THREADS=1
WORKDIR=$ROOT/build/main-job
TARGET=native
BIN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model) MODEL=$2; shift 2 ;;
    --minutes) MINUTES=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --workdir) WORKDIR=$2; shift 2 ;;
    --target) TARGET=$2; shift 2 ;;
    --bin) BIN=$(cd "$2" && pwd) || { echo "main.sh: --bin $2 is not a directory" >&2; exit 2; }; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "main.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$MINUTES" in ''|*[!0-9.]*) echo "main.sh: --minutes takes a number" >&2; exit 2 ;; esac
case "$TARGET" in
  native) KEY=x86-local; SERVER_FLAGS=(--threads "$THREADS"); TUNE_FLAGS=(--threads "$THREADS")
    COMPILE_FLAGS=(--threads "$THREADS"); RUN_FLAGS=(--threads "$THREADS") ;;
  cuda) KEY=cuda-local; SERVER_FLAGS=(--device cuda); TUNE_FLAGS=(); COMPILE_FLAGS=(); RUN_FLAGS=(--device cuda) ;;
  *) echo "main.sh: --target takes native or cuda, got '$TARGET'" >&2; exit 2 ;;
esac
SECONDS_BUDGET=$(awk -v m="$MINUTES" 'BEGIN { printf "%d", m * 60 }')

if [ -z "$BIN" ]; then
  echo "== build"
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build build -j "${JOBS:-2}" --target tunefarm rpc_tracker rpc_server tunefarm-measure-child tuner-daemon
  BIN=$ROOT/build/bin
else
  for p in tunefarm rpc_tracker rpc_server tunefarm-measure-child; do
    [ -x "$BIN/$p" ] || { echo "main.sh: --bin $BIN has no $p" >&2; exit 2; }
  done
  echo "== programs from $BIN (no build)"
fi

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

# Waits for "<name> listening on HOST:PORT" in a log and prints HOST:PORT; $3: the process, whose
# exit (a GPU server without a GPU) ends the wait at once.
wait_address() {
  for _ in $(seq 1 200); do
    line=$(grep -m1 "listening on" "$1" 2>/dev/null || true)
    if [ -n "$line" ]; then echo "${line##* }"; return 0; fi
    if [ -n "${3:-}" ] && ! kill -0 "$3" 2>/dev/null; then break; fi
    sleep 0.05
  done
  if [ "$TARGET" = cuda ] && [ "$2" = rpc_server ]; then
    echo "main.sh: --target cuda needs an NVIDIA GPU and its driver on this machine; rpc_server --device cuda says:" >&2
    cat "$1" >&2
    return 1
  fi
  echo "main.sh: $2 did not start; its log: $1" >&2
  cat "$1" >&2
  return 1
}

echo "== local farm on 127.0.0.1"
"$BIN/rpc_tracker" --listen 127.0.0.1:0 > "$WORKDIR/rpc_tracker.log" 2>&1 &
PIDS+=($!)
TRACKER=$(wait_address "$WORKDIR/rpc_tracker.log" rpc_tracker)
"$BIN/rpc_server" --tracker "$TRACKER" --key "$KEY" --listen 127.0.0.1:0 "${SERVER_FLAGS[@]}" \
  --tmp "$WORKDIR" > "$WORKDIR/rpc_server.log" 2>&1 &
PIDS+=($!)
wait_address "$WORKDIR/rpc_server.log" rpc_server "$!" > /dev/null
for _ in $(seq 1 100); do grep -q "registered with" "$WORKDIR/rpc_server.log" && break; sleep 0.05; done
echo "rpc_tracker at $TRACKER; rpc_server (key $KEY, ${SERVER_FLAGS[*]}) registered"

# The time limit ends the tuning; the trial budget (10 per second, more than this machine measures) only
# sizes the gradient task scheduler's progress count.
echo "== tune $MODEL for ${MINUTES} min through the farm (records: $DB)"
"$BIN/tunefarm" tune "$MODEL" --target "$TARGET" --tracker "$TRACKER" --key "$KEY" "${TUNE_FLAGS[@]}" \
  --total-trials $((SECONDS_BUDGET * 10)) --time-limit "$SECONDS_BUDGET" --records "$DB"

echo "== compile untuned and tuned"
# Each summary names the implementation of every tunable node (direct or Winograd convolution, ...).
"$BIN/tunefarm" compile "$MODEL" --target "$TARGET" --records none "${COMPILE_FLAGS[@]}" -o "$WORKDIR/untuned.tfa" | tee "$WORKDIR/untuned.compile.txt"
"$BIN/tunefarm" compile "$MODEL" --target "$TARGET" --records "$DB" "${COMPILE_FLAGS[@]}" -o "$WORKDIR/tuned.tfa" | tee "$WORKDIR/tuned.compile.txt"

# Five rounds, the order alternating, best round median of each: on a shared 2-core machine one round's
# median moves by several percent, and whichever artifact runs second in a pair reads a warmer machine.
ROUNDS=5
echo "== run (interleaved, $ROUNDS rounds of 20 runs each, the order alternating, ${RUN_FLAGS[*]})"
best_untuned=1e30
best_tuned=1e30
# On a GPU the device's own time per run (events), comparable with PyTorch's replay below.
FIELD='"median_ms"'
[ "$TARGET" = cuda ] && FIELD='"gpu_median_ms"'
median_of() { "$BIN/tunefarm" run "$1" --repeat 20 "${RUN_FLAGS[@]}" --json | awk -F': ' -v f="$FIELD" '$1 ~ f { gsub(",", "", $2); print $2 }'; }
for round in $(seq 1 $ROUNDS); do
  if [ $((round % 2)) = 1 ]; then
    u=$(median_of "$WORKDIR/untuned.tfa"); t=$(median_of "$WORKDIR/tuned.tfa")
  else
    t=$(median_of "$WORKDIR/tuned.tfa"); u=$(median_of "$WORKDIR/untuned.tfa")
  fi
  echo "round $round: untuned median $u ms, tuned median $t ms"
  best_untuned=$(awk -v a="$best_untuned" -v b="$u" 'BEGIN { print (b < a) ? b : a }')
  best_tuned=$(awk -v a="$best_tuned" -v b="$t" 'BEGIN { print (b < a) ? b : a }')
done
TRIALS=$("$BIN/tunefarm" records stats --records "$DB" | awk '{ for (i = 2; i <= NF; i++) if ($i == "trials,") n += $(i - 1) } END { print n + 0 }')
echo
echo "== result: $MODEL, batch 1, ${RUN_FLAGS[*]}, best of $ROUNDS round medians"
printf 'untuned (fallback configs): %8.2f ms\n' "$best_untuned"
printf 'tuned (best records):       %8.2f ms\n' "$best_tuned"
awk -v u="$best_untuned" -v t="$best_tuned" 'BEGIN { printf "speedup over untuned:       %8.2fx\n", u / t }'
echo "untuned $(grep -m1 '^implementations:' "$WORKDIR/untuned.compile.txt")"
echo "tuned   $(grep -m1 '^implementations:' "$WORKDIR/tuned.compile.txt")"
echo "records database: $DB (${TRIALS:-?} trials; run again to tune more, resuming)"
echo "artifacts: $WORKDIR/untuned.tfa $WORKDIR/tuned.tfa"
if [ "$TARGET" = cuda ]; then
  # PyTorch's own model on the same GPU (random weights: a timing reference), strict fp32, CUDA graph
  # replay, when PyTorch and torchvision are installed.
  case "$MODEL" in resnet-18) TV=resnet18 ;; resnet-50) TV=resnet50 ;; mobilenet-v2) TV=mobilenet_v2 ;; *) TV= ;; esac
  if [ -n "$TV" ] && python3 -c 'import torch, torchvision' 2>/dev/null; then
    python3 - "$TV" <<'PY' || echo "PyTorch reference: failed (see above)"
import sys, torch, torchvision
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.benchmark = True
m = getattr(torchvision.models, sys.argv[1])().cuda().eval()
x = torch.randn(1, 3, 224, 224, device="cuda")
with torch.no_grad():
    for _ in range(20): m(x)
    g = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3): m(x)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(g): y = m(x)
    times = []
    for _ in range(3):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(100): g.replay()
        stop.record(); stop.synchronize()
        times.append(start.elapsed_time(stop) / 100)
print("PyTorch %s (fp32, CUDA graph, GPU time): %8.3f ms" % (torch.__version__, min(times)))
PY
  else
    echo "PyTorch reference: not run (needs PyTorch + torchvision and a torchvision model: resnet-18, resnet-50, mobilenet-v2)"
  fi
fi
