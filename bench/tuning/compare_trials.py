#!/usr/bin/env python3
"""Trial quality across two tuning runs: the same configs' times in both databases.

Usage: python3 bench/tuning/compare_trials.py BASE.db OTHER.db [--threads N]

For every config of the same task (workload and template) measured successfully in both, the ratio of
its time in OTHER to its time in BASE; prints the median, least and greatest ratio per task and the
median over all. Two runs of the same measuring setup read about 1.0 on median (0.993 on a 2-core
machine, bench/RESULTS.md, issue 50): a median away from 1 means one setup times kernels differently
(a build beside the measurement, a shorter warm-up), which can reorder the configs the search keeps.
"""
import argparse
import sqlite3
import statistics
import sys
from collections import defaultdict


def load(path, threads):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT w.key, w.template, t.config_index, t.mean_ms FROM trials t "
        "JOIN workloads w ON w.id = t.workload_id "
        "WHERE t.status = 'ok' AND t.mean_ms > 0 AND t.threads = ?",
        (threads,),
    ).fetchall()
    con.close()
    return {(key, template, config): ms for key, template, config, ms in rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("base")
    ap.add_argument("other")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    base, other = load(args.base, args.threads), load(args.other, args.threads)
    ratios = defaultdict(list)
    for k in base.keys() & other.keys():
        ratios[(k[0], k[1])].append(other[k] / base[k])
    if not ratios:
        sys.exit("compare_trials: no config was measured successfully in both databases")
    print("| task | template | configs | median | least | greatest |")
    print("|---|---|---|---|---|---|")
    everything = []
    for (key, template), r in sorted(ratios.items()):
        everything += r
        shape = "|".join(key.split("|")[1:3])
        print(f"| {shape} | {template} | {len(r)} | {statistics.median(r):.3f} | {min(r):.3f} | {max(r):.3f} |")
    print(f"\nall: {len(everything)} configs, median ratio {statistics.median(everything):.3f}")


if __name__ == "__main__":
    main()
