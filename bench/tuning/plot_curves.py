#!/usr/bin/env python3
"""Plot bench_tuning's JSON: best GFLOP/s vs trials, one panel per task, one line per tuner.

Usage: /usr/bin/python3 bench/tuning/plot_curves.py CURVES.json OUT.png
Needs matplotlib (Debian: apt-get install python3-matplotlib; it lives under /usr/bin/python3).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    runs = json.load(open(sys.argv[1]))
    tasks = sorted({r["task"] for r in runs})
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.2 * len(tasks), 3.6), squeeze=False)
    colors = {"xgb": "tab:blue", "ga": "tab:orange", "random": "tab:gray", "grid": "tab:green"}
    for ax, task in zip(axes[0], tasks):
        for r in (r for r in runs if r["task"] == task):
            xs = [p[0] for p in r["curve"]]
            ys = [p[1] for p in r["curve"]]
            ax.step(xs, ys, where="post", label=r["tuner"], color=colors.get(r["tuner"]))
        label = next(r["label"] for r in runs if r["task"] == task)
        ax.set_title(f"task {task} ({label})", fontsize=10)
        ax.set_xscale("log", base=2)
        ax.set_xticks([16, 32, 64, 128, 256, 512])
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("trials")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("best GFLOP/s (1 thread)")
    axes[0][0].legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
