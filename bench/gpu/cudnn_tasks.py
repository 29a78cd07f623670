#!/usr/bin/env python3
"""Each convolution of a tuned model against cuDNN, on the first CUDA device.

Reads what `tunefarm run ARTIFACT --device cuda --profile --json` printed (each kernel's GPU time
and workload key), times every convolution workload of it with cuDNN through PyTorch in strict fp32
(no TF32, cuDNN autotuning on, 50 convolutions captured in a CUDA graph and replayed, best of 5),
and sums both sides per group: `conv` (every conv2d kernel, Winograd ones included) and
`depthwise`. cuDNN runs the bare convolution; our kernels carry their fused bias, activation and
residual, so the comparison leans toward cuDNN.

Usage: cudnn_tasks.py NAME=RUN.json [NAME=RUN.json ...]
Prints one JSON object per model and group: {"model", "group", "kernels", "ours_ms", "cudnn_ms",
"speed_vs_cudnn" (cuDNN's time over ours: above 1 is faster than cuDNN), "tasks": [...]}.
Exits 1 when a file holds no per-kernel times (run without --profile).
"""
import json
import re
import sys

import torch
import torch.nn.functional as F

# A kernel's task, its implementation and workload key (tunefarm/compiler/workload.h):
# conv2d_nchw_cuda:conv2d|N1_C64_H56_W56|K64_R3x3_S1x1_P1_1_1_1_D1x1_G1|NCHW|float32
KEY = re.compile(r"^(?P<template>[a-z0-9_]+):conv2d\|N(?P<n>\d+)_C(?P<c>\d+)_H(?P<h>\d+)_W(?P<w>\d+)\|"
                 r"K(?P<k>\d+)_R(?P<r>\d+)x(?P<s>\d+)_S(?P<sh>\d+)x(?P<sw>\d+)_P(?P<pt>\d+)_(?P<pl>\d+)_(?P<pb>\d+)_(?P<pr>\d+)"
                 r"_D(?P<dh>\d+)x(?P<dw>\d+)_G(?P<g>\d+)\|")


def group_of(template):
    if template.startswith("depthwise"):
        return "depthwise"
    if template.startswith("conv2d"):
        return "conv"
    return None


def cudnn_ms(p, cache):
    key = tuple(sorted(p.items()))
    if key in cache:
        return cache[key]
    dev = torch.device("cuda")
    x = torch.randn(p["n"], p["c"], p["h"], p["w"], device=dev)
    wt = torch.randn(p["k"], p["c"] // p["g"], p["r"], p["s"], device=dev)
    pad_h, pad_w = p["pt"], p["pl"]
    if p["pt"] != p["pb"] or p["pl"] != p["pr"]:  # asymmetric padding: pad explicitly
        x = F.pad(x, (p["pl"], p["pr"], p["pt"], p["pb"]))
        pad_h = pad_w = 0

    def conv():
        return F.conv2d(x, wt, None, (p["sh"], p["sw"]), (pad_h, pad_w), (p["dh"], p["dw"]), p["g"])

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(5):  # cuDNN's autotuning picks its algorithm here
            conv()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    per_graph = 50
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(per_graph):
            conv()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(5):
        start.record()
        graph.replay()
        end.record()
        torch.cuda.synchronize()
        best = min(best, start.elapsed_time(end) / per_graph)
    cache[key] = best
    return best


def main(argv):
    if len(argv) < 2 or any("=" not in a for a in argv[1:]):
        print(__doc__, file=sys.stderr)
        return 2
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    cache = {}
    status = 0
    for arg in argv[1:]:
        name, path = arg.split("=", 1)
        with open(path) as f:
            run = json.load(f)
        kernels = run.get("kernels")
        if not kernels:
            print(f"cudnn_tasks.py: {path} holds no per-kernel times (run tunefarm run with --profile --json)",
                  file=sys.stderr)
            status = 1
            continue
        groups = {}
        for k in kernels:
            m = KEY.match(k.get("workload", ""))
            if not m or not group_of(m["template"]):
                continue
            p = {key: int(v) for key, v in m.groupdict().items() if key != "template"}
            g = groups.setdefault(group_of(m["template"]), {"ours": 0.0, "cudnn": 0.0, "tasks": []})
            ref = cudnn_ms(p, cache)
            g["ours"] += k["ms"]
            g["cudnn"] += ref
            g["tasks"].append({"workload": k["workload"], "op": k["op"], "config": k.get("config_source", ""),
                               "ours_ms": round(k["ms"], 5), "cudnn_ms": round(ref, 5)})
        for group, g in sorted(groups.items()):
            print(json.dumps({"model": name, "group": group, "kernels": len(g["tasks"]),
                              "ours_ms": round(g["ours"], 4), "cudnn_ms": round(g["cudnn"], 4),
                              "speed_vs_cudnn": round(g["cudnn"] / g["ours"], 3) if g["ours"] > 0 else None,
                              "torch": torch.__version__, "device": torch.cuda.get_device_name(0),
                              "tasks": g["tasks"]}), flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
