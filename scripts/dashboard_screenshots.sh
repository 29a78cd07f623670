#!/usr/bin/env bash
# Refreshes the dashboard screenshots in docs/images/ from a real tuning run: a tracker, one
# rpc_server and a tuner-daemon (with --dashboard) on loopback tune MODEL for TRIALS trials through
# the farm; halfway, headless Chromium photographs the overview (jobs, farm) and, at the end, the
# model, task and compare views.
# Usage: scripts/dashboard_screenshots.sh [MODEL] [TRIALS]   (default resnet-18, 240; needs build/)
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-resnet-18}
TRIALS=${2:-240}
BIN=$(pwd)/build/bin
WORK=$(mktemp -d /tmp/tunefarm_screenshots.XXXXXX)
export TUNEFARM_TOKEN=screenshots-token-0123456789abcdef TMPDIR=$WORK
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$WORK"; }
trap cleanup EXIT

# The address a daemon prints on the line containing $2 (waits up to 20 s).
address_of() {
  for _ in $(seq 200); do
    line=$(grep -m1 "$2" "$1" 2>/dev/null || true)
    if [ -n "$line" ]; then echo "${line##* }" | sed -e 's|^http://||' -e 's|/$||'; return; fi
    sleep 0.1
  done
  echo "no '$2' line in $1" >&2; exit 1
}

$BIN/rpc_tracker --listen 127.0.0.1:0 > "$WORK/tracker.log" 2>&1 & pids+=($!)
TRACKER=$(address_of "$WORK/tracker.log" "listening on")
$BIN/rpc_server --tracker "$TRACKER" --key x86-avx512 --listen 127.0.0.1:0 --tmp "$WORK" \
  --child "$BIN/tunefarm-measure-child" > "$WORK/server.log" 2>&1 & pids+=($!)
$BIN/tuner-daemon --listen 127.0.0.1:0 --records "$WORK/records.db" --tracker "$TRACKER" --key x86-avx512 \
  --dashboard 127.0.0.1:0 > "$WORK/daemon.log" 2>&1 & pids+=($!)
DAEMON=$(address_of "$WORK/daemon.log" "listening on")
DASHBOARD=$(address_of "$WORK/daemon.log" "dashboard on")
echo "dashboard on http://$DASHBOARD/ (tuning $MODEL, $TRIALS trials)"
$BIN/tunefarm tune "$MODEL" --daemon "$DAEMON" --total-trials "$TRIALS" --seed 1 > "$WORK/tune.log" 2>&1 & tune=$!
# Halfway through: the overview with a running job and a busy farm.
while [ "$(sqlite3 "$WORK/records.db" 'SELECT COUNT(*) FROM trials' 2>/dev/null || echo 0)" -lt $((TRIALS / 2)) ]; do sleep 1; done
node scripts/dashboard_screenshots.mjs "http://$DASHBOARD" docs/images overview
wait $tune
node scripts/dashboard_screenshots.mjs "http://$DASHBOARD" docs/images model task compare
echo "screenshots in docs/images/"
