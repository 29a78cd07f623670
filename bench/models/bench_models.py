#!/usr/bin/env python3
"""Whole-model latency: tunefarm (fallback configs, no records) interleaved in one run with ONNX
Runtime (npm onnxruntime-node) and PyTorch (Debian python3-torch) where installed; compile time of
resnet-50; peak runtime memory. resnet50 runs too where PyTorch is installed (exported from torchvision
by export_torchvision.py: ../shared has no resnet50.onnx). Writes bench/results/models.json and prints a
Markdown table.

    bench/models/bench_models.py [--rounds 5] [--repeat 20] [--build build] [--families DIR] [--models a,b]
    bench/models/bench_models.py --int8 DIR [--target T] [--records DB] [--models a,b]
    bench/models/bench_models.py --sizes 1,4,8 [--records DB] [--threads 1]

--int8 DIR times the int8 models of tools/quantized_models (ResNet-18, MobileNetV2, ResNet-50) in
tunefarm and ONNX Runtime, with tunefarm's fp32 form of each network, and writes models_int8.json.

--sizes S1,S2,... times one artifact compiled over a range of batches (ResNet-50 exported with a dynamic
batch, --input-shape data:1..MAXx3x224x224; docs/dynamic_shapes.md) at each size, against a compile fixed
at that size and ONNX Runtime on the same dynamic model, and checks each output against the fixed
compile's; writes models_sizes.json.

--families DIR adds the model families of issue 31 (segmentation, U-Net, super-resolution, recurrent)
from tools/model_families/export_families.py's output, each at opset 17 with the input shape of its
meta.json; --models keeps only the named models.

Each round runs every (model, threads, runtime) once for `repeat` timed runs after warm-up, the
runtimes in rotating order; the figures are the median over rounds of each round's median, and the
minimum over all runs. Timings on a shared 2-core machine are noisy: compare within one run."""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MODELS = os.path.join(ROOT, "..", "shared", "models")
THREADS = (1, 2)  # the thread counts every model runs at; tuned artifacts are compiled per count


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out[out.index("{"):])


def have_ort():
    if os.path.isdir(os.path.join(HERE, "node_modules", "onnxruntime-node")):
        return True
    if not shutil.which("npm"):
        return False
    print("installing onnxruntime-node (npm, --ignore-scripts) into bench/models/node_modules ...", file=sys.stderr)
    r = subprocess.run(["npm", "install", "--no-save", "--ignore-scripts", "--prefix", HERE, "onnxruntime-node"],
                       capture_output=True, text=True)
    return r.returncode == 0


# Debian's python3-torch lives under the system interpreter (not a pyenv/virtualenv one).
TORCH_PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def read_npy_f32(path):
    """The float32 values of a little-endian .npy file (no numpy needed)."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not an .npy file")
    header_len = struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]
    start = (10 if data[6] == 1 else 12) + header_len
    header = data[start - header_len:start].decode("latin1")
    if "<f4" not in header:
        raise ValueError(f"{path}: expected float32 data, header {header}")
    n = (len(data) - start) // 4
    return struct.unpack(f"<{n}f", data[start:start + 4 * n])


# The families of issues 31 and 32 that bench_models.py times (tools/model_families/export_families.py).
FAMILY_MODELS = ("lraspp_mobilenet_v3_large", "deeplabv3_mobilenet_v3_large", "fcn_resnet50", "unet", "espcn", "prelu_net",
                 "lstm", "gru", "encoder_small", "bert_base", "vit_b_16")


def have_torch():
    return subprocess.run([TORCH_PYTHON, "-c", "import torch, torchvision"], capture_output=True).returncode == 0


# The int8 models of tools/quantized_models/export_quantized.py and tunefarm's fp32 zoo model of the
# same network.
INT8_MODELS = {"resnet18": "resnet-18", "mobilenet_v2": "mobilenet-v2", "resnet50": "resnet-50"}


def int8_main(args):
    """--int8 DIR: each int8 model (DIR/<model>_ptq_qnnpack/model.onnx) run by tunefarm (no records,
    or --records), by ONNX Runtime, and tunefarm's fp32 form of the network, in rotating order per
    round, at 1 and 2 threads. Prints tunefarm int8 over ONNX Runtime int8 and over tunefarm fp32."""
    cli = os.path.join(args.build, "bin", "tunefarm")
    work = os.path.join(args.build, "bench-models-int8")
    os.makedirs(work, exist_ok=True)
    if not have_ort():
        sys.exit("bench_models --int8: onnxruntime-node is not installed (npm)")
    target = ["--target", args.target] if args.target else []
    onnx, artifacts = {}, {}
    for m, zoo in INT8_MODELS.items():
        path = os.path.join(args.int8, m + "_ptq_qnnpack", "model.onnx")
        if args.models and m not in args.models.split(","):
            continue
        if not os.path.exists(path):
            print(f"bench_models --int8: {path} missing (tools/quantized_models/README.md); skipped", file=sys.stderr)
            continue
        onnx[m] = path
        artifacts[m + ".fp32"] = os.path.join(work, m + ".fp32.tfa")
        # Records are per thread count: one int8 artifact per count, with the records measured at it.
        for t in THREADS:
            artifacts[m + ".int8." + str(t)] = os.path.join(work, f"{m}.int8.{t}.tfa")
            subprocess.run([cli, "compile", path, "--records", args.records or "none", "--threads", str(t), "-o",
                            artifacts[m + ".int8." + str(t)]] + target, check=True, capture_output=True)
        subprocess.run([cli, "compile", zoo, "--records", "none", "-o", artifacts[m + ".fp32"]] + target,
                       check=True, capture_output=True)
    if not onnx:
        sys.exit("bench_models --int8: no int8 model found under " + args.int8)

    def tunefarm(kind, per_thread_count=False):
        return lambda m, t: run_json([cli, "run", artifacts[m + kind + ("." + str(t) if per_thread_count else "")],
                                      "--threads", str(t), "--repeat", str(args.repeat), "--json"])
    runners = {"tunefarm int8": tunefarm(".int8", True),
               "onnxruntime int8": lambda m, t: run_json(["node", os.path.join(HERE, "ort_bench.js"), onnx[m], str(t),
                                                          str(args.repeat)]),
               "tunefarm fp32": tunefarm(".fp32")}
    names = list(runners)
    samples = {}
    for r in range(args.rounds):
        for m in onnx:
            for t in THREADS:
                for name in names[r % len(names):] + names[:r % len(names)]:
                    samples.setdefault((m, t, name), []).append(runners[name](m, t))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    result = {"rounds": args.rounds, "repeat": args.repeat, "target": args.target or "native",
              "records": args.records, "latency": []}
    for (m, t, name), runs in sorted(samples.items()):
        result["latency"].append({"model": m, "threads": t, "runtime": name,
                                  "median_ms": statistics.median(x["median_ms"] for x in runs),
                                  "min_ms": min(x["min_ms"] for x in runs)})
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    print("| model | threads | " + " | ".join(f"{n} median / min (ms)" for n in names) +
          " | int8 over ORT int8 | int8 over fp32 |")
    print("|---|---|" + "---|" * (len(names) + 2))
    for m in onnx:
        for t in THREADS:
            row = {e["runtime"]: e for e in result["latency"] if e["model"] == m and e["threads"] == t}
            cells = [f"{row[n]['median_ms']:.2f} / {row[n]['min_ms']:.2f}" for n in names]
            mine = row["tunefarm int8"]["median_ms"]
            over_ort = row["onnxruntime int8"]["median_ms"] / mine
            over_fp32 = row["tunefarm fp32"]["median_ms"] / mine
            print(f"| {m} | {t} | " + " | ".join(cells) + f" | {over_ort:.2f}x | {over_fp32:.2f}x |")


def write_npy_f32(path, shape, values):
    """A little-endian float32 .npy file (no numpy needed)."""
    import struct
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(f"{d}, " for d in shape)
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1"))
        f.write(struct.pack(f"<{len(values)}f", *values))


def sizes_main(args):
    """--sizes: one range artifact against per-size fixed compiles and ONNX Runtime (see the docstring)."""
    if not have_torch():
        sys.exit("bench_models --sizes: needs PyTorch and torchvision to export ResNet-50 with a dynamic batch")
    cli = os.path.join(args.build, "bin", "tunefarm")
    work = os.path.join(args.build, "bench-models-sizes")
    os.makedirs(work, exist_ok=True)
    onnx = os.path.join(work, "resnet50_dynamic.onnx")
    if not os.path.exists(onnx):
        subprocess.run([TORCH_PYTHON, os.path.join(HERE, "export_torchvision.py"), "resnet50", onnx, "--dynamic-batch"],
                       check=True, capture_output=True)
    sizes = [int(x) for x in args.sizes.split(",")]
    records = ["--records", args.records or "none", "--threads", str(args.threads)]
    artifacts = {"range": os.path.join(work, f"range_1_{max(sizes)}.tfa")}
    subprocess.run([cli, "compile", onnx, "--input-shape", f"data:1..{max(sizes)}x3x224x224", "-o", artifacts["range"]]
                   + records, check=True, capture_output=True)
    inputs = {}
    for n in sizes:
        artifacts[n] = os.path.join(work, f"fixed_{n}.tfa")
        subprocess.run([cli, "compile", onnx, "--input-shape", f"data:{n}x3x224x224", "-o", artifacts[n]] + records,
                       check=True, capture_output=True)
        inputs[n] = os.path.join(work, f"input_{n}.npy")
        write_npy_f32(inputs[n], [n, 3, 224, 224], [((i * 2654435761) % 1000) / 1000 for i in range(n * 3 * 224 * 224)])
    # Every size's output from the range artifact against the fixed compile's.
    accuracy = {}
    for n in sizes:
        outs = []
        for a in (artifacts["range"], artifacts[n]):
            out = os.path.join(work, f"out_{n}_{len(outs)}.npy")
            subprocess.run([cli, "run", a, "--input", "data=" + inputs[n], "--output", out, "--threads",
                            str(args.threads), "--repeat", "0"], check=True, capture_output=True)
            outs.append(read_npy_f32(out))
        accuracy[n] = max(abs(a - b) for a, b in zip(*outs)) / max(abs(b) for b in outs[1])
    runners = {"range": lambda n: run_json([cli, "run", artifacts["range"], "--input", "data=" + inputs[n], "--threads",
                                            str(args.threads), "--repeat", str(args.repeat), "--json"]),
               "fixed": lambda n: run_json([cli, "run", artifacts[n], "--input", "data=" + inputs[n], "--threads",
                                            str(args.threads), "--repeat", str(args.repeat), "--json"])}
    if have_ort():
        runners["onnxruntime"] = lambda n: run_json(["node", os.path.join(HERE, "ort_bench.js"), onnx, str(args.threads),
                                                     str(args.repeat), f"{n}x3x224x224"])
    names = list(runners)
    samples = {}
    for r in range(args.rounds):
        for n in sizes:
            for name in names[r % len(names):] + names[:r % len(names)]:
                samples.setdefault((n, name), []).append(runners[name](n))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    memory = {str(k): run_json([cli, "run", a, "--repeat", "0", "--json"])["peak_bytes"] for k, a in artifacts.items()}
    result = {"model": "resnet50 (dynamic batch)", "threads": args.threads, "records": args.records, "rounds": args.rounds,
              "repeat": args.repeat, "accuracy": accuracy, "peak_bytes": memory, "latency": []}
    for (n, name), runs in sorted(samples.items()):
        result["latency"].append({"size": n, "runtime": name, "median_ms": min(x["median_ms"] for x in runs)})
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    print(f"ResNet-50, dynamic batch, {args.threads} thread(s); best median of {args.rounds} rounds of {args.repeat} runs")
    print("| batch | " + " | ".join(f"{n} (ms)" for n in names) + " | range / fixed |" +
          (" ORT / range |" if "onnxruntime" in names else "") + " max rel. error vs fixed |")
    print("|---|" + "---|" * (len(names) + 2 + ("onnxruntime" in names)))
    for n in sizes:
        row = {e["runtime"]: e["median_ms"] for e in result["latency"] if e["size"] == n}
        cells = " | ".join(f"{row[name]:.2f}" for name in names)
        ort = f" {row['onnxruntime'] / row['range']:.2f}x |" if "onnxruntime" in names else ""
        print(f"| {n} | {cells} | {row['range'] / row['fixed']:.3f} |{ort} {accuracy[n]:.1e} |")
    print(f"peak memory: range {memory['range'] / 2**20:.1f} MiB, fixed at {max(sizes)} "
          f"{memory[str(max(sizes))] / 2**20:.1f} MiB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--json", default=os.path.join(ROOT, "bench", "results", "models.json"))
    ap.add_argument("--families", help="the export directory of tools/model_families/export_families.py")
    ap.add_argument("--models", help="comma-separated: bench only these models")
    ap.add_argument("--records", help="also run each model compiled with this records database (tuned), and check "
                    "its output against the PyTorch reference")
    ap.add_argument("--int8", metavar="DIR", help="the int8 models of tools/quantized_models (resnet18, mobilenet_v2, "
                    "resnet50 _ptq_qnnpack) against ONNX Runtime's int8 and tunefarm's fp32 instead")
    ap.add_argument("--target", help="with --int8: compile for this target (\"llvm -mcpu=znver3\": AVX2 alone)")
    ap.add_argument("--sizes", help="one ResNet-50 artifact over a range of batches against per-size compiles and "
                    "ONNX Runtime at these batches (1,4,8)")
    ap.add_argument("--threads", type=int, default=1, help="with --sizes: the thread count")
    args = ap.parse_args()
    if args.int8:
        if args.json == os.path.join(ROOT, "bench", "results", "models.json"):
            args.json = os.path.join(ROOT, "bench", "results", "models_int8.json")
        int8_main(args)
        return
    if args.sizes:
        if args.json == os.path.join(ROOT, "bench", "results", "models.json"):
            args.json = os.path.join(ROOT, "bench", "results", "models_sizes.json")
        sizes_main(args)
        return
    cli = os.path.join(args.build, "bin", "tunefarm")
    work = os.path.join(args.build, "bench-models")
    os.makedirs(work, exist_ok=True)
    onnx = {m: os.path.join(MODELS, m + ".onnx") for m in ("resnet18", "mobilenet_v2")
            if os.path.exists(os.path.join(MODELS, m + ".onnx"))}
    if not onnx:
        sys.exit("bench_models: ../shared/models is not present")
    ort, torch = have_ort(), have_torch()
    if torch:  # resnet50 too, exported here from torchvision (../shared has no resnet50.onnx)
        onnx["resnet50"] = os.path.join(work, "resnet50.onnx")
        if not os.path.exists(onnx["resnet50"]):
            subprocess.run([TORCH_PYTHON, os.path.join(HERE, "export_torchvision.py"), "resnet50", onnx["resnet50"]],
                           check=True, capture_output=True)
    shapes = {}  # model -> input dims, where not 1x3x224x224
    if args.families:
        for m in FAMILY_MODELS:
            meta = os.path.join(args.families, m, "opset17", "meta.json")
            if os.path.exists(meta):
                onnx[m] = os.path.join(args.families, m, "opset17", "model.onnx")
                with open(meta) as f:
                    shapes[m] = "x".join(str(d) for d in json.load(f)["input_shape"])
    if args.models:
        onnx = {m: p for m, p in onnx.items() if m in args.models.split(",")}
    models = list(onnx)
    print(f"runtimes: tunefarm, {'onnxruntime-node' if ort else 'no ONNX Runtime'}, {'PyTorch' if torch else 'no PyTorch'}",
          file=sys.stderr)

    artifacts = {}
    for m in models:
        artifacts[m] = os.path.join(work, m + ".tfa")
        subprocess.run([cli, "compile", onnx[m], "--records", "none", "-o", artifacts[m]],
                       check=True, capture_output=True)

    accuracy = {}
    if args.records:
        for m in models:
            # Records are per thread count: one tuned artifact per count, with the records measured at
            # it (a count without any compiles with fallback configs, and compile says so per workload).
            for t in THREADS:
                artifacts[m + ".tuned." + str(t)] = os.path.join(work, f"{m}.tuned.{t}.tfa")
                p = subprocess.run([cli, "compile", onnx[m], "--records", args.records, "--threads", str(t), "-o",
                                    artifacts[m + ".tuned." + str(t)]], check=True, capture_output=True, text=True)
                print(f"{t} thread(s): " + p.stdout.strip().splitlines()[1], file=sys.stderr)  # implementations
            artifacts[m + ".tuned"] = artifacts[m + ".tuned." + str(THREADS[0])]
            # The PyTorch reference: ../shared's (input "data") or the family export's (input "input").
            family_dir = os.path.dirname(onnx[m]) if m in shapes else None
            x_path = os.path.join(family_dir, "input.npy") if family_dir else os.path.join(MODELS, m + "_input.npy")
            ref_path = os.path.join(family_dir, "output.npy") if family_dir else os.path.join(MODELS, m + "_output.npy")
            if not os.path.exists(x_path):
                continue  # no PyTorch reference output (resnet50)
            out = os.path.join(work, m + ".tuned.out.npy")
            subprocess.run([cli, "run", artifacts[m + ".tuned"], "--input", ("input=" if family_dir else "data=") + x_path,
                            "--output", out], check=True, capture_output=True)
            y, ref = read_npy_f32(out), read_npy_f32(ref_path)
            accuracy[m] = max(abs(a - b) for a, b in zip(y, ref)) / max(abs(b) for b in ref)
            print(f"{m} tuned vs PyTorch: max|y-yref|/max|yref| = {accuracy[m]:.2e}", file=sys.stderr)

    # Compile time of resnet-50 (zoo), best of 3 wall-clock runs of the CLI.
    compile_s = []
    for _ in range(3):
        t0 = time.perf_counter()
        subprocess.run([cli, "compile", "resnet-50", "--records", "none", "-o", os.path.join(work, "resnet50.tfa")],
                       check=True, capture_output=True)
        compile_s.append(time.perf_counter() - t0)

    runners = {"tunefarm": lambda m, t: run_json([cli, "run", artifacts[m], "--threads", str(t), "--repeat", str(args.repeat), "--json"])}
    if args.records:
        runners["tunefarm-tuned"] = lambda m, t: run_json([cli, "run", artifacts[m + ".tuned." + str(t)], "--threads",
                                                           str(t), "--repeat", str(args.repeat), "--json"])
    if ort:
        runners["onnxruntime"] = lambda m, t: run_json(["node", os.path.join(HERE, "ort_bench.js"), onnx[m],
                                                        str(t), str(args.repeat), shapes.get(m, "1x3x224x224")])
    if torch and not args.families:  # torch_bench.py knows the torchvision classifiers only
        runners["pytorch"] = lambda m, t: run_json([TORCH_PYTHON, os.path.join(HERE, "torch_bench.py"), m, str(t), str(args.repeat)])
    names = list(runners)
    samples = {}
    for r in range(args.rounds):
        for m in models:
            for t in THREADS:
                order = names[r % len(names):] + names[:r % len(names)]
                for name in order:
                    res = runners[name](m, t)
                    samples.setdefault((m, t, name), []).append(res)
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)

    # Peak memory of the runtime: planned bytes (activations + I/O) and the process's max RSS.
    memory = {}
    for m in models:
        info = run_json([cli, "run", artifacts[m], "--repeat", "1", "--json"])
        rss = None
        if os.path.exists("/usr/bin/time"):
            p = subprocess.run(["/usr/bin/time", "-f", "%M", os.path.join(args.build, "bin", "tunefarm-run"), artifacts[m], "--repeat", "1"],
                               capture_output=True, text=True)
            rss = int(p.stderr.strip().splitlines()[-1]) * 1024
        memory[m] = {"planned_peak_bytes": info["peak_bytes"], "param_bytes": info["param_bytes"], "max_rss_bytes": rss}

    result = {"rounds": args.rounds, "repeat": args.repeat, "resnet50_compile_s_best_of_3": min(compile_s),
              "latency": [], "memory": memory, "records": args.records, "tuned_rel_error_vs_pytorch": accuracy}
    for (m, t, name), runs in sorted(samples.items()):
        result["latency"].append({"model": m, "threads": t, "runtime": name,
                                  "median_ms": statistics.median(x["median_ms"] for x in runs),
                                  "min_ms": min(x["min_ms"] for x in runs)})
    # Parallel efficiency at 2 threads: the 1-thread time over twice the 2-thread time (1.0: the second
    # core halves the time; issue 34's bar is 0.85), medians of each.
    result["parallel_efficiency_2t"] = []
    for m in models:
        for name in names:
            one, two = (next(e for e in result["latency"] if e["model"] == m and e["threads"] == t and e["runtime"] == name)
                        for t in (1, 2))
            result["parallel_efficiency_2t"].append({"model": m, "runtime": name,
                                                      "efficiency": one["median_ms"] / (2 * two["median_ms"])})
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)

    tuned = args.records is not None
    print("| model | threads | " + " | ".join(f"{n} median / min (ms)" for n in names) + (" | tunefarm / ORT |" if ort else " |") +
          (" ORT / tuned |" if ort and tuned else ""))
    print("|---|---|" + "---|" * len(names) + ("---|" if ort else "") + ("---|" if ort and tuned else ""))
    for m in models:
        for t in THREADS:
            row = {e["runtime"]: e for e in result["latency"] if e["model"] == m and e["threads"] == t}
            cells = [f"{row[n]['median_ms']:.2f} / {row[n]['min_ms']:.2f}" for n in names]
            ratio = f" | {row['tunefarm']['median_ms'] / row['onnxruntime']['median_ms']:.2f}x" if ort else ""
            if ort and tuned:  # >= 1.0x: the tuned model is at least as fast as ONNX Runtime
                ratio += f" | {row['onnxruntime']['median_ms'] / row['tunefarm-tuned']['median_ms']:.2f}x"
            print(f"| {m} | {t} | " + " | ".join(cells) + ratio + " |")
    print("\nParallel efficiency at 2 threads (1-thread median / (2 x 2-thread median)):\n")
    print("| model | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for m in models:
        eff = {e["runtime"]: e["efficiency"] for e in result["parallel_efficiency_2t"] if e["model"] == m}
        print(f"| {m} | " + " | ".join(f"{eff[n]:.2f}" for n in names) + " |")
    print(f"\nresnet-50 compile (CLI wall clock, best of 3): {min(compile_s):.2f} s")
    for m, mem in memory.items():
        rss = f", max RSS {mem['max_rss_bytes'] / 2**20:.1f} MiB" if mem["max_rss_bytes"] else ""
        print(f"{m}: planned activations+I/O {mem['planned_peak_bytes'] / 2**20:.2f} MiB, params {mem['param_bytes'] / 2**20:.1f} MiB{rss}")


if __name__ == "__main__":
    main()
