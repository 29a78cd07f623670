#!/usr/bin/env python3
"""Each kernel's speedup from 1 to N threads in a whole model, as the model runs it (issue 34).

Compiles each model (untuned, or with --records), then alternates `tunefarm run ARTIFACT --profile
--json --threads 1` and `--threads N` for --rounds rounds; a kernel's time at each thread count is its
best over the rounds (each round the mean of --repeat profiled runs). Prints, per model, the kernels
slowest first with their 1-thread and N-thread times and speedup, marking those below --bar whose
1-thread time is at least --floor-us (issue 34: no kernel below 1.5x at 2 threads unless it takes
under 20 us), then the model's summed kernel time and its parallel efficiency (1-thread sum / (N x
N-thread sum)). Writes bench/results/threads.json.

    bench/models/bench_threads.py [--models resnet-18,mobilenet-v2] [--threads 2] [--rounds 5]
        [--repeat 10] [--records DB] [--build build] [--top 15]

Timings on a shared 2-core machine are noisy: compare within one run."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out[out.index("{"):])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="resnet-18,mobilenet-v2", help="zoo names or .onnx paths, comma-separated")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--records", help="compile with this records database (default: untuned, --records none)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--bar", type=float, default=1.5, help="speedup below which a kernel is marked (default 1.5)")
    p.add_argument("--floor-us", type=float, default=20.0, help="kernels faster than this at 1 thread are not marked")
    p.add_argument("--top", type=int, default=15, help="kernels listed per model (default 15; 0: all)")
    p.add_argument("--json", default=os.path.join(ROOT, "bench", "results", "threads.json"))
    args = p.parse_args()
    cli = os.path.join(args.build, "bin", "tunefarm")
    result = {"threads": args.threads, "rounds": args.rounds, "repeat": args.repeat, "records": args.records, "models": []}
    with tempfile.TemporaryDirectory() as work:
        for model in args.models.split(","):
            artifact = os.path.join(work, os.path.basename(model) + ".tfa")
            subprocess.run([cli, "compile", model, "--records", args.records or "none", "-o", artifact], check=True,
                           capture_output=True)
            best = {1: None, args.threads: None}
            kernels = None
            for r in range(args.rounds):
                for t in ((1, args.threads) if r % 2 == 0 else (args.threads, 1)):
                    run = run_json([cli, "run", artifact, "--threads", str(t), "--repeat", str(args.repeat), "--profile", "--json"])
                    kernels = run["kernels"]
                    ms = [k["ms"] for k in kernels]
                    best[t] = ms if best[t] is None else [min(a, b) for a, b in zip(best[t], ms)]
                print(f"{model}: round {r + 1}/{args.rounds} done", file=sys.stderr)
            rows = []
            for k, info in enumerate(kernels):
                one, many = best[1][k] * 1e3, best[args.threads][k] * 1e3
                rows.append({"op": info["op"], "workload": info.get("workload", ""), "us_1t": one, "us_nt": many,
                             "speedup": one / many if many > 0 else 0.0})
            sum1, sumn = sum(r["us_1t"] for r in rows), sum(r["us_nt"] for r in rows)
            marked = [r for r in rows if r["speedup"] < args.bar and r["us_1t"] >= args.floor_us]
            result["models"].append({"model": model, "kernels": rows, "sum_us_1t": sum1, "sum_us_nt": sumn,
                                     "parallel_efficiency": sum1 / (args.threads * sumn) if sumn > 0 else 0.0,
                                     "below_bar": len(marked)})
            print(f"\n## {model}: {len(rows)} kernels, summed {sum1:.0f} us at 1 thread, {sumn:.0f} us at {args.threads}: "
                  f"speedup {sum1 / sumn:.2f}x, parallel efficiency {sum1 / (args.threads * sumn):.2f}; "
                  f"{len(marked)} kernels of >= {args.floor_us:.0f} us below {args.bar}x\n")
            print(f"| kernel | workload | 1 thread (us) | {args.threads} threads (us) | speedup |")
            print("|---|---|---|---|---|")
            listed = sorted(rows, key=lambda r: -r["us_1t"])
            for r in listed[:args.top] if args.top > 0 else listed:
                mark = " **below**" if r in marked else ""
                print(f"| {r['op'][:48]} | {r['workload'][:60]} | {r['us_1t']:.1f} | {r['us_nt']:.1f} | {r['speedup']:.2f}x{mark} |")
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
