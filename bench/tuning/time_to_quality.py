#!/usr/bin/env python3
"""Time to a good model: a tuning run's whole-model latency estimate against tuning time.

Usage:
  tunefarm tasks MODEL --json > tasks.json
  python3 bench/tuning/time_to_quality.py --tasks tasks.json --records RUN.db [--threads N]
        [--reference LONG.db] [--every 10]

The estimate at time t is what apply-history-best would pick from the trials recorded by then: per
node of the model, the fastest kernel measured for any task that implements it (an alternative
implementation competes with the default one), summed over the nodes. It starts once every node has
a measured kernel (each task measures its fallback config first). It is the sum of kernel times
measured alone, not a model run: it ranks tuning runs, `tunefarm run` times the model.

Prints the curve (elapsed seconds, estimate in ms) every --every seconds, then how long the run took
to come within 5% and 2% of the reference: the final estimate of --reference (a longer tune of the
same model on the same machine, e.g. 30 minutes), else of this run itself.
"""
import argparse
import json
import sqlite3
import sys
from datetime import datetime


def load_trials(path, threads):
    """(seconds since the run's first trial, workload key, template, mean_ms) of successful trials."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT t.created_at, w.key, w.template, t.mean_ms FROM trials t "
        "JOIN workloads w ON w.id = t.workload_id "
        "WHERE t.status = 'ok' AND t.mean_ms > 0 AND t.threads = ? ORDER BY t.id",
        (threads,),
    ).fetchall()
    con.close()
    if not rows:
        sys.exit(f"time_to_quality: {path} has no successful trial measured at {threads} thread(s)")
    stamps = [datetime.fromisoformat(r[0].replace("Z", "+00:00")) for r in rows]
    start = min(stamps)
    return [((s - start).total_seconds(), r[1], r[2], r[3]) for s, r in zip(stamps, rows)]


def curve(trials, tasks):
    """[(seconds, estimate ms)] after each trial that changes the estimate, once every node has one."""
    by_task = {(t["workload"], t["template"]): t for t in tasks}
    nodes = sorted({n for t in tasks for n in t["nodes"]})
    best = {}  # (workload, template) -> best mean_ms so far
    points = []
    for seconds, key, template, ms in trials:
        task = (key, template)
        if task not in by_task or ms >= best.get(task, float("inf")):
            continue
        best[task] = ms
        per_node = {}
        for t in tasks:
            b = best.get((t["workload"], t["template"]))
            if b is None:
                continue
            for n in t["nodes"]:
                per_node[n] = min(per_node.get(n, float("inf")), b)
        if len(per_node) == len(nodes):
            points.append((seconds, sum(per_node.values())))
    return points


def time_within(points, target):
    for seconds, estimate in points:
        if estimate <= target:
            return seconds
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tasks", required=True, help="tunefarm tasks MODEL --json")
    ap.add_argument("--records", required=True, help="the tuning run's records database (SQLite)")
    ap.add_argument("--reference", help="a longer tune's records database: its final estimate is the goal")
    ap.add_argument("--threads", type=int, default=1, help="the thread count the trials were measured at")
    ap.add_argument("--every", type=float, default=10, help="seconds between printed curve points")
    args = ap.parse_args()
    with open(args.tasks) as f:
        tasks = json.load(f)
    points = curve(load_trials(args.records, args.threads), tasks)
    if not points:
        sys.exit("time_to_quality: no point where every node of the model has a measured kernel")
    goal_points = curve(load_trials(args.reference, args.threads), tasks) if args.reference else points
    if not goal_points:
        sys.exit("time_to_quality: the reference has no point where every node has a measured kernel")
    goal = goal_points[-1][1]
    print("| elapsed s | estimate ms |")
    print("|---|---|")
    next_print = 0.0
    for seconds, estimate in points:
        if seconds >= next_print:
            print(f"| {seconds:.0f} | {estimate:.3f} |")
            next_print = seconds + args.every
    print(f"| {points[-1][0]:.0f} | {points[-1][1]:.3f} | (last)")
    print(f"\nreference estimate: {goal:.3f} ms ({'--reference' if args.reference else 'this run'}, "
          f"after {goal_points[-1][0]:.0f} s)")
    for pct in (5, 2):
        t = time_within(points, goal * (1 + pct / 100))
        print(f"within {pct}%: " + (f"{t:.0f} s" if t is not None else "not reached"))


if __name__ == "__main__":
    main()
