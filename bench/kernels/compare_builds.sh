#!/usr/bin/env bash
# Compares two builds of tunefarm's kernel compiler (e.g. before and after a refactor):
#   1. the lowered IR after every pass, for the fallback config of every ResNet-18 and
#      MobileNetV2 task, plain and with a fused bias+residual+relu epilogue: must be identical;
#   2. bench_kernels --threads 1 on the ResNet-18 convolutions, the two builds alternating
#      (ROUNDS times each, best and median of the conv-sum time).
# Usage: bench/kernels/compare_builds.sh BEFORE_BUILD_DIR AFTER_BUILD_DIR [ROUNDS]
# (a build dir holds bin/tunefarm-lower and bin/bench_kernels; AFTER also bin/tunefarm)
set -euo pipefail
before=$1 after=$2 rounds=${3:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
models=(resnet-18)
shared="$(dirname "$0")/../../../shared/models/mobilenet_v2.onnx"
[ -f "$shared" ] && models+=("$shared")
# Each task as TEMPLATE:KEY, and in the form builds before the target-neutral workload key took
# (schema version 3: "conv2d_nchwc|N1_C64..."); each build's tunefarm-lower says which it reads.
for m in "${models[@]}"; do
  "$after/bin/tunefarm" tasks "$m" --json | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    w = t["workload"]
    print(t["template"] + ":" + w, t["template"] + w[w.index("|"):])'
done > "$work/keys"
form_of() { if "$1/bin/tunefarm-lower" --help | grep -q 'TEMPLATE:KEY'; then echo new; else echo old; fi; }
before_form=$(form_of "$before") after_form=$(form_of "$after")
mkdir -p "$work/before" "$work/after"
i=0
# The kernel's default symbol is a hash of its key and the metadata names the key, so both follow
# the key's form: they are masked.
mask_symbol() {
  sed -e 's/\b\([a-z0-9_]*\)_[0-9a-f]\{16\}\b/\1_SYMBOL/g' -e 's/"workload":"[^"]*",//' -e 's/"implementation":"[^"]*",//'
}
while read -r new_key old_key; do
  i=$((i + 1))
  for side in before after; do
    dir=$before form=$before_form
    [ "$side" = after ] && dir=$after form=$after_form
    key=$new_key; [ "$form" = old ] && key=$old_key
    "$dir/bin/tunefarm-lower" "$key" --dump-after all 2>&1 | mask_symbol > "$work/$side/$i.plain.ir"
    "$dir/bin/tunefarm-lower" "$key" --epilogue bias,residual,relu --dump-after all 2>&1 | mask_symbol > "$work/$side/$i.fused.ir"
  done
done < "$work/keys"
if diff -rq "$work/before" "$work/after" > /dev/null; then
  echo "IR: identical after every pass for $i workloads x 2 epilogues"
else
  echo "IR: DIFFERS"; diff -r "$work/before" "$work/after" | head -40; exit 1
fi
for r in $(seq "$rounds"); do
  for side in before after; do
    dir=$before; [ "$side" = after ] && dir=$after
    t=$("$dir/bin/bench_kernels" --threads 1 --k 1 --filter resnet18 | sed -n 's/.*conv sum time: fallback \([0-9.]*\) ms.*/\1/p')
    echo "$side $t" | tee -a "$work/times"
  done
done
python3 - "$work/times" <<'PY'
import sys, statistics
t = {"before": [], "after": []}
for line in open(sys.argv[1]):
    side, ms = line.split(); t[side].append(float(ms))
for side in t:
    print(f"{side}: best {min(t[side]):.3f} ms, median {statistics.median(t[side]):.3f} ms over {len(t[side])} runs")
print(f"after / before: best {min(t['after']) / min(t['before']):.3f}, median {statistics.median(t['after']) / statistics.median(t['before']):.3f}")
PY
