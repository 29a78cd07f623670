#!/usr/bin/env python3
"""Markdown tables and the issue's bars from bench_tuning's JSON.

Usage: python3 bench/tuning/summarize_curves.py CURVES.json
Bars: xgb reaches >= 90% of its 512-trial best within 128 trials on at least 3 of the tasks, and is
ahead of random at 64 trials on all; tuning throughput >= 5 measured configs/s over all xgb runs.
"""
import json
import sys


def main():
    runs = json.load(open(sys.argv[1]))
    checkpoints = sorted({int(k) for r in runs for k in r["best_at"]})
    print("| task | tuner | " + " | ".join(f"@{c}" for c in checkpoints) + " | s | configs/s |")
    print("|---|---|" + "---|" * len(checkpoints) + "---|---|")
    for r in runs:
        cells = " | ".join(f"{r['best_at'][str(c)]:.1f}" for c in checkpoints)
        print(f"| {r['task']} ({r['label']}) | {r['tuner']} | {cells} | {r['seconds']:.0f} | {r['configs_per_second']:.2f} |")
    by = {(r["task"], r["tuner"]): r for r in runs}
    tasks = sorted({r["task"] for r in runs})
    print()
    within, ahead = 0, 0
    last = str(checkpoints[-1])
    for t in tasks:
        x = by.get((t, "xgb"))
        rnd = by.get((t, "random"))
        if not x:
            continue
        share = x["best_at"]["128"] / x["best_at"][last] if x["best_at"][last] else 0
        within += share >= 0.9
        line = f"task {t}: xgb @128 = {100 * share:.1f}% of its @{last} best"
        if rnd:
            ahead += x["best_at"]["64"] > rnd["best_at"]["64"]
            line += f"; @64 xgb {x['best_at']['64']:.1f} vs random {rnd['best_at']['64']:.1f}"
        print(line)
    xgb = [r for r in runs if r["tuner"] == "xgb"]
    trials = sum(r["trials"] for r in xgb)
    seconds = sum(r["seconds"] for r in xgb)
    print(f"xgb within 90% at 128 trials: {within}/{len(tasks)} tasks (bar: >= 3); ahead of random at 64: {ahead}/{len(tasks)} (bar: all)")
    print(f"xgb tuning throughput: {trials} trials in {seconds:.0f} s = {trials / seconds:.2f} configs/s (bar: >= 5)")
    for r in xgb:
        t = r.get("time_s", {})
        if t:
            print(f"  task {r['task']}: search {t['search']:.1f} s, build {t['build']:.1f} s, measure {t['measure']:.1f} s, "
                  f"record {t['record']:.1f} s")


if __name__ == "__main__":
    main()
