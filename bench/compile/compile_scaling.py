#!/usr/bin/env python3
"""Compile time per graph node on long models (issue 30: a 20,000-node model took 30 s, 3.3 ms a node).

Writes chain models of N nodes (Add of a constant and Relu, alternating, on a [1, 64] tensor: the
shape of a long element-wise tail or an unrolled loop), compiles each with `tunefarm compile --records
none` best of --rounds, and prints seconds and milliseconds per node. No Python package is needed:
the ONNX protobuf is written by hand.

    bench/compile/compile_scaling.py [--tunefarm build/bin/tunefarm] [--nodes 2000,20000] [--rounds 3]
"""
import argparse
import os
import struct
import subprocess
import tempfile
import time


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(num, wire, payload):
    key = varint((num << 3) | wire)
    return key + varint(payload) if wire == 0 else key + varint(len(payload)) + payload


def text(num, s):
    return field(num, 2, s.encode())


def chain_model(nodes, width=64):
    body = []
    prev = "x"
    for i in range(nodes):
        op = "Add" if i % 2 == 0 else "Relu"
        out = "v%d" % i
        inputs = [prev, "c"] if op == "Add" else [prev]
        body.append(field(1, 2, b"".join(text(1, s) for s in inputs) + text(2, out) + text(3, "n%d" % i) + text(4, op)))
        prev = out
    const = field(5, 2, field(1, 0, width) + field(2, 0, 1) + field(4, 2, struct.pack("<%df" % width, *[0.01] * width)) + text(8, "c"))
    shape = field(2, 2, field(1, 2, field(1, 0, 1)) + field(1, 2, field(1, 0, width)))
    tensor_type = field(1, 0, 1) + shape
    graph_input = field(11, 2, text(1, "x") + field(2, 2, field(1, 2, tensor_type)))
    graph = b"".join(body) + text(2, "chain") + const + graph_input + field(12, 2, text(1, prev))
    return field(1, 0, 8) + field(8, 2, text(1, "") + field(2, 0, 13)) + field(7, 2, graph)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tunefarm", default="build/bin/tunefarm")
    ap.add_argument("--nodes", default="2000,20000")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        print("%8s %10s %12s" % ("nodes", "best s", "ms per node"))
        for n in [int(x) for x in args.nodes.split(",")]:
            model = os.path.join(tmp, "chain%d.onnx" % n)
            with open(model, "wb") as f:
                f.write(chain_model(n))
            best = float("inf")
            for _ in range(args.rounds):
                start = time.perf_counter()
                subprocess.run([args.tunefarm, "compile", model, "--records", "none", "-o", model + ".tfa"], check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                best = min(best, time.perf_counter() - start)
            print("%8d %10.2f %12.3f" % (n, best, 1000 * best / n))


if __name__ == "__main__":
    main()
