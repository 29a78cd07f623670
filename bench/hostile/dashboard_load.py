#!/usr/bin/env python3
"""Issue 46, P6: the dashboard as a public port under hostile load.

Starts `tunefarm dashboard` on a records database, then at once: six slow readers of
/api/trials?limit=200000 (they read 4 KiB a second), and 400 mixed /api/* requests 50 at a time
(task, compare, model, trials, overview, last). Meanwhile it asks /api/last every 0.2 s and samples
the dashboard's resident memory every 0.1 s. Prints the peak RSS, the slowest /api/last, and the
answers by status. The bars: peak RSS under 500 MB and /api/last within a second throughout.

    bench/hostile/dashboard_load.py --db norm.db [--tunefarm build/bin/tunefarm]
    (norm.db: `build/bin/bench_dashboard --trials 200000 --keep norm.db`)
"""
import argparse
import collections
import concurrent.futures
import json
import re
import socket
import subprocess
import threading
import time


def get(port, path, timeout=30):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path).encode())
    data = b""
    while True:
        chunk = s.recv(1 << 16)
        if not chunk:
            break
        data += chunk
    s.close()
    m = re.match(rb"HTTP/1\.[01] (\d+)", data)
    return (int(m.group(1)) if m else 0), data.split(b"\r\n\r\n", 1)[-1]


def slow_reader(port, path, stop):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=60)
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % path).encode())
        while not stop.is_set():
            if not s.recv(4096):
                break
            time.sleep(1.0)
        s.close()
    except OSError:
        pass


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--tunefarm", default="build/bin/tunefarm")
    args = ap.parse_args()
    dash = subprocess.Popen([args.tunefarm, "dashboard", "--records", args.db, "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    port = None
    for line in dash.stdout:
        m = re.search(r"127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
            break
    status, body = get(port, "/api/workloads")
    workloads = json.loads(body)["workloads"]
    task_ids = [w["id"] for w in workloads]
    keys = [w["key"] for w in workloads]
    stop = threading.Event()
    peak = [0.0]

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mb(dash.pid))
            time.sleep(0.1)

    last_ms = []

    def probe():
        while not stop.is_set():
            t0 = time.monotonic()
            code, _ = get(port, "/api/last")
            last_ms.append(((time.monotonic() - t0) * 1000, code))
            time.sleep(0.2)

    threads = [threading.Thread(target=sample), threading.Thread(target=probe)]
    threads += [threading.Thread(target=slow_reader, args=(port, "/api/trials?db=0&after=0&limit=200000", stop))
                for _ in range(6)]
    for t in threads:
        t.start()
    paths = []
    for i in range(400):
        kind = i % 6
        if kind == 0:
            paths.append("/api/task?id=%d" % task_ids[i % len(task_ids)])
        elif kind == 1:
            paths.append("/api/compare?workload=" + keys[i % len(keys)].replace("|", "%7C"))
        elif kind == 2:
            paths.append("/api/model?job=1")
        elif kind == 3:
            paths.append("/api/trials?after=0&limit=200000")
        elif kind == 4:
            paths.append("/api/overview")
        else:
            paths.append("/api/last")
    codes = collections.Counter()
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(50) as pool:
        for code, _ in pool.map(lambda p: get(port, p), paths):
            codes[code] += 1
    mixed_s = time.monotonic() - t0
    time.sleep(2)
    stop.set()
    for t in threads:
        t.join()
    dash.terminate()
    dash.wait()
    worst = max(ms for ms, _ in last_ms)
    print("400 mixed requests in %.1f s: %s" % (mixed_s, dict(sorted(codes.items()))))
    print("/api/last: %d probes, slowest %.0f ms, statuses %s" %
          (len(last_ms), worst, dict(collections.Counter(c for _, c in last_ms))))
    print("dashboard peak RSS: %.0f MB" % peak[0])
    ok = peak[0] < 500 and worst < 1000 and all(c == 200 for _, c in last_ms)
    print("bars (RSS < 500 MB, /api/last < 1 s, always 200): %s" % ("met" if ok else "MISSED"))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
