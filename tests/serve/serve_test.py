#!/usr/bin/env python3
"""kernrl serve end to end on a machine without a GPU (compile-only): the server is started, then
driven over HTTP and WebSocket by several concurrent clients (Debian's python3-websockets), with
malformed messages, unknown types, oversized requests, capacity refusal, a bearer token, --stdio,
and SIGTERM with work in flight.

Usage: serve_test.py --kernrl build/kernrl [--only NAME]
"""
import argparse
import asyncio
import http.client
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import websockets

ROOT = Path(__file__).resolve().parents[2]
SOLUTION = (ROOT / "problems/L1/23_Softmax/solution.cu").read_text()
PROBLEM = "L1_23_Softmax"

results = {"passed": 0, "failed": 0}
scratch = []  # temporary folders, removed at the end


def scratch_dir(prefix):
    d = Path(tempfile.mkdtemp(prefix=prefix))
    scratch.append(d)
    return d


def check(name, cond, detail=""):
    if cond:
        results["passed"] += 1
        print(f"ok   {name}", flush=True)
    else:
        results["failed"] += 1
        print(f"FAIL {name} {detail}"[:2000], flush=True)
    return cond


def variant(n):
    """The bundled solution with a comment that makes its bytes (and cache key) unique."""
    return f"// variant {n}\n" + SOLUTION


class Server:
    """A `kernrl serve` process on a free port, its stderr collected."""

    def __init__(self, kernrl, *args, env=None, compile_only=True):
        self.trace = scratch_dir("kernrl-serve-test-") / "trace.jsonl"
        cmd = [kernrl, "serve", "--port", "0", "--trace", str(self.trace), *args]
        if compile_only:
            cmd.insert(2, "--compile-only")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, env=env)
        self.stderr = []
        self.stuck = ""  # what the process was doing when stop() gave up waiting for it
        self.port = None
        ready = threading.Event()

        def read():
            for line in self.proc.stderr:
                self.stderr.append(line)
                m = re.search(r"listening on http://[^:]+:(\d+)", line)
                if m:
                    self.port = int(m.group(1))
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(120) or self.port is None:
            self.proc.kill()
            raise RuntimeError("the server did not start: " + "".join(self.stderr))

    def http(self, method, path, body=None, headers=None, raw=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        h = {"Content-Type": "application/json"}
        h.update(headers or {})
        conn.request(method, path, body=data, headers=h)
        r = conn.getresponse()
        text = r.read().decode()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        conn.close()
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = text
        return r.status, parsed, hdrs

    def ws_url(self):
        return f"ws://127.0.0.1:{self.port}/ws"

    def stop(self, sig=signal.SIGTERM, timeout=60):
        if sig is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.stuck = describe_process(self.proc.pid)
            self.proc.kill()
            return None

    def trace_records(self):
        if not self.trace.exists():
            return []
        lines = self.trace.read_text().splitlines()
        return [json.loads(line) for line in lines]


def describe_process(pid):
    """What a process that did not exit is doing: each thread's state, kernel wait channel and
    system call (from /proc, no ptrace needed), its children, and gdb's backtraces when gdb is
    installed and may attach."""
    out = [f"process {pid} did not exit; its threads:"]
    task = f"/proc/{pid}/task"
    try:
        tids = sorted(os.listdir(task), key=int)
    except OSError as e:
        return f"process {pid}: {e}"
    for tid in tids:
        def read(name):
            try:
                with open(f"{task}/{tid}/{name}") as f:
                    return f.read().strip()
            except OSError:
                return "?"
        stat = read("stat")
        state = stat.rsplit(")", 1)[-1].split()[0] if ")" in stat else "?"
        out.append(f"  {tid} {read('comm')} state={state} wchan={read('wchan')} "
                   f"syscall={read('syscall').split(' ')[0]}")
    try:
        ps = subprocess.run(["ps", "-o", "pid,stat,etime,args", "--ppid", str(pid)],
                            capture_output=True, text=True, timeout=10)
        out.append("children:\n" + ps.stdout)
    except (OSError, subprocess.SubprocessError) as e:
        out.append(f"children: ps failed ({e})")
    if shutil.which("gdb"):
        try:
            bt = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx",
                                 "-ex", "thread apply all bt 12"],
                                capture_output=True, text=True, timeout=60)
            out.append("gdb:\n" + bt.stdout[-12000:] + bt.stderr[-2000:])
        except (OSError, subprocess.SubprocessError) as e:
            out.append(f"gdb failed ({e})")
    return "\n".join(out)


async def ws_call(ws, msg):
    await ws.send(msg if isinstance(msg, str) else json.dumps(msg))
    return json.loads(await asyncio.wait_for(ws.recv(), 120))


# ---- tests ----

def test_http_openenv(s):
    st, body, _ = s.http("GET", "/health")
    check("GET /health", st == 200 and body == {"status": "healthy"}, body)
    st, body, _ = s.http("GET", "/metadata")
    check("GET /metadata", st == 200 and body.get("name") == "kernrl" and "version" in body, body)
    st, body, _ = s.http("GET", "/schema")
    check("GET /schema", st == 200 and set(body) == {"action", "observation", "state"}
          and body["action"]["required"] == ["code"], body)
    st, body, _ = s.http("GET", "/state")
    check("GET /state (a fresh environment)", st == 200 and body["step_count"] == 0
          and body["episode_id"] is None and body["max_turns"] == 10, body)
    st, body, _ = s.http("POST", "/reset", {"problem_id": PROBLEM})
    obs = body.get("observation", {}) if isinstance(body, dict) else {}
    check("POST /reset", st == 200 and obs.get("problem_id") == PROBLEM and body["reward"] == 0.0
          and body["done"] is False and "/* kernrl" in obs.get("problem_description", ""), body)
    st, body, _ = s.http("POST", "/reset", {"problem_id": "Softmax"})
    check("POST /reset finds a problem by substring", st == 200
          and "Softmax" in body["observation"]["problem_id"], body)
    st, body, _ = s.http("POST", "/reset", {"problem_id": "L77_nothing"})
    check("POST /reset unknown problem: 404", st == 404 and "not found" in body["detail"], body)
    st, body, _ = s.http("POST", "/reset", raw=b"{nope")
    check("POST /reset bad JSON: 422", st == 422 and body["detail"][0]["type"] == "json_invalid",
          body)
    st, body, _ = s.http("POST", "/reset", {"seed": -3})
    check("POST /reset bad seed: 422", st == 422, body)
    st, body, h = s.http("POST", "/step", {"action": {"code": variant("http-step"),
                                                        "problem_id": PROBLEM}})
    obs = body.get("observation", {}) if isinstance(body, dict) else {}
    check("POST /step grades in one request", st == 200 and obs.get("compilation_success") is True
          and obs.get("status") == "compiled" and obs.get("turn") == 1
          and body.get("reward") is None, body)
    st, body, _ = s.http("POST", "/step", {"action": {"code": variant("http-step-2")}})
    check("POST /step takes the problem from the launch block", st == 200
          and body["observation"]["problem_id"] == PROBLEM, body)
    st, body, _ = s.http("POST", "/step", {"action": {"code": ""}})
    check("POST /step empty code: 422", st == 422
          and body["detail"][0]["loc"] == ["body", "action", "code"], body)
    st, body, _ = s.http("POST", "/step", {"action": {"code": "x", "colour": "red"}})
    check("POST /step unknown action field: 422", st == 422
          and body["detail"][0]["type"] == "extra_forbidden", body)
    st, body, _ = s.http("POST", "/step", {"nothing": 1})
    check("POST /step without action: 422", st == 422, body)
    st, body, _ = s.http("GET", "/step")
    check("GET /step: 405", st == 405, body)
    st, body, _ = s.http("GET", "/nowhere")
    check("unknown path: 404", st == 404, body)


def test_http_v1(s):
    st, body, _ = s.http("GET", "/v1")
    check("GET /v1", st == 200 and body["schema"] == "kernrl.serve.v1"
          and body["compile_only"] is True and body["max_sessions"] == 4, body)
    st, body, _ = s.http("GET", "/v1/problems?level=1")
    ids = [p["id"] for p in body.get("problems", [])] if isinstance(body, dict) else []
    check("GET /v1/problems", st == 200 and PROBLEM in ids
          and all(p["level"] == 1 for p in body["problems"]), body)
    st, body, h = s.http("GET", "/v1/problems/L1_23/prompt")
    check("GET /v1/problems/{id}/prompt", st == 200 and "# Problem L1_23_Softmax" in body
          and h["content-type"].startswith("text/markdown"), body)
    st, body, _ = s.http("GET", "/v1/problems/L1_23_Softmax")
    check("GET /v1/problems/{id}", st == 200 and body["problem"]["id"] == PROBLEM
          and "template" in body["problem"], body)
    for bad in ["/v1/problems/..%2F..%2Fetc%2Fpasswd", "/v1/problems/../../etc/passwd",
                "/v1/problems/%2Fetc%2Fpasswd"]:
        st, body, _ = s.http("GET", bad)
        check(f"no path from a client: GET {bad} is 404", st == 404, body)

    req = {"source": variant("v1"), "problem": "L1_23", "label": "my-sample", "sample": 3}
    st, rec, h = s.http("POST", "/v1/grade", req)
    check("POST /v1/grade returns the trace record", st == 200
          and rec.get("schema") == "kernrl.trace.v1" and rec.get("status") == "compiled"
          and rec.get("file") == "my-sample" and rec.get("problem") == PROBLEM
          and rec.get("sample") == 3 and h.get("x-kernrl-cache") == "miss", rec)
    req["label"] = "again"
    st, rec2, h = s.http("POST", "/v1/grade", req)
    check("the same answer again comes from the cache", st == 200
          and h.get("x-kernrl-cache") == "hit" and rec2["file"] == "again"
          and rec2["source_sha256"] == rec["source_sha256"], (h, rec2))
    triton = "import torch\nimport triton\n\n@triton.jit\ndef kernel(x_ptr):\n    pass\n"
    st, rec, _ = s.http("POST", "/v1/grade", {"source": triton, "problem": PROBLEM})
    check("a Triton answer is a format_error saying what it is and what kernrl expects", st == 200
          and rec["status"] == "format_error" and "Triton" in rec["error"]["message"]
          and "kernrl" in rec["error"]["message"] and "@triton.jit" in rec["feedback"], rec)
    md = "Here is my kernel:\n\n```cuda\n" + variant("md") + "```\n"
    st, rec, _ = s.http("POST", "/v1/grade", {"source": md})
    check("a markdown answer is graded", st == 200 and rec["status"] == "compiled", rec)
    broken = SOLUTION.replace("float r = shared[0];", "float r = shared[0] + undefined_name;")
    st, rec, _ = s.http("POST", "/v1/grade", {"source": broken})
    check("a compile error is a compile_error record", st == 200
          and rec["status"] == "compile_error" and rec["reward"] == -0.5, rec)
    st, body, _ = s.http("POST", "/v1/grade", {"code": "x"})
    check("POST /v1/grade unknown field: 400", st == 400
          and body["error"]["code"] == "VALIDATION_ERROR", body)
    st, body, _ = s.http("POST", "/v1/grade", {"source": "x", "problem": "L9_9_Nope"})
    check("POST /v1/grade unknown problem: 404", st == 404
          and body["error"]["code"] == "UNKNOWN_PROBLEM", body)
    st, body, _ = s.http("POST", "/v1/grade", raw=b"[" * 300000 + b"]" * 300000)
    check("POST /v1/grade deeply nested JSON: 400", st == 400
          and "nested deeper" in body["error"]["message"], body)
    st, body, _ = s.http("POST", "/v1/grade", raw=b"[1,")
    check("POST /v1/grade bad JSON: 400", st == 400 and body["error"]["code"] == "INVALID_JSON",
          body)

    items = [{"source": variant("batch-0")}, {"source": broken, "label": "broken"},
             {"source": "no code at all", "problem": PROBLEM}]
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=120)
    conn.request("POST", "/v1/grade-batch", body=json.dumps({"items": items}),
                 headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    chunked = r.getheader("Transfer-Encoding", "") == "chunked"
    lines = [json.loads(x) for x in r.read().decode().splitlines() if x.strip()]
    conn.close()
    by_index = {x["index"]: x for x in lines if "index" in x}
    check("POST /v1/grade-batch streams one line per item, then a summary",
          r.status == 200 and chunked and len(by_index) == 3 and lines[-1].get("done") is True
          and lines[-1]["graded"] == 3, lines)
    check("batch records in their places",
          len(by_index) == 3 and by_index[0]["record"]["status"] == "compiled"
          and by_index[1]["record"]["status"] == "compile_error"
          and by_index[1]["record"]["file"] == "broken"
          and by_index[2]["record"]["status"] == "format_error", by_index)
    st, body, _ = s.http("POST", "/v1/grade-batch", {"items": [{"source": "x"}, {"sauce": 1}]})
    check("a batch with an invalid item is refused whole", st == 400
          and "items[1]" in body["error"]["message"], body)


def test_oversize(s):
    big = {"source": "x" * (1200 * 1024)}
    st, body, _ = s.http("POST", "/v1/grade", big)
    check("an HTTP body over --max-body-mb: 413", st == 413
          and body["error"]["code"] == "PAYLOAD_TOO_LARGE", body)

    async def ws_big():
        async with websockets.connect(s.ws_url(), max_size=None) as ws:
            try:  # the server may close as soon as the frame's header announces its size
                await ws.send(json.dumps({"type": "step", "data": {"code": "x" * (1200 * 1024)}}))
                await asyncio.wait_for(ws.recv(), 30)
                return None
            except websockets.ConnectionClosed as e:
                return e.rcvd.code if e.rcvd else e.code

    code = asyncio.run(ws_big())
    check("a WebSocket message over --max-body-mb closes the session with 1009", code == 1009, code)
    st, body, _ = s.http("GET", "/health")
    check("the server is fine after oversized requests", st == 200, body)


def test_ws_sessions(s):
    async def session(n):
        async with websockets.connect(s.ws_url()) as ws:
            out = {}
            out["bad_json"] = await ws_call(ws, "{oops")
            out["deep"] = await ws_call(ws, '{"type":"step","data":{"code":' + "[" * 200000 + "]" * 200000 + "}}")
            out["unknown"] = await ws_call(ws, {"type": "teleport"})
            out["early_step"] = await ws_call(ws, {"type": "step", "data": {"code": "x"}})
            out["reset"] = await ws_call(ws, {"type": "reset", "data": {"problem_id": PROBLEM}})
            out["bad_step"] = await ws_call(ws, {"type": "step", "data": {"code": 5}})
            out["step"] = await ws_call(ws, {"type": "step", "data": {"code": variant(f"ws-{n}")}})
            out["step2"] = await ws_call(ws, {"type": "step", "data": {"code": "not a kernel"}})
            out["state"] = await ws_call(ws, {"type": "state"})
            await ws.send(json.dumps({"type": "close"}))
            try:
                await asyncio.wait_for(ws.recv(), 10)
            except websockets.ConnectionClosed as e:
                out["closed"] = e.code
            return out

    async def all_sessions():
        return await asyncio.gather(*[session(n) for n in range(4)])

    t0 = time.time()
    outs = asyncio.run(all_sessions())
    check("4 concurrent sessions finished", len(outs) == 4, outs)
    for n, o in enumerate(outs):
        ok = (o["bad_json"]["data"]["code"] == "INVALID_JSON"
              and o["deep"]["data"]["code"] == "INVALID_JSON"
              and o["unknown"]["data"]["code"] == "UNKNOWN_TYPE"
              and o["early_step"]["data"]["code"] == "EXECUTION_ERROR"
              and o["reset"]["type"] == "observation"
              and o["bad_step"]["data"]["code"] == "VALIDATION_ERROR"
              and o["step"]["type"] == "observation"
              and o["step"]["data"]["observation"]["compilation_success"] is True
              and o["step"]["data"]["observation"]["turn"] == 1
              and o["step2"]["data"]["observation"]["status"] == "format_error"
              and o["step2"]["data"]["observation"]["compilation_success"] is False
              and o["step2"]["data"]["reward"] == -0.5
              and o["state"]["data"]["step_count"] == 2
              and o["state"]["data"]["problem_id"] == PROBLEM
              and o.get("closed") == 1000)
        check(f"session {n}: errors, reset, steps, state, close", ok, o)
    print(f"     (4 sessions in {time.time() - t0:.1f} s)")


def wait_sessions_closed(s, timeout=20):
    """The server frees a session's slot after the client's close is processed:
    wait for the gauge to read 0 so earlier tests' sessions cannot be counted."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        st, text, _ = s.http("GET", "/metrics")
        if st == 200 and re.search(r"^kernrl_serve_sessions 0$", text or "", re.M):
            return True
        time.sleep(0.1)
    return False


def test_capacity(s):
    check("sessions of earlier tests are closed", wait_sessions_closed(s))

    async def run():
        held = [await websockets.connect(s.ws_url()) for _ in range(4)]
        try:
            extra = await websockets.connect(s.ws_url())
            msg = json.loads(await asyncio.wait_for(extra.recv(), 10))
            try:
                await asyncio.wait_for(extra.recv(), 10)
                closed = None
            except websockets.ConnectionClosed as e:
                closed = e.code
            # The sessions held still work.
            reply = await ws_call(held[0], {"type": "state"})
            return msg, closed, reply
        finally:
            for w in held:
                await w.close()

    msg, closed, reply = asyncio.run(run())
    check("the fifth session is refused with CAPACITY_REACHED",
          msg["type"] == "error" and msg["data"]["code"] == "CAPACITY_REACHED"
          and msg["data"]["active_sessions"] == 4 and msg["data"]["max_sessions"] == 4, msg)
    check("the refused session is closed", closed is not None, closed)
    check("the sessions within capacity still answer", reply["type"] == "state", reply)
    wait_sessions_closed(s)

    async def again():
        async with websockets.connect(s.ws_url()) as ws:
            return await ws_call(ws, {"type": "state"})

    check("a slot frees when a session closes", asyncio.run(again())["type"] == "state")


def test_examples(s):
    """The example client (standard library only) against the server."""
    sys.path.insert(0, str(ROOT / "examples"))
    import kernrl_client

    url = f"http://127.0.0.1:{s.port}"
    with kernrl_client.KernrlEnv(url) as env:
        first = env.reset(problem_id="L1_23")
        r = env.step("```cuda\n" + variant("example") + "```\n")
        st = env.state()
        try:
            env.reset(problem_id="L5_nothing_like_it")
            err = None
        except kernrl_client.ServerError as e:
            err = e.code
    check("example client: an episode over its own WebSocket code",
          first["observation"]["problem_id"] == PROBLEM and r["observation"]["status"] == "compiled"
          and st["step_count"] == 1 and err == "EXECUTION_ERROR", (first, r, st, err))
    client = kernrl_client.KernrlHTTP(url)
    got = list(client.grade_batch([{"source": variant("ex-1")}, {"source": "nothing"}]))
    check("example client: a batch", sorted(i for i, _, _ in got) == [0, 1]
          and {rec["status"] for _, rec, _ in got} == {"compiled", "format_error"}, got)
    check("example client: a prompt", "# Problem L1_23_Softmax" in client.prompt("L1_23_Softmax"))


def test_metrics_and_trace(s):
    st, text, h = s.http("GET", "/metrics")
    compiled = re.search(r'kernrl_serve_evaluations_total\{status="compiled"\} (\d+)', text or "")
    check("GET /metrics is Prometheus text", st == 200 and h["content-type"].startswith("text/plain")
          and "kernrl_serve_queue_depth" in text and "kernrl_serve_step_latency_seconds_bucket" in text
          and compiled and int(compiled.group(1)) >= 5, text[:3000] if isinstance(text, str) else text)
    check("metrics count the refused session",
          re.search(r"kernrl_serve_sessions_refused_total 1\b", text) is not None)
    check("metrics count cache hits", re.search(r'cache_total\{result="hit"\} [1-9]', text) is not None)
    graded = sum(int(m) for m in re.findall(r'kernrl_serve_evaluations_total\{status="[a-z_]+"\} (\d+)', text))
    recs = s.trace_records()
    check("every graded answer is in --trace", graded > 0 and len(recs) == graded,
          f"{graded} graded, {len(recs)} records")
    check("trace records are kernrl.trace.v1 with run 'serve'",
          all(r["schema"] == "kernrl.trace.v1" and r["run"] == "serve" for r in recs))


def test_token(kernrl):
    d = scratch_dir("kernrl-serve-token-")
    (d / "token").write_text("s3cret-token\n")
    s = Server(kernrl, "--token-file", str(d / "token"))
    try:
        st, body, h = s.http("GET", "/v1")
        check("with a token: /v1 without it is 401", st == 401 and h.get("www-authenticate") == "Bearer",
              body)
        st, body, _ = s.http("GET", "/v1", headers={"Authorization": "Bearer wrong"})
        check("with a token: a wrong one is 401", st == 401, body)
        st, body, _ = s.http("GET", "/v1", headers={"Authorization": "Bearer s3cret-token"})
        check("with a token: the right one is 200", st == 200, body)
        st, body, _ = s.http("GET", "/health")
        check("with a token: /health needs none", st == 200, body)

        async def ws(headers):
            try:
                async with websockets.connect(s.ws_url(), extra_headers=headers) as w:
                    return (await ws_call(w, {"type": "state"}))["type"]
            except websockets.InvalidStatusCode as e:
                return e.status_code

        check("with a token: /ws without it is refused (401)", asyncio.run(ws({})) == 401)
        check("with a token: /ws with it works",
              asyncio.run(ws({"Authorization": "Bearer s3cret-token"})) == "state")
    finally:
        s.stop()


def test_sigterm(kernrl):
    s = Server(kernrl, "--jobs", "1", "--cache-mb", "0")
    n_sessions = 12
    replies = []
    sent = []
    all_sent = None

    async def one(n):
        async with websockets.connect(s.ws_url()) as ws:
            await ws_call(ws, {"type": "reset", "data": {"problem_id": PROBLEM}})
            await ws.send(json.dumps({"type": "step", "data": {"code": variant(f"term-{n}")}}))
            sent.append(n)
            if len(sent) == n_sessions:
                all_sent.set()
            try:
                replies.append(json.loads(await asyncio.wait_for(ws.recv(), 120)))
            except websockets.ConnectionClosed as e:
                replies.append({"closed_without_answer": e.code})
                return None
            try:
                await asyncio.wait_for(ws.recv(), 60)
                return "open"
            except websockets.ConnectionClosed as e:
                return e.code

    async def run():
        nonlocal all_sent
        all_sent = asyncio.Event()
        tasks = [asyncio.create_task(one(n)) for n in range(n_sessions)]
        await asyncio.wait_for(all_sent.wait(), 60)
        # Once the server has every step (one compiling, the rest queued behind it): SIGTERM.
        for _ in range(3000):
            _, text, _ = await asyncio.to_thread(s.http, "GET", "/metrics")
            admitted = sum(int(float(v)) for v in re.findall(
                r'^kernrl_serve_(?:in_flight|evaluations_total\{[^}]*\}) (\S+)$', text, re.M))
            if admitted >= n_sessions:
                break
            await asyncio.sleep(0.01)
        s.proc.send_signal(signal.SIGTERM)
        return await asyncio.gather(*tasks)

    codes = asyncio.run(run())
    rc = s.stop(sig=None, timeout=90)
    graded = [r for r in replies if r.get("type") == "observation"]
    refused = [r for r in replies if r.get("type") == "error"
               and r["data"].get("reason") == "shutdown"]
    check("SIGTERM: every step in flight is answered: a record or an explicit error",
          len(replies) == n_sessions and len(graded) + len(refused) == n_sessions, replies)
    check("SIGTERM: work already running finishes", len(graded) >= 1, replies)
    check("SIGTERM: work not started is answered 'shutting down'", len(refused) >= 1, replies)
    check("SIGTERM: sessions are closed with 1001 (going away)", all(c == 1001 for c in codes), codes)
    check("SIGTERM: the server exits 0", rc == 0, (rc, "".join(s.stderr)))
    check("SIGTERM: the graded steps are in the trace", len(s.trace_records()) == len(graded),
          f"{len(s.trace_records())} records, {len(graded)} graded")
    print(f"     ({len(graded)} steps graded, {len(refused)} answered 'shutting down')")


def kernrl_on_stand_in_worker(kernrl):
    """kernrl copied beside the stand-in worker of the tests (tests/stand_in_worker.py), which
    speaks the worker protocol without a GPU; kernrl-nvrtc linked beside it."""
    bin_dir = scratch_dir("kernrl-serve-bin-")
    try:  # a hard link where the file system allows it: the binary is large
        os.link(kernrl, bin_dir / "kernrl")
    except OSError:
        shutil.copy2(kernrl, bin_dir / "kernrl")
    os.symlink(Path(kernrl).parent / "kernrl-nvrtc", bin_dir / "kernrl-nvrtc")
    shutil.copy2(ROOT / "tests/stand_in_worker.py", bin_dir / "kernrl-worker")
    return str(bin_dir / "kernrl")


def test_worker(kernrl):
    """Grading on a GPU worker: records of the worker's answers, a crashed worker replaced, a hung
    one cut at the run timeout, SIGTERM while a kernel runs."""
    config = scratch_dir("kernrl-serve-config-") / "config.yaml"
    config.write_text("timeouts:\n  run_s: 2\n")
    events = config.parent / "stand-in-events"  # what the stand-in did with each request
    s = Server(kernrl_on_stand_in_worker(kernrl), "--gpus", "0", "--jobs", "2", "--cache-mb", "0",
               "--config", str(config), compile_only=False,
               env=dict(os.environ, KERNRL_STANDIN_EVENTS=str(events)))
    crash = SOLUTION.replace("softmax_rows", "standin_crash")
    hang = SOLUTION.replace("softmax_rows", "standin_hang")
    try:
        st, rec, _ = s.http("POST", "/v1/grade", {"source": variant("worker-1")})
        check("worker: a graded answer ran on the worker", st == 200 and rec.get("status") == "correct"
              and rec.get("ran") is True and rec["device"]["name"] == "Stand-in"
              and "worker_start_ms" in rec["grader"], rec)
        st, rec, _ = s.http("POST", "/v1/grade", {"source": crash})
        check("worker: a crash is the answer's runtime_error", st == 200
              and rec.get("status") == "runtime_error"
              and "stand-in: crashing now" in (rec.get("error") or {}).get("log", ""), rec)
        st, rec, _ = s.http("POST", "/v1/grade", {"source": variant("worker-2")})
        check("worker: the next answer runs on a fresh worker", st == 200
              and rec.get("status") == "correct" and "worker_start_ms" in rec["grader"], rec)
        st, rec, _ = s.http("POST", "/v1/grade", {"source": hang})
        check("worker: a hang is a timeout at the run timeout", st == 200
              and rec.get("status") == "timeout", rec)
        st, text, _ = s.http("GET", "/metrics")
        check("worker: metrics count the restarts",
              re.search(r'kernrl_serve_gpu_worker_restarts_total\{gpu="0"\} 2\b', text or "")
              is not None, text[-1500:] if isinstance(text, str) else text)
        # SIGTERM while a kernel runs (it hangs until the 2 s run timeout): it is answered.
        reply = {}

        def post():
            reply["r"] = s.http("POST", "/v1/grade", {"source": "// again\n" + hang})

        hangs = events.read_text().splitlines().count("hang")
        t = threading.Thread(target=post)
        t.start()
        # Once the worker is running it (the stand-in noted one more hang), not before: an answer
        # still compiling when SIGTERM comes is answered "shutting down" instead.
        for _ in range(6000):
            if events.read_text().splitlines().count("hang") > hangs:
                break
            time.sleep(0.01)
        s.proc.send_signal(signal.SIGTERM)
        t.join(60)
        st, rec, _ = reply.get("r", (None, {}, {}))
        check("worker: SIGTERM lets the running kernel finish", st == 200
              and rec.get("status") == "timeout", reply)
    finally:
        rc = s.stop(sig=None if s.proc.poll() is None and reply else signal.SIGTERM)
    check("worker: the server exits 0", rc == 0, (rc, "".join(s.stderr)))
    check("worker: every graded answer is in the trace", len(s.trace_records()) == 5,
          [r.get("status") for r in s.trace_records()])


def make_suite(parent):
    """A suite folder beside kernrl's problems: L1_23_Softmax at other sizes (the same id as
    kernrl's own), and a baseline file for the stand-in GPU with a torch.compile timing."""
    d = parent / "mini"
    shutil.copytree(ROOT / "problems/L1/23_Softmax", d / "problems/L1/23_Softmax")
    y = d / "problems/L1/23_Softmax/problem.yaml"
    y.write_text(y.read_text().replace("bench: {batch_size: 4096, dim: 16384}",
                                       "bench: {batch_size: 128, dim: 4000}"))
    (d / "baselines").mkdir()
    (d / "baselines/stand-in.json").write_text(json.dumps({
        "schema": "kernrl.baselines.v1", "device": {"name": "Stand-in"},
        "versions": {"torch": "x", "cuda": "x", "driver": "x"}, "config": {}, "ceilings": {},
        "problems": {PROBLEM: {"sizes": {"batch_size": 128, "dim": 4000},
                               "compile_baseline": {"timing": {"median_ms": 0.25, "mean_ms": 0.25,
                                                               "n": 100}, "backend": "inductor"}}}}))
    return d


def test_suite(kernrl):
    """`serve --suites`: one server, kernrl's problems and a suite's; reset, /step, /v1 and the
    WebSocket name the suite; records graded on the suite's problem use the suite's baseline file
    (its torch.compile timing)."""
    suite = make_suite(scratch_dir("kernrl-serve-suites-"))
    s = Server(kernrl_on_stand_in_worker(kernrl), "--gpus", "0", "--suites", str(suite),
               "--cache-mb", "8", compile_only=False)
    try:
        st, body, _ = s.http("GET", "/v1")
        check("suite: GET /v1 lists the suites offered", st == 200 and body.get("suites") == ["mini"], body)
        st, body, _ = s.http("GET", "/v1/problems?suite=mini")
        check("suite: GET /v1/problems?suite= lists the suite's problems", st == 200
              and [p["id"] for p in body["problems"]] == [PROBLEM]
              and body["problems"][0]["sizes"] == {"batch_size": 128, "dim": 4000}, body)
        st, body, _ = s.http("GET", "/v1/problems/L1_23")
        check("suite: without suite, kernrl's own problem", st == 200
              and body["problem"]["sizes"]["bench"]["batch_size"] == 4096, body)
        st, body, _ = s.http("GET", "/v1/problems/L1_23?suite=mini")
        check("suite: GET /v1/problems/{id}?suite= is the suite's", st == 200
              and body["problem"]["sizes"]["bench"]["batch_size"] == 128, body)
        st, body, _ = s.http("GET", "/v1/problems?suite=nope")
        check("suite: an unknown suite is 404 UNKNOWN_SUITE naming the suites offered", st == 404
              and body["error"]["code"] == "UNKNOWN_SUITE" and "mini" in body["error"]["message"], body)
        st, body, _ = s.http("POST", "/v1/prompt", {"problem": "L1_23", "suite": "mini"})
        check("suite: POST /v1/prompt with suite", st == 200 and "4000" in body.get("prompt", ""), body)
        st, own, _ = s.http("POST", "/v1/grade", {"source": variant("suite-own"), "problem": "L1_23"})
        st2, rec, _ = s.http("POST", "/v1/grade", {"source": variant("suite-own"), "problem": "L1_23",
                                                   "suite": "mini"})
        sp = (rec.get("baseline") or {}).get("speedups", {})
        check("suite: POST /v1/grade on the suite's problem uses its baseline file (torch.compile)",
              st == 200 and st2 == 200 and own.get("status") == "correct" and rec.get("status") == "correct"
              and "compile" not in (own.get("baseline") or {}).get("speedups", {})
              and abs(sp.get("compile", 0) - 0.5) < 1e-9 and abs(sp.get("torch", 0) - 2.0) < 1e-9
              and rec["timing"]["compile_baseline_source"].endswith("stand-in.json"), (own, rec))
        st, body, _ = s.http("POST", "/v1/grade", {"source": "x", "suite": "nope"})
        check("suite: /v1/grade with an unknown suite is 404", st == 404, body)
        st, body, _ = s.http("POST", "/reset", {"problem_id": "L1_23", "suite": "mini"})
        check("suite: POST /reset with suite", st == 200
              and "4000" in body["observation"]["problem_description"], body)
        st, body, _ = s.http("POST", "/reset", {"suite": "nope"})
        check("suite: POST /reset with an unknown suite is 404", st == 404, body)
        st, body, _ = s.http("POST", "/step", {"action": {"code": variant("suite-step")},
                                               "problem_id": "L1_23", "suite": "mini"})
        check("suite: POST /step with suite", st == 200 and body["observation"]["correctness_pass"] is True,
              body)

        async def ws():
            async with websockets.connect(s.ws_url()) as w:
                r1 = await ws_call(w, {"type": "reset", "data": {"problem_id": "L1_23", "suite": "mini"}})
                r2 = await ws_call(w, {"type": "state"})
                r3 = await ws_call(w, {"type": "step", "data": {"code": variant("suite-ws")}})
                r4 = await ws_call(w, {"type": "reset", "data": {"suite": 5}})
                r5 = await ws_call(w, {"type": "reset", "data": {"suite": "nope"}})
                return r1, r2, r3, r4, r5

        r1, r2, r3, r4, r5 = asyncio.run(ws())
        check("suite: WebSocket reset with suite", r1.get("type") == "observation"
              and "4000" in r1["data"]["observation"]["problem_description"], r1)
        check("suite: the episode's state names the suite", r2["data"].get("suite") == "mini", r2)
        check("suite: a WebSocket step grades on the suite's problem", r3.get("type") == "observation"
              and r3["data"]["observation"]["correctness_pass"] is True, r3)
        check("suite: a suite that is not a string is a VALIDATION_ERROR",
              r4.get("type") == "error" and r4["data"]["code"] == "VALIDATION_ERROR", r4)
        check("suite: an unknown suite at reset is an error naming the suites offered",
              r5.get("type") == "error" and "mini" in r5["data"]["message"], r5)
        recs = s.trace_records()
        ws_rec = [r for r in recs if str(r.get("file", "")).startswith("ws/")]
        check("suite: the WebSocket step's record has the suite's torch.compile baseline",
              len(ws_rec) == 1 and abs(ws_rec[0]["baseline"]["speedups"].get("compile", 0) - 0.5) < 1e-9,
              ws_rec)
    finally:
        rc = s.stop()
    check("suite: the server exits 0", rc == 0, "".join(s.stderr) + s.stuck)
    p = subprocess.run([kernrl, "serve", "--stdio", "--compile-only", "--suites", "/nonexistent"],
                       input="", capture_output=True, text=True, timeout=120)
    check("suite: --suites naming no suite is a usage error", p.returncode == 2
          and "no suite" in p.stderr, (p.returncode, p.stderr))


def test_stdio(kernrl):
    lines = [json.dumps({"id": 1, "source": variant("stdio"), "label": "s1"}),
             "{broken",
             json.dumps({"id": 3, "source": "x", "problme": PROBLEM}),
             json.dumps({"id": 4, "source": variant("stdio"), "label": "s4"})]
    p = subprocess.run([kernrl, "serve", "--stdio", "--compile-only"], input="\n".join(lines) + "\n",
                       capture_output=True, text=True, timeout=300)
    out = [json.loads(x) for x in p.stdout.splitlines()]
    by_id = {o.get("id"): o for o in out}
    check("--stdio answers every line", p.returncode == 0 and len(out) == 4, (p.returncode, out, p.stderr))
    check("--stdio: a record for a valid request", by_id.get(1, {}).get("record", {}).get("status")
          == "compiled" and by_id[1]["record"]["file"] == "s1", by_id.get(1))
    check("--stdio: INVALID_JSON names the line",
          any(o.get("error", {}).get("code") == "INVALID_JSON" and o.get("line") == 2 for o in out), out)
    check("--stdio: an unknown field is a VALIDATION_ERROR",
          by_id.get(3, {}).get("error", {}).get("code") == "VALIDATION_ERROR", by_id.get(3))
    check("--stdio: a duplicate comes from the cache",
          by_id.get(4, {}).get("cache") in ("hit", "coalesced"), by_id.get(4))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernrl", required=True)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    kernrl = os.path.abspath(a.kernrl)
    if "KERNRL_CACHE" not in os.environ:
        os.environ["KERNRL_CACHE"] = str(scratch_dir("kernrl-serve-cache-"))
    want = lambda n: not a.only or a.only == n  # noqa: E731
    s = Server(kernrl, "--max-sessions", "4", "--max-body-mb", "1", "--jobs", "2")
    try:
        if want("http"):
            test_http_openenv(s)
            test_http_v1(s)
        if want("oversize"):
            test_oversize(s)
        if want("ws"):
            test_ws_sessions(s)
        if want("capacity"):
            test_capacity(s)
        if want("examples"):
            test_examples(s)
        if not a.only:
            test_metrics_and_trace(s)
    finally:
        rc = s.stop()
        if not a.only:
            check("the server stops on SIGTERM with exit 0", rc == 0,
                  f"rc={rc} " + "".join(s.stderr) + s.stuck)
    if want("token"):
        test_token(kernrl)
    if want("stdio"):
        test_stdio(kernrl)
    if want("sigterm"):
        test_sigterm(kernrl)
    if want("worker"):
        test_worker(kernrl)
    if want("suite"):
        test_suite(kernrl)
    for d in scratch:
        shutil.rmtree(d, ignore_errors=True)
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
