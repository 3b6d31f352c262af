#!/usr/bin/env python3
"""A bounded soak of kernrl serve on the stand-in worker (tests/stand_in_worker.py, no GPU): a mix
of hostile clients runs for --seconds against one server while an honest client steps through
episodes and grades over HTTP. Throughout, the server's resident memory and the latency of
GET /health are sampled. Checked: both stay under generous bounds, every honest step is graded,
and every graded answer is in --trace. The bounds are wide on purpose (a loaded 2-core machine
must not fail them); the figures themselves are printed and, with --report, written as markdown.

Usage: soak_test.py --kernrl build/kernrl [--seconds 30] [--report FILE.md]
"""
import argparse
import asyncio
import datetime
import json
import os
import platform
import re
import shutil
import socket
import sys
import threading
import time

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_test as st  # noqa: E402
from serve_test import PROBLEM, Server, check, variant  # noqa: E402

RSS_BOUND_MB = 768      # over the server's resident memory when the soak starts
HEALTH_BOUND_S = 10.0   # the slowest GET /health allowed


def ws_frame(payload):
    """A client's text frame (masked with a zero key, so the payload goes as it is), its length in
    the shortest form, as RFC 6455 requires."""
    n = len(payload)
    size = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
    return bytes([0x81]) + size + b"\0\0\0\0" + payload


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def raw(port, data, timeout=20):
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        s.sendall(data)
        while s.recv(65536):
            pass
        s.close()
    except OSError:
        pass


def hostile(port, stop, counts):
    """Each kind in turn, again and again, until `stop`."""
    post = b"POST /v1/grade HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    kinds = {
        "chunk extension": lambda: raw(port, post + b"Transfer-Encoding: chunked\r\n\r\n1;"
                                       + b"e" * (2 << 20)),
        "trailer": lambda: raw(port, post + b"Transfer-Encoding: chunked\r\n\r\n1\r\n{\r\n0\r\nX: "
                               + b"t" * (2 << 20)),
        "smuggling": lambda: raw(port, post + b"Transfer-Encoding: chunked, identity\r\n\r\n"
                                 b"GET /v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        "method names": lambda: raw(port, os.urandom(8).hex().upper().encode() * 500
                                    + b" /v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
        "foreign origin": lambda: raw(port, b"GET /v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                      b"Origin: http://evil.example\r\n\r\n"),
        "long problem name": lambda: raw(port, post + b"Content-Length: 800020\r\n\r\n"
                                         + b'{"source":"x","problem":"' + b"A" * 800000 + b'"}'),
        "big batch": lambda: raw(port, post.replace(b"/v1/grade", b"/v1/grade-batch")
                                 + b"Connection: close\r\nContent-Length: %d\r\n\r\n" % len(BATCH)
                                 + BATCH),
        "oversized body": lambda: raw(port, post + b"Content-Length: 99999999\r\n\r\n"
                                      + b"x" * (2 << 20)),
    }
    while not stop.is_set():
        for name, fn in kinds.items():
            if stop.is_set():
                break
            fn()
            counts[name] = counts.get(name, 0) + 1


BATCH = json.dumps({"items": [{"source": "no kernel %d" % i} for i in range(1024)]}).encode()


def unread_ws(port, stop, counts):
    """WebSocket sessions that send resets and never read a reply, one after another."""
    msg = json.dumps({"type": "reset", "data": {"problem_id": PROBLEM}}).encode()
    frame = ws_frame(msg)
    while not stop.is_set():
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        try:
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                      b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                      b"Sec-WebSocket-Version: 13\r\n\r\n")
            hs = b""
            while b"\r\n\r\n" not in hs:  # a client sends no frame before the handshake's answer
                b = s.recv(1)
                if not b:
                    raise OSError("closed during the handshake")
                hs += b
            s.settimeout(1)
            while not stop.is_set():
                try:
                    s.send(frame)
                except socket.timeout:
                    continue
        except OSError:
            counts["unread sessions dropped"] = counts.get("unread sessions dropped", 0) + 1
        s.close()


def drip(port, stop, counts):
    """A body over the limit, then one byte a second."""
    while not stop.is_set():
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=30)
            c.sendall(b"POST /v1/grade HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json"
                      b"\r\nContent-Length: 99999999999\r\n\r\n")
            while not stop.is_set():
                c.sendall(b"x")
                time.sleep(1)
        except OSError:
            counts["drips cut"] = counts.get("drips cut", 0) + 1


def sampler(s, stop, samples):
    while not stop.is_set():
        t0 = time.monotonic()
        try:
            code, _, _ = s.http("GET", "/health")
        except OSError:
            code = None
        samples.append((rss_mb(s.proc.pid), time.monotonic() - t0, code))
        stop.wait(0.25)


async def with_retry(send, refused, tries=200):
    """What a client does when the server says it is at capacity (CAPACITY_REACHED, Retry-After):
    waits and sends again. The batches of the hostile clients can fill --max-queue."""
    for _ in range(tries):
        r = await send()
        if not refused(r):
            return r
        await asyncio.sleep(0.5)
    return r


async def honest_episode(s, n, steps):
    graded = 0
    async with websockets.connect(s.ws_url(), max_size=None) as ws:
        await st.ws_call(ws, {"type": "reset", "data": {"problem_id": PROBLEM}})
        for k in range(steps):
            msg = {"type": "step", "data": {"code": variant(f"soak-{n}-{k}")}}
            r = await with_retry(lambda: st.ws_call(ws, msg), lambda r: r.get("type") == "error"
                                 and r["data"].get("code") == "CAPACITY_REACHED")
            if r.get("type") == "observation":
                graded += 1
            if r.get("data", {}).get("done"):
                await st.ws_call(ws, {"type": "reset", "data": {"problem_id": PROBLEM}})
    return graded


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernrl", required=True)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--report", default="")
    a = ap.parse_args()
    kernrl = os.path.abspath(a.kernrl)
    os.environ.setdefault("KERNRL_CACHE", str(st.scratch_dir("kernrl-soak-cache-")))
    config = st.scratch_dir("kernrl-soak-config-") / "config.yaml"
    config.write_text("timeouts:\n  run_s: 5\n")
    s = Server(st.kernrl_on_stand_in_worker(kernrl), "--gpus", "0", "--jobs", "2",
               "--max-body-mb", "1", "--max-sessions", "16", "--max-connections", "64",
               "--config", str(config), compile_only=False)
    stop = threading.Event()
    counts, samples = {}, []
    rss0 = rss_mb(s.proc.pid)
    load = os.getloadavg()[0]  # the machine's load when the soak starts (others' work included)
    threads = [threading.Thread(target=sampler, args=(s, stop, samples), daemon=True)]
    threads += [threading.Thread(target=hostile, args=(s.port, stop, counts), daemon=True)
                for _ in range(3)]
    threads += [threading.Thread(target=unread_ws, args=(s.port, stop, counts), daemon=True)
                for _ in range(2)]
    threads += [threading.Thread(target=drip, args=(s.port, stop, counts), daemon=True)
                for _ in range(2)]
    for t in threads:
        t.start()
    honest_steps = honest_graded = http_graded = 0
    t_end = time.monotonic() + a.seconds
    n = 0
    try:
        while time.monotonic() < t_end:
            honest_steps += 3
            honest_graded += asyncio.run(honest_episode(s, n, 3))
            req = {"source": variant(f"soak-http-{n}"), "label": f"soak-http-{n}"}
            for _ in range(200):
                code, rec, _ = s.http("POST", "/v1/grade", req)
                if code != 503:
                    break
                time.sleep(0.5)
            http_graded += code == 200 and rec.get("status") == "correct"
            n += 1
    finally:
        stop.set()
        for t in threads:
            t.join(60)
        _, metrics, _ = s.http("GET", "/metrics")
        rc = s.stop()
    graded = sum(int(m) for m in re.findall(
        r'kernrl_serve_evaluations_total\{status="[a-z_]+"\} (\d+)', metrics))
    recs = s.trace_records()
    labels = {r.get("file") for r in recs}
    peak_rss = max(x[0] for x in samples)
    lat = sorted(x[1] for x in samples)
    p50, worst = lat[len(lat) // 2], lat[-1]
    health_ok = sum(1 for x in samples if x[2] == 200)
    print(f"     soak: {a.seconds:.0f} s, {honest_steps} honest steps, {n} HTTP grades; "
          f"RSS {rss0:.0f} -> peak {peak_rss:.0f} MB; /health p50 {p50 * 1000:.0f} ms, "
          f"max {worst * 1000:.0f} ms over {len(samples)} samples; hostile: {counts}")
    check("soak: the hostile clients ran", sum(counts.values()) > 0, counts)
    check(f"soak: resident memory stays within {RSS_BOUND_MB} MB of the start",
          peak_rss - rss0 < RSS_BOUND_MB, (rss0, peak_rss))
    check(f"soak: GET /health always answers 200 within {HEALTH_BOUND_S:.0f} s",
          health_ok == len(samples) and worst < HEALTH_BOUND_S, (health_ok, len(samples), worst))
    check("soak: every honest step is graded", honest_graded == honest_steps
          and http_graded == n, (honest_graded, honest_steps, http_graded, n))
    check("soak: every graded answer is in --trace", graded == len(recs)
          and all(f"soak-http-{k}" in labels for k in range(n)), (graded, len(recs)))
    check("soak: the server stops with exit 0", rc == 0, "".join(s.stderr)[-2000:])
    if a.report:
        cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo")
                    if ln.startswith("model name")), platform.processor())
        with open(a.report, "w") as f:
            f.write(soak_report(a, cpu, rss0, peak_rss, p50, worst, samples, honest_steps, n,
                                counts, graded, len(recs), load))
    for d in st.scratch:
        shutil.rmtree(d, ignore_errors=True)
    print(f"{st.results['passed']} passed, {st.results['failed']} failed")
    return 1 if st.results["failed"] else 0


def soak_report(a, cpu, rss0, peak, p50, worst, samples, steps, n, counts, graded, recs, load):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = "\n".join(f"| {k} | {v} |" for k, v in sorted(counts.items()))
    return f"""# kernrl serve under a soak of hostile clients

Measured by `tests/serve/soak_test.py --seconds {a.seconds:.0f} --report ...` on {now}, on a
machine with {os.cpu_count()} CPUs ({cpu}) and no GPU: the server grades on
the stand-in worker (tests/stand_in_worker.py), so the figures are the service's own, not a
kernel's. The machine's load average when the soak started was {load:.1f} (other work included).

| Figure | Value |
| --- | --- |
| soak length | {a.seconds:.0f} s |
| resident memory at the start | {rss0:.0f} MB |
| peak resident memory | {peak:.0f} MB (bound checked: start + {RSS_BOUND_MB} MB) |
| GET /health latency, median | {p50 * 1000:.1f} ms |
| GET /health latency, worst | {worst * 1000:.1f} ms (bound checked: {HEALTH_BOUND_S:.0f} s) |
| /health samples (all answered 200) | {len(samples)} |
| honest WebSocket steps, all graded | {steps} |
| honest HTTP grades, all graded | {n} |
| graded answers / records in --trace | {graded} / {recs} |

Hostile requests sent (each kind in turn by three clients, plus two WebSocket clients that never
read and two that drip a body after a 413):

| Kind | Count |
| --- | --- |
{rows}
"""


if __name__ == "__main__":
    sys.exit(main())
