#!/usr/bin/env python3
"""kernrl serve against hostile clients, one rule at a time (compile-only, no GPU): web pages
(Origin, Host, simple POSTs), request smuggling (transfer codings), oversized chunk extensions,
trailers and headers, unknown methods and the metrics' labels, long problem names, the batch
cap, the connection cap, a slow drip after a 413, a WebSocket client that reads no replies, the
non-loopback bind without a token, and seeds no client sees. Each check waits on the event it
checks (a reply, a close), never on a time.

Usage: hardening_test.py --kernrl build/kernrl
"""
import argparse
import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time

import websockets

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_test as st  # noqa: E402
from serve_test import PROBLEM, Server, check, variant  # noqa: E402


def ws_frame(payload):
    """A client's text frame (masked with a zero key, so the payload goes as it is), its length in
    the shortest form, as RFC 6455 requires."""
    n = len(payload)
    size = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
    return bytes([0x81]) + size + b"\0\0\0\0" + payload


def raw(port, data, read_timeout=30):
    """Sends bytes on a fresh connection; returns everything the server sends until it closes
    (or until read_timeout passes without a byte)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=read_timeout)
    try:
        s.sendall(data)
    except OSError:
        pass
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except OSError:
        pass
    s.close()
    return out


def status_of(resp):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", resp)
    return int(m.group(1)) if m else None


def post_head(path, extra=b"", ctype=b"application/json"):
    return (b"POST " + path + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: " + ctype + b"\r\n"
            + extra)


def test_browser(s):
    st_, body, _ = s.http("GET", "/v1", headers={"Origin": "http://evil.example"})
    check("a request with a foreign Origin: 403", st_ == 403
          and body["error"]["code"] == "FORBIDDEN_ORIGIN", body)

    async def ws_origin():
        try:
            async with websockets.connect(s.ws_url(), origin="http://evil.example") as w:
                return (await st.ws_call(w, {"type": "state"}))["type"]
        except websockets.InvalidStatusCode as e:
            return e.status_code

    check("a WebSocket upgrade from a foreign origin is refused (403)", asyncio.run(ws_origin()) == 403)
    for path in (b"/v1/grade", b"/step"):
        body = json.dumps({"source": variant("simple-post")}).encode()
        resp = raw(s.port, post_head(path, b"Content-Length: %d\r\n\r\n" % len(body), b"text/plain")
                   + body)
        check(f"a cross-site 'simple' POST (text/plain) to {path.decode()}: 415",
              status_of(resp) == 415, resp[:300])
    st_, body, _ = s.http("GET", "/v1", headers={"Host": "attacker.example:%d" % s.port})
    check("a foreign Host (DNS rebinding): 403", st_ == 403
          and body["error"]["code"] == "FORBIDDEN_HOST", body)
    st_, body, _ = s.http("GET", "/v1", headers={"Host": "localhost:%d" % s.port})
    check("Host: localhost is this server", st_ == 200, body)
    recs = [r for r in s.trace_records() if "simple-post" in (r.get("file") or "")]
    check("nothing a web page sent was graded", recs == [], recs)


def test_smuggling(s):
    smuggled = b"GET /v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    for te in (b"identity", b"gzip", b"chunked, identity", b"xchunked", b"gzip, chunked"):
        resp = raw(s.port, post_head(b"/v1/grade", b"Transfer-Encoding: " + te + b"\r\n\r\n")
                   + smuggled)
        check(f"Transfer-Encoding: {te.decode()}: 400 and close, the body is not a request",
              status_of(resp) == 400 and resp.count(b"HTTP/1.1") == 1
              and b"BAD_TRANSFER_ENCODING" in resp, resp[:400])
    body = json.dumps({"source": variant("chunked-ok")}).encode()
    resp = raw(s.port, post_head(b"/v1/grade", b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
               + b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n")
    check("a chunked body is still read", status_of(resp) == 200, resp[:300])


def test_framing_limits(s):
    ext = b"1;" + b"a" * (300 * 1024) + b"\r\nx\r\n0\r\n\r\n"
    resp = raw(s.port, post_head(b"/v1/grade", b"Transfer-Encoding: chunked\r\n\r\n") + ext)
    check("a 300 KiB chunk extension: 431, not buffered", status_of(resp) == 431, resp[:300])
    many = b"".join(b"1;e=" + b"b" * 100 + b"\r\nx\r\n" for _ in range(60)) + b"0\r\n\r\n"
    resp = raw(s.port, post_head(b"/v1/grade", b"Transfer-Encoding: chunked\r\n\r\n") + many)
    check("chunk extensions over 4 KiB in all: 431", status_of(resp) == 431, resp[:300])
    trailer = b"1\r\n{\r\n0\r\nX-T: " + b"t" * (300 * 1024) + b"\r\n\r\n"
    resp = raw(s.port, post_head(b"/v1/grade", b"Transfer-Encoding: chunked\r\n\r\n") + trailer)
    check("a 300 KiB trailer: 431", status_of(resp) == 431, resp[:300])
    fields = b"".join(b"X-F%d: 1\r\n" % i for i in range(150))
    resp = raw(s.port, b"GET /v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n" + fields + b"\r\n")
    check("150 header fields: 431", status_of(resp) == 431, resp[:300])
    for n in range(40):
        raw(s.port, b"M" * 4000 + b"%d /v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % n)
    resp = raw(s.port, b"BREW /v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    check("an unknown method: 501", status_of(resp) == 501, resp[:300])
    _, text, _ = s.http("GET", "/metrics")
    labels = set(re.findall(r'kernrl_serve_http_requests_total\{endpoint="([^"]*)"', text))
    check("metrics labels stay a closed set", all(len(x) < 40 for x in labels)
          and not any("MMMM" in x for x in labels), labels)


def test_bounds(s):
    st_, body, _ = s.http("POST", "/v1/grade", {"source": "x", "problem": "A" * 900000})
    check("a 900 KB problem name: refused before any matching", st_ == 404
          and "at most 256" in body["error"]["message"], str(body)[:300])
    st_, body, _ = s.http("POST", "/reset", {"problem_id": "B" * 100000})
    check("a long OpenEnv problem_id: 404", st_ == 404, str(body)[:300])
    st_, body, _ = s.http("POST", "/v1/grade-batch", {"items": [{"source": "x"}] * 1025})
    check("a batch over 1024 items: 413 TOO_MANY_ITEMS", st_ == 413
          and body["error"]["code"] == "TOO_MANY_ITEMS", str(body)[:300])
    st_, body, _ = s.http("GET", "/v1")
    check("GET /v1 does not serve the run seed", st_ == 200 and "run_seed" not in body, body)


def test_drain_deadline(s):
    """After a 413 the rest of the body is read for at most a few seconds, however slowly it
    comes: the server closes the connection (a send then fails) while the client still drips."""
    c = socket.create_connection(("127.0.0.1", s.port), timeout=60)
    c.sendall(post_head(b"/v1/grade", b"Content-Length: 99999999999\r\n\r\n"))
    resp = c.recv(65536)
    closed = False
    t0 = time.time()
    while time.time() - t0 < 60:
        try:
            c.sendall(b"x")
        except OSError:
            closed = True
            break
        time.sleep(0.5)
    c.close()
    check("a body over the limit: 413, then the connection is closed though the client drips",
          status_of(resp) == 413 and closed, (resp[:200], closed))


def test_unread_ws(s):
    """A session that sends resets and never reads the replies: the server stops reading it, then
    drops it (its slot comes back), and other clients are served throughout."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", s.port))
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    sock.sendall(("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % key).encode())
    hs = b""
    while b"\r\n\r\n" not in hs:
        hs += sock.recv(1)
    msg = json.dumps({"type": "reset", "data": {"problem_id": PROBLEM}}).encode()
    frame = ws_frame(msg)
    sock.setblocking(False)
    sent, dropped = 0, False
    t0 = time.time()
    while time.time() - t0 < 120:
        try:
            sock.send(frame)
            sent += 1
        except BlockingIOError:
            time.sleep(0.05)  # the server stopped reading: wait for it to drop the session
        except OSError as e:
            dropped = True
            why = repr(e)
            break
    took = time.time() - t0
    sock.close()
    check("a session that reads no replies is read no further, then dropped",
          dropped, f"{sent} resets sent")
    print(f"     ({sent} resets sent; dropped after {took:.1f} s: {why if dropped else ''})")
    _, text, _ = s.http("GET", "/metrics")
    check("metrics count the dropped session",
          re.search(r'kernrl_serve_sessions_dropped_total\{reason="unread"\} [1-9]', text) is not None)
    st_, body, _ = s.http("GET", "/health")
    check("the server is healthy after it", st_ == 200, body)


def test_connection_cap(kernrl):
    s = Server(kernrl, "--max-connections", "8")
    try:
        held = [socket.create_connection(("127.0.0.1", s.port)) for _ in range(8)]
        st_, body, _ = None, None, None
        resp = raw(s.port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        check("over --max-connections: 503 TOO_MANY_CONNECTIONS", status_of(resp) == 503
              and b"TOO_MANY_CONNECTIONS" in resp, resp[:300])
        for c in held:
            c.close()
        for _ in range(200):  # the slots come back once the server sees the closes
            resp = raw(s.port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            if status_of(resp) == 200:
                break
            time.sleep(0.05)
        check("the slots come back", status_of(resp) == 200, resp[:200])
    finally:
        s.stop()


def test_bind(kernrl):
    p = subprocess.run([kernrl, "serve", "--compile-only", "--host", "0.0.0.0", "--port", "0"],
                       capture_output=True, text=True, timeout=120)
    check("a non-loopback bind without a token is refused", p.returncode == 2
          and "--allow-unauthenticated" in p.stderr, p.stderr)
    s = Server(kernrl, "--host", "0.0.0.0", "--allow-unauthenticated")
    try:
        check("--allow-unauthenticated serves it, with a warning",
              any("WARNING" in x and "without a token" in x for x in s.stderr), s.stderr)
        st_, body, _ = s.http("GET", "/health")
        check("... and answers", st_ == 200, body)
    finally:
        s.stop()


def test_seeds(s):
    recs = []
    for n in range(3):
        st_, rec, _ = s.http("POST", "/v1/grade", {"source": variant(f"seed-{n}"), "regrade": True})
        recs.append(rec)
    seeds = [r.get("seed") for r in recs]
    check("every answer gets its own seed", len(set(seeds)) == 3, seeds)
    _, _, h0 = s.http("POST", "/v1/grade", {"source": variant("seed-0")})
    _, _, h1 = s.http("POST", "/v1/grade", {"source": variant("seed-0")})
    _, _, h2 = s.http("POST", "/v1/grade", {"source": variant("seed-0"), "regrade": True})
    check("regrade: the cache is not asked", h0.get("x-kernrl-cache") == "miss"
          and h1.get("x-kernrl-cache") == "hit" and h2.get("x-kernrl-cache") == "miss", (h0, h1, h2))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernrl", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    kernrl = os.path.abspath(a.kernrl)
    if "KERNRL_CACHE" not in os.environ:
        os.environ["KERNRL_CACHE"] = str(st.scratch_dir("kernrl-hardening-cache-"))
    want = lambda n: not a.only or a.only == n  # noqa: E731
    s = Server(kernrl, "--max-body-mb", "1", "--jobs", "2")
    try:
        for name, fn in [("browser", test_browser), ("smuggling", test_smuggling),
                         ("framing", test_framing_limits), ("bounds", test_bounds),
                         ("drain", test_drain_deadline), ("unread", test_unread_ws),
                         ("seeds", test_seeds)]:
            if want(name):
                fn(s)
    finally:
        rc = s.stop()
        # rc None: it did not exit within stop()'s 60 s and was killed.
        check("the server stops on SIGTERM with exit 0", rc == 0,
              f"rc={rc} " + "".join(s.stderr)[-3000:] + "\n" + s.stuck)
    if want("cap"):
        test_connection_cap(kernrl)
    if want("bind"):
        test_bind(kernrl)
    for d in st.scratch:
        shutil.rmtree(d, ignore_errors=True)
    print(f"{st.results['passed']} passed, {st.results['failed']} failed")
    return 1 if st.results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
