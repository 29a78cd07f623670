#!/usr/bin/env python3
"""The dashboard under slowloris (issue 30): starts `tunefarm dashboard` over a records database,
opens N connections that send a request line and then one header byte every --drip seconds,
never finishing, and meanwhile times --gets well-behaved `GET /api/config` requests; then sends
SIGTERM with the slow connections still open and times the exit. Prints the latencies (max, median),
how many slow connections the server answered (408/503) and the stop time.

    bench/dashboard/slowloris.py [--tunefarm build/bin/tunefarm] [--connections 200] [--drip 2] [--gets 20]
"""
import argparse
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time


def get(address, path, host=None):
    h, p = address.rsplit(":", 1)
    start = time.perf_counter()
    with socket.create_connection((h, int(p)), timeout=10) as s:
        s.sendall(("GET %s HTTP/1.0\r\nHost: %s\r\n\r\n" % (path, host or address)).encode())
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ", 2)[1]), time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tunefarm", default="build/bin/tunefarm")
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--drip", type=float, default=2.0)
    ap.add_argument("--gets", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "records.db")
        line = os.path.join(tmp, "trial.jsonl")
        with open(line, "w") as f:
            f.write('{"workload":"dense|N1_I32|O10|NC|float32","template":"dense_pack","target":"llvm -mcpu=x86-64","status":"ok",'
                    '"config_index":0,"config":"{}","mean_ms":0.5,"costs_ms":[0.5]}\n')
        subprocess.run([args.tunefarm, "records", "import", line, "--records", db], check=True, stdout=subprocess.DEVNULL)
        proc = subprocess.Popen([args.tunefarm, "dashboard", "--records", db, "--listen", "127.0.0.1:0"],
                                stdout=subprocess.PIPE, text=True)
        first = proc.stdout.readline()
        address = first.split("http://", 1)[1].strip().rstrip("/")
        slow, stop = [], threading.Event()
        for _ in range(args.connections):
            h, p = address.rsplit(":", 1)
            s = socket.create_connection((h, int(p)))
            s.sendall(("GET / HTTP/1.1\r\nHost: %s\r\n" % address).encode())
            s.setblocking(False)
            slow.append(s)
        answered = set()

        def drip():
            while not stop.is_set():
                for i, s in enumerate(slow):
                    if i in answered:
                        continue
                    try:
                        if s.recv(256) is not None:
                            answered.add(i)
                            continue
                    except BlockingIOError:
                        pass
                    except OSError:
                        answered.add(i)
                        continue
                    try:
                        s.send(b"X")
                    except OSError:
                        answered.add(i)
                stop.wait(args.drip)

        t = threading.Thread(target=drip)
        t.start()
        time.sleep(2 * args.drip)
        latencies = []
        for _ in range(args.gets):
            status, seconds = get(address, "/api/config")
            assert status == 200, status
            latencies.append(seconds)
        rebind, _ = get(address, "/api/config", host="attacker.example:80")
        start = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        stopped = time.perf_counter() - start
        stop.set()
        t.join()
        for s in slow:
            s.close()
        print("%d slow connections (a byte every %.1f s): GET /api/config x%d: 200, max %.1f ms, median %.1f ms; "
              "slow connections answered: %d; Host: attacker.example -> %d; SIGTERM -> exit %d in %.2f s"
              % (args.connections, args.drip, args.gets, 1000 * max(latencies), 1000 * statistics.median(latencies),
                 len(answered), rebind, code, stopped))


if __name__ == "__main__":
    main()
