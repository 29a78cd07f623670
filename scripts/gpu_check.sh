#!/usr/bin/env bash
# The whole GPU verification of tunefarm in one command, in two halves:
#
#   scripts/gpu_check.sh --kit OUT.tar.xz [--build DIR]
#       On the workstation: builds the GPU check kit, a self-contained tar.xz (<= 40 MB) holding the
#       programs (LLVM linked statically: X86, AArch64, ARM, NVPTX back ends only; stripped), the GPU
#       test program, tunefarm-measure-child beside them, every shared library beyond glibc, the
#       PyTorch reference script and this script as the runner. The zoo models are built in.
#
#   scripts/gpu_check.sh --run KIT.tar.xz|KIT_DIR --report DIR [--cases N] [--tune-seconds S] [--deadline T]
#       On the GPU host (needs only the NVIDIA driver and glibc >= 2.36): unpacks the kit when given
#       the tarball and runs, in order,
#         1. probe       the driver and device (three distinct failures: no driver / cuInit fails / no device)
#         2. templates   N random cases per CUDA template on the GPU vs the naive references (default 40)
#         3. kernels     a compiled dense kernel timed and checked; the C API on the device
#         4. build       what a tuner's candidate builds cost on this host (lowering, LLVM, ptxas) with
#                        one build job and with one per core, and the host's CPUs and ptxas
#         5. models      every zoo model compiled for this GPU and run against its CPU compile
#         6. farm        rpc_tracker + rpc_server --device cuda + tunefarm tune of resnet-18 and
#                        mobilenet-v2 for S seconds each (default 60), measurements per second
#         7. latency     resnet-18 and mobilenet-v2, untuned and tuned, tunefarm run --device cuda
#                        (CUDA graph replay, and whether it held)
#         8. pytorch     PyTorch's strict-fp32 CUDA-graph time for the same models (when `import torch` works)
#         9. tasks       each convolution of the tuned models against cuDNN (strict fp32), summed:
#                        resnet-18's conv kernels, mobilenet-v2's depthwise ones
#        10. hostile     an out-of-bounds write, an endless loop, a launch out of resources
#       with TUNEFARM_REQUIRE_GPU=1, so no GPU test can pass by skipping. Writes DIR/gpu_check.md and
#       DIR/gpu_check.json (plus each step's log), prints a summary, and exits 1 when anything failed
#       or was skipped (0 only when every step passed). Without a usable GPU it stops after the probe.
#       --deadline T: finish within T seconds of starting (default 1500), so that a device command's
#       own limit never kills the run before the report is written: each step's time limit is cut to
#       what is left (less 20 s for the report), and a step with under 15 s left is recorded as
#       skipped, "out of time".
#
#   scripts/gpu_check.sh --help
#
# With the device tool: build the kit here, carry it (`carry: ["build-bundle/gpu-kit.tar.xz"]`) and run
#   scripts/gpu_check.sh --run build-bundle/gpu-kit.tar.xz --report $OUT
set -euo pipefail

SELF=$(readlink -f "$0")
usage() { sed -n '2,/^set -euo/p' "$SELF" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "gpu_check.sh: $*" >&2; exit 2; }

MODE="" KIT_OUT="" KIT_IN="" REPORT="" BUILD="" CASES=40 TUNE_SECONDS=60 DEADLINE=1500 UNPACKED=
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --kit) MODE=kit; KIT_OUT=${2:?--kit takes the output path (OUT.tar.xz)}; shift 2 ;;
    --build) BUILD=${2:?--build takes a directory}; shift 2 ;;
    --run) MODE=run; KIT_IN=${2:?--run takes the kit (KIT.tar.xz or its unpacked directory)}; shift 2 ;;
    --report) REPORT=${2:?--report takes a directory}; shift 2 ;;
    --cases) CASES=${2:?--cases takes a number}; shift 2 ;;
    --tune-seconds) TUNE_SECONDS=${2:?--tune-seconds takes a number}; shift 2 ;;
    --deadline) DEADLINE=${2:?--deadline takes a number of seconds}; shift 2 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
case $CASES in ''|*[!0-9]*) die "--cases takes a whole number, got '$CASES'" ;; esac
case $TUNE_SECONDS in ''|*[!0-9]*) die "--tune-seconds takes a whole number, got '$TUNE_SECONDS'" ;; esac
case $DEADLINE in ''|*[!0-9]*) die "--deadline takes a whole number of seconds, got '$DEADLINE'" ;; esac

# ============================================================================ the kit (workstation)
KIT_PROGRAMS=(tunefarm tunefarm-run tunefarm-measure-child rpc_tracker rpc_server gpu_check_test)
KIT_MAX_BYTES=$((40 * 1000 * 1000))

build_kit() {
  local src
  src=$(cd "$(dirname "$SELF")/.." && pwd)
  source "$src/scripts/lib/bundle_lib.sh"
  BUILD=${BUILD:-$src/build-bundle}
  case $KIT_OUT in *.tar.xz) ;; *) die "the kit must end in .tar.xz, got '$KIT_OUT'" ;; esac
  echo "== gpu_check: building ${KIT_PROGRAMS[*]} in $BUILD (static LLVM)"
  bundle_configure "$BUILD"
  cmake --build "$BUILD" -j "${JOBS:-2}" --target "${KIT_PROGRAMS[@]}"
  local stage root
  stage=$(mktemp -d)
  STAGE=$stage
  trap 'rm -rf "$STAGE"' EXIT
  root=$stage/tunefarm-gpu-check
  bundle_copy "$BUILD" "$root" "${KIT_PROGRAMS[@]}"
  cp "$SELF" "$root/gpu_check.sh"
  cp "$src/bench/gpu/torch_reference.py" "$src/bench/gpu/cudnn_tasks.py" "$root/"
  (cd "$src" && git describe --always --dirty 2>/dev/null || echo unknown) > "$root/VERSION"
  # A device call carries 64 MiB with the working tree: KIT_MAX_BYTES leaves room for the tree.
  bundle_finish "gpu_check kit" "$stage" tunefarm-gpu-check "$KIT_OUT" "$KIT_MAX_BYTES" "${KIT_PROGRAMS[@]}"
}

# ============================================================================ the runner (GPU host)
START=$(date +%s)
STEPS=()          # "name|status|summary" in order; status: pass, fail, skip
json_escape() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g; s/\t/\\t/g' | awk 'BEGIN { ORS = "" } NR > 1 { print "\\n" } { print }'; }
record() { STEPS+=("$1|$2|$3"); printf '== %-10s %-4s %s\n' "$1" "$2" "$3"; }
elapsed() { echo $(( $(date +%s) - START )); }
# A step's time limit: the step's own ($1), cut to what --deadline leaves less 20 s for the report.
# Prints nothing when under 15 s would be left (the caller records the step as out of time).
step_limit() {
  local left=$(( DEADLINE - $(elapsed) - 20 ))
  [ "$left" -ge 15 ] || return 1
  echo $(( $1 < left ? $1 : left ))
}
out_of_time() { record "$1" skip "not run: out of time (--deadline $DEADLINE s, $(elapsed) s used)"; }

# Runs gpu_check_test with a filter; the step passes only when gtest ran at least one test and
# none failed or skipped (TUNEFARM_REQUIRE_GPU=1 already turns a GPU skip into a failure).
gtest_step() {
  local name=$1 filter=$2 summary_cmd=$3 log=$REPORT/$1.log rc=0 limit
  limit=$(step_limit "${4:-300}") || { out_of_time "$name"; return 0; }
  (cd "$WORK" && timeout "$limit" "$KIT/bin/gpu_check_test" --gtest_filter="$filter" --gtest_color=no) >"$log" 2>&1 || rc=$?
  # gtest's closing summary: "[  PASSED  ] 3 tests.", "[  FAILED  ] 1 test, listed below:", ...
  local passed failed skipped
  passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$log" | tail -1)
  failed=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below:.*/\1/p' "$log" | tail -1)
  skipped=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}, listed below:.*/\1/p' "$log" | tail -1)
  passed=${passed:-0} failed=${failed:-0} skipped=${skipped:-0}
  # The step's own summary lines (joined with " / "); a failure without one shows gtest's lines.
  local detail
  detail=$( (eval "$summary_cmd" <"$log" || true) | awk 'NF { printf "%s%s", (n++ ? " / " : ""), $0 }')
  if [ "$rc" = 124 ]; then
    record "$name" fail "timed out after $limit s ($passed passed before); $detail"
  elif [ "$rc" != 0 ] || [ "$failed" != 0 ]; then
    # gtest prints "FILE:LINE: Failure", then the message: keep the messages.
    [ -n "$detail" ] || detail=$( (grep -A3 ': Failure$' "$log" || true) |
      grep -v -E ': Failure$|^--$|^Failed$|^\[' | awk 'NF && !seen[$0]++ && n < 2 { printf "%s%s", (n++ ? " / " : ""), $0 }' | cut -c1-400)
    record "$name" fail "$passed passed, $failed failed, $skipped skipped: $detail"
  elif [ "$passed" = 0 ] || [ "$skipped" != 0 ]; then
    record "$name" skip "$passed passed, $skipped skipped (nothing may skip here); $detail"
  else
    record "$name" pass "$passed passed; $detail"
  fi
}

# "name listening on HOST:PORT" in a log -> HOST:PORT
wait_address() {
  local line
  for _ in $(seq 1 200); do
    line=$(grep -m1 "listening on" "$1" 2>/dev/null || true)
    if [ -n "$line" ]; then echo "${line##* }"; return 0; fi
    kill -0 "$2" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}

PIDS=()
stop_children() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }

run_kit() {
  [ -n "$REPORT" ] || die "--run needs --report DIR (where the report goes)"
  mkdir -p "$REPORT"
  REPORT=$(cd "$REPORT" && pwd)
  [ -e "$KIT_IN" ] || die "no kit at $KIT_IN (build one with: scripts/gpu_check.sh --kit OUT.tar.xz)"
  if [ -f "$KIT_IN" ]; then
    UNPACKED=$(mktemp -d "${TMPDIR:-/tmp}/tunefarm-gpu-kit.XXXXXX")
    # A host without xz still has Python's lzma (a GPU host has python3 for PyTorch).
    tar -C "$UNPACKED" -xJf "$KIT_IN" 2>/dev/null ||
      python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$KIT_IN" "$UNPACKED" ||
      die "cannot unpack $KIT_IN (needs xz or python3)"
    KIT=$UNPACKED/tunefarm-gpu-check
  else
    KIT=$(cd "$KIT_IN" && pwd)
  fi
  [ -x "$KIT/bin/gpu_check_test" ] || die "$KIT_IN is not a GPU check kit (no bin/gpu_check_test; build one with --kit)"
  WORK=$(mktemp -d "${TMPDIR:-/tmp}/tunefarm-gpu-check.XXXXXX")
  # The unpacked kit and the work directory (artifacts, the farm's records) go when the run ends;
  # the report directory keeps every step's log. KEEP=1 keeps them.
  # A bug in this runner (a command failing under set -e) still leaves a report: the steps run so
  # far, and a "runner" step naming the line that stopped it.
  set -o errtrace
  trap 'ERR_LINE=${ERR_LINE:-$LINENO}' ERR
  trap 'rc=$?; if [ "$REPORTED" != 1 ]; then record runner fail "the runner stopped at line ${ERR_LINE:-?} (exit $rc): a bug in scripts/gpu_check.sh"; write_report "$SMI" || true; fi
        stop_children; [ "${KEEP:-0}" = 1 ] || rm -rf "$WORK" ${UNPACKED:+"$UNPACKED"}' EXIT
  export TUNEFARM_REQUIRE_GPU=1 TMPDIR=$WORK TUNEFARM_MODELS_DIR=$WORK/no-shared-models
  echo "== tunefarm GPU check: kit $(cat "$KIT/VERSION" 2>/dev/null || echo '?'), report in $REPORT"

  # ---- 1. probe
  local libs_ok=1 unresolved
  unresolved=$( (for p in "$KIT"/bin/*; do env -i ldd "$p" 2>&1 || true; done) | awk '/not found/ {print $1}' | sort -u | tr '\n' ' ')
  [ -z "$unresolved" ] || libs_ok=0
  local smi=""
  command -v nvidia-smi >/dev/null && smi=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 || true)
  SMI=$smi
  gtest_step probe 'CudaDriver.OnAGpuHost*:CudaDriver.TheProbe*' "grep -E '^CUDA device|^TUNEFARM_REQUIRE_GPU=1:' | sed 's/^TUNEFARM_REQUIRE_GPU=1: //' | sort -u" 60
  [ "$libs_ok" = 1 ] || record libraries fail "not found in the kit or on this host: $unresolved"
  # The target the farm and latency steps compile for: this card's tag when tunefarm knows it (its
  # arch, SM count and shared memory), else plain cuda.
  GPU_TARGET=cuda
  local tag
  for tag in H100:h100 H200:h200 A100:a100 A10:a10 L4:l4 T4:t4 "RTX 3090:rtx3090" "RTX 4090:rtx4090"; do
    case $smi in *"${tag%%:*}"*) GPU_TARGET=${tag##*:}; break ;; esac
  done
  local probe_status=${STEPS[0]#*|}; probe_status=${probe_status%%|*}
  if [ "$probe_status" != pass ]; then
    local reason
    reason=$(grep -m1 -o 'TUNEFARM_REQUIRE_GPU=1: .*' "$REPORT/probe.log" | sed 's/^TUNEFARM_REQUIRE_GPU=1: //' || true)
    for s in templates kernels build models farm latency pytorch tasks hostile; do record "$s" skip "not run: no usable GPU (${reason:-see probe.log})"; done
  else
    run_gpu_steps
  fi
  REPORTED=1
  write_report "$smi"
}

# 5. The farm: rpc_tracker + rpc_server --device cuda + tunefarm tune, into $DB (the latency step reads it).
farm_step() {
  local farm=$WORK/farm limit
  mkdir -p "$farm"
  limit=$(step_limit $(( TUNE_SECONDS + 60 ))) || { out_of_time farm; return 0; }
  export TUNEFARM_TOKEN
  TUNEFARM_TOKEN=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
  "$KIT/bin/rpc_tracker" --listen 127.0.0.1:0 >"$REPORT/rpc_tracker.log" 2>&1 &
  PIDS+=($!)
  local tracker="" server_pid
  tracker=$(wait_address "$REPORT/rpc_tracker.log" "$!") || true
  "$KIT/bin/rpc_server" --tracker "${tracker:-127.0.0.1:1}" --key gpu-check --listen 127.0.0.1:0 --device cuda \
    --tmp "$farm" >"$REPORT/rpc_server.log" 2>&1 &
  server_pid=$!
  PIDS+=($server_pid)
  if [ -z "$tracker" ] || ! wait_address "$REPORT/rpc_server.log" "$server_pid" >/dev/null; then
    record farm fail "the farm did not start: $(cat "$REPORT/rpc_tracker.log" "$REPORT/rpc_server.log" | tail -n 2 | tr '\n' ' ' | cut -c1-300)"
  else
    for _ in $(seq 1 100); do grep -q "registered with" "$REPORT/rpc_server.log" && break; sleep 0.05; done
    # Both models the latency step compares with PyTorch, TUNE_SECONDS each, into one database.
    local t0 t1 rc=0 trials seconds model split=""
    t0=$(date +%s.%N)
    for model in resnet-18 mobilenet-v2; do
      limit=$(step_limit $(( TUNE_SECONDS + 60 ))) || break
      timeout "$limit" "$KIT/bin/tunefarm" tune "$model" --target "$GPU_TARGET" --tracker "$tracker" --key gpu-check \
        --total-trials $(( TUNE_SECONDS * 100 )) --time-limit "$TUNE_SECONDS" --records "$DB" >>"$REPORT/farm.log" 2>&1 || rc=$?
      # tune's closing line says where the time went (search, build, measure: loading, timing, transport).
      # (A tune killed by its limit prints neither line: grep finds nothing, which must not end the run.)
      split+="$model: $( (grep '^time: ' "$REPORT/farm.log" || true) | tail -1 | sed 's/^time: //') $( (grep '^build: ' "$REPORT/farm.log" || true) | tail -1); "
    done
    t1=$(date +%s.%N)
    trials=$( ("$KIT/bin/tunefarm" records stats --records "$DB" 2>/dev/null || true) |
             awk '{ for (i = 2; i <= NF; i++) if ($i == "trials,") n += $(i - 1) } END { print n + 0 }')
    seconds=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ "$rc" != 0 ] || [ "${trials:-0}" = 0 ]; then
      record farm fail "tunefarm tune exited $rc with ${trials:-0} trials: $(tail -n 3 "$REPORT/farm.log" | tr '\n' ' ' | cut -c1-300)"
    else
      record farm pass "$trials trials in $seconds s: $(awk -v n="$trials" -v s="$seconds" 'BEGIN { printf "%.1f", n / s }') measurements/s (resnet-18 and mobilenet-v2, rpc_server --device cuda; ${split%; })"
    fi
  fi
  stop_children
  PIDS=()
}

run_gpu_steps() {
  # ---- 2. templates
  export TUNEFARM_GPU_CASES=$CASES
  gtest_step templates 'All/CudaTemplatesOnGpu.*' \
    "grep -E 'cases run on the GPU'" 330
  # ---- 3. kernels
  gtest_step kernels 'CudaMeasurement.OnAGpuACompiled*:CudaMeasurement.OnAGpuCandidates*:CApi.LoadOnADevice*' \
    "grep -E '^dense .* ms|^conv2d .* candidates'" 120
  # ---- 4. build: the host's CPUs and ptxas, then the candidate builds with 1 job and with all
  local cpus ptxas_path
  cpus="$(nproc) CPUs ($( (grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true) | sed 's/.*: //'))"
  [ -r /sys/fs/cgroup/cpu.max ] && cpus+=", cgroup cpu.max $(cat /sys/fs/cgroup/cpu.max)"
  ptxas_path=$(command -v ptxas || ls /usr/local/cuda/bin/ptxas 2>/dev/null || echo none)
  [ "$ptxas_path" = none ] || ptxas_path+=" ($("$ptxas_path" --version 2>/dev/null | grep -o 'V[0-9.]*' | head -1))"
  echo "$cpus; ptxas: $ptxas_path" >"$REPORT/host.txt"
  TUNEFARM_BUILD_PROFILE_CANDIDATES=${BUILD_PROFILE_CANDIDATES:-16} gtest_step build 'CudaMeasurement.CandidateBuilds*' \
    "sed -n 's/^candidate builds //p'; cat '$REPORT/host.txt'" 120

  # ---- 5. models
  gtest_step models 'CudaModels.OnAGpu*' "grep -E 'max rel error' | sed 's/ on [^(]*(/ (/'" 300

  # ---- 6. farm
  DB=$WORK/farm/records.db
  farm_step

  # ---- 7. latency
  local model lat_fail=0 lat_detail="" fallback
  for model in resnet-18 mobilenet-v2; do
    local kind records
    for kind in untuned tuned; do
      records=none
      [ "$kind" = tuned ] && [ -f "$DB" ] && records=$DB
      if ! limit=$(step_limit 120); then lat_fail=1; lat_detail+="$model $kind: not run, out of time; "; continue; fi
      if ! timeout "$limit" "$KIT/bin/tunefarm" compile "$model" --target "$GPU_TARGET" --records "$records" -o "$WORK/$model.$kind.tfa" \
           >"$REPORT/latency.$model.$kind.compile.log" 2>&1; then
        lat_fail=1; lat_detail+="$model $kind: compile failed ($(tail -n 1 "$REPORT/latency.$model.$kind.compile.log" | cut -c1-200)); "; continue
      fi
      local json
      limit=$(step_limit 60) || limit=15
      if ! json=$(timeout "$limit" "$KIT/bin/tunefarm" run "$WORK/$model.$kind.tfa" --device cuda --repeat 50 --json 2>"$REPORT/latency.$model.$kind.run.log"); then
        lat_fail=1; lat_detail+="$model $kind: run failed ($(tail -n 1 "$REPORT/latency.$model.$kind.run.log" | cut -c1-200)); "; continue
      fi
      echo "$json" >"$REPORT/latency.$model.$kind.json"
      local gpu_ms graph
      gpu_ms=$(echo "$json" | awk -F': ' '$1 ~ /"gpu_min_ms"/ { gsub(",", "", $2); print $2 }')
      graph=$(echo "$json" | awk -F': ' '$1 ~ /"cuda_graph"/ { gsub(",", "", $2); print $2 }')
      fallback=$(echo "$json" | grep -o '"cuda_graph_fallback": *"[^"]*"' || true)
      [ "$graph" = true ] || { lat_fail=1; lat_detail+="$model $kind: graph replay did not hold ($fallback); "; }
      lat_detail+="$model $kind ${gpu_ms} ms (graph ${graph:-?}); "
      LATENCY["$model.$kind"]=$gpu_ms
    done
  done
  if [ "$lat_fail" = 0 ]; then record latency pass "${lat_detail%; }"; else record latency fail "${lat_detail%; }"; fi

  # ---- 8. pytorch
  if command -v python3 >/dev/null && python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    if ! limit=$(step_limit 240); then out_of_time pytorch
    elif timeout "$limit" python3 "$KIT/torch_reference.py" resnet18 mobilenet_v2 >"$REPORT/pytorch.jsonl" 2>"$REPORT/pytorch.log"; then
      local detail="" line name ms ours
      while read -r line; do
        name=$(echo "$line" | sed 's/.*"model": "\([^"]*\)".*/\1/')
        ms=$(echo "$line" | sed 's/.*"ms": \([0-9.e-]*\).*/\1/')
        case $name in resnet18) ours=${LATENCY[resnet-18.tuned]:-} ;; *) ours=${LATENCY[mobilenet-v2.tuned]:-} ;; esac
        detail+="$name PyTorch ${ms} ms"
        [ -n "$ours" ] && detail+=" vs tunefarm tuned $ours ms ($(awk -v a="$ours" -v b="$ms" 'BEGIN { printf "%.2fx PyTorch'"'"'s time", a / b }'))"
        detail+="; "
        PYTORCH["$name"]=$ms
      done <"$REPORT/pytorch.jsonl"
      record pytorch pass "${detail%; } ($(head -1 "$REPORT/pytorch.jsonl" | sed 's/.*"torch": "\([^"]*\)".*"definition": "\([^"]*\)".*/torch \1, \2/'))"
    else
      record pytorch fail "torch_reference.py failed: $(tail -n 2 "$REPORT/pytorch.log" | tr '\n' ' ' | cut -c1-300)"
    fi
  else
    record pytorch skip "python3 cannot import torch with CUDA here"
  fi

  # ---- 9. tasks: the tuned models' convolutions against cuDNN
  if ! command -v python3 >/dev/null || ! python3 -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    record tasks skip "python3 cannot import torch with CUDA here"
  elif [ ! -f "$WORK/resnet-18.tuned.tfa" ] || [ ! -f "$WORK/mobilenet-v2.tuned.tfa" ]; then
    record tasks fail "no tuned artifacts to compare (see the latency step)"
  elif ! limit=$(step_limit 180); then out_of_time tasks
  elif timeout "$limit" "$KIT/bin/tunefarm" run "$WORK/resnet-18.tuned.tfa" --device cuda --repeat 20 --profile --json \
         >"$REPORT/tasks.resnet-18.json" 2>"$REPORT/tasks.log" &&
       timeout "$limit" "$KIT/bin/tunefarm" run "$WORK/mobilenet-v2.tuned.tfa" --device cuda --repeat 20 --profile --json \
         >"$REPORT/tasks.mobilenet-v2.json" 2>>"$REPORT/tasks.log" &&
       timeout "$limit" python3 "$KIT/cudnn_tasks.py" resnet18="$REPORT/tasks.resnet-18.json" \
         mobilenet_v2="$REPORT/tasks.mobilenet-v2.json" >"$REPORT/tasks.jsonl" 2>>"$REPORT/tasks.log"; then
    local detail
    detail=$(python3 -c '
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
want = {("resnet18", "conv"): 0.8, ("mobilenet_v2", "depthwise"): 1.0}
out = []
for r in rows:
    bar = want.get((r["model"], r["group"]))
    out.append("%s %s: %d kernels, ours %.3f ms vs cuDNN %.3f ms, %.2fx cuDNN%s" % (r["model"], r["group"], r["kernels"],
               r["ours_ms"], r["cudnn_ms"], r["speed_vs_cudnn"] or 0, "" if bar is None else " (bar >= %.1fx)" % bar))
print("; ".join(out))' "$REPORT/tasks.jsonl" 2>&1)
    record tasks pass "$detail"
  else
    record tasks fail "the per-kernel runs or cudnn_tasks.py failed: $(tail -n 2 "$REPORT/tasks.log" | tr '\n' ' ' | cut -c1-300)"
  fi

  # ---- 10. hostile
  gtest_step hostile 'CudaMeasurement.OnAGpuHostile*' "true" 180
}

write_report() {
  local smi=$1 md=$REPORT/gpu_check.md json=$REPORT/gpu_check.json failed=0 skipped=0 entry name status summary
  {
    echo "# tunefarm GPU check"
    echo
    echo "- kit: $(cat "$KIT/VERSION" 2>/dev/null || echo '?'); host: $(uname -nmr); glibc $(ldd --version 2>/dev/null | head -1 | awk '{print $NF}')"
    echo "- device: ${smi:-nvidia-smi not available}"
    echo "- time: $(elapsed) s; template cases per template: $CASES; farm tuning: $TUNE_SECONDS s; target: ${GPU_TARGET:-cuda}"
    echo
    echo "| step | status | result |"
    echo "|---|---|---|"
    for entry in "${STEPS[@]}"; do
      IFS='|' read -r name status summary <<<"$entry"
      echo "| $name | $status | ${summary//|//} |"
    done
  } >"$md"
  {
    printf '{\n  "kit": "%s",\n  "device": "%s",\n  "seconds": %d,\n  "steps": [\n' \
      "$(json_escape "$(cat "$KIT/VERSION" 2>/dev/null || echo '?')")" "$(json_escape "$smi")" "$(elapsed)"
    local first=1
    for entry in "${STEPS[@]}"; do
      IFS='|' read -r name status summary <<<"$entry"
      [ "$first" = 1 ] || printf ',\n'
      first=0
      printf '    {"step": "%s", "status": "%s", "summary": "%s"}' "$name" "$status" "$(json_escape "$summary")"
      [ "$status" = fail ] && failed=$((failed + 1))
      [ "$status" = skip ] && skipped=$((skipped + 1))
    done
    printf '\n  ],\n  "failed": %d,\n  "skipped": %d\n}\n' "$failed" "$skipped"
  } >"$json"
  echo
  echo "== GPU check: ${#STEPS[@]} steps, $failed failed, $skipped skipped, $(elapsed) s; report: $md, $json"
  [ "$failed" = 0 ] && [ "$skipped" = 0 ]
}

declare -A LATENCY=() PYTORCH=()
REPORTED=0 SMI=""
case $MODE in
  kit) build_kit ;;
  run) run_kit ;;
  *) usage >&2; exit 2 ;;
esac
