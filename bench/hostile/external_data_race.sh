#!/usr/bin/env bash
# Issue 46, P2: user `nobody` swaps a model's external-data file for a symlink to a root-only file,
# in the model's world-writable folder, while root compiles the model N times (default 150). Prints
# how many compiles produced an artifact, how many were refused, and how many artifacts hold the
# secret (must be 0). Run as root from the repository root after building:
#   bench/hostile/external_data_race.sh [N] [--bin build/bin]
set -euo pipefail
N=${1:-150}
BIN=${BIN:-build/bin}
[ "$(id -u)" = 0 ] || { echo "run as root: the race is another user against root" >&2; exit 2; }
WORK=$(mktemp -d /tmp/tunefarm-race-XXXXXX)
trap 'kill $RACER 2>/dev/null || true; rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/race" "$(dirname "$0")/race.c"
chmod 755 "$WORK"  # nobody must reach the model folder
mkdir -m 777 "$WORK/model"
printf 'SECRET-rootonly!' > "$WORK/secret" && chmod 600 "$WORK/secret"   # 16 bytes: 4 floats
python3 - "$WORK/model" <<'PY'
import struct, sys
d = sys.argv[1]
def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if n: out += bytes([b | 0x80])
        else: return out + bytes([b])
def field(num, wire, payload):
    key = varint((num << 3) | wire)
    return key + varint(payload) if wire == 0 else key + varint(len(payload)) + payload
def text(num, s): return field(num, 2, s.encode())
# y = x + w, w [4] float32 stored externally in race.bin
kv = field(13, 2, text(1, "location") + text(2, "race.bin"))
w = field(5, 2, field(1, 0, 4) + field(2, 0, 1) + text(8, "w") + kv + field(14, 0, 1))
node = field(1, 2, text(1, "x") + text(1, "w") + text(2, "y") + text(3, "add") + text(4, "Add"))
shape = field(2, 2, field(1, 2, field(1, 0, 4)))
inp = field(11, 2, text(1, "x") + field(2, 2, field(1, 2, field(1, 0, 1) + shape)))
graph = node + text(2, "g") + w + inp + field(12, 2, text(1, "y"))
open(d + "/race.onnx", "wb").write(field(1, 0, 8) + field(8, 2, text(1, "") + field(2, 0, 13)) + field(7, 2, graph))
open(d + "/real.bin", "wb").write(struct.pack("<4f", 1, 2, 3, 4))
PY
chmod 644 "$WORK/model/"*
cp "$WORK/model/real.bin" "$WORK/model/race.bin"
chown -R nobody "$WORK/model"
setpriv --reuid=nobody --regid=nogroup --clear-groups "$WORK/race" "$WORK/model/race.bin" "$WORK/model/real.bin" \
  "$WORK/secret" &
RACER=$!
sleep 0.5
kill -0 "$RACER" || { echo "the racer did not start" >&2; exit 1; }
compiled=0 refused=0 leaked=0
python3 - "$WORK/zeros.npy" <<'PY'
import sys
h = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
h += " " * ((64 - (10 + len(h) + 1) % 64) % 64) + "\n"
open(sys.argv[1], "wb").write(b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h.encode() + b"\0" * 16)
PY
for i in $(seq 1 "$N"); do
  if "$BIN/tunefarm" compile "$WORK/model/race.onnx" --records none -o "$WORK/a.tfa" >/dev/null 2>"$WORK/err"; then
    compiled=$((compiled + 1))
    "$BIN/tunefarm" run "$WORK/a.tfa" --input x="$WORK/zeros.npy" --output "$WORK/y.npy" --repeat 0 >/dev/null
    if grep -q "SECRET" "$WORK/y.npy" "$WORK/a.tfa"; then leaked=$((leaked + 1)); fi
  else
    refused=$((refused + 1))
  fi
done
echo "compiles: $N; artifacts: $compiled; refused: $refused; artifacts holding the secret: $leaked"
[ "$leaked" = 0 ]
