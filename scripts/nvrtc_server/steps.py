#!/usr/bin/env python3
"""One session's steps through `kernrl serve --stdio --compile-only`: sends each answer, waits for
its record, and prints one JSON line per step (the wall time at the client, the record's compile
time, whether it was cached, its precompiled header, its status). With --gpu the answers are
graded on the GPU rather than compiled only. Used by scripts/nvrtc-server-bench.sh.
  steps.py KERNRL CONFIG [--gpu] PROBLEM=FILE...
"""
import json
import subprocess
import sys
import time

kernrl, config, items = sys.argv[1], sys.argv[2], sys.argv[3:]
gpu = bool(items) and items[0] == "--gpu"
items = items[1:] if gpu else items
serve = subprocess.Popen([kernrl, "serve", "--stdio", "--config", config] + ([] if gpu else ["--compile-only"]),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
for i, item in enumerate(items):
    problem, path = item.split("=", 1)
    req = {"id": i, "source": open(path, encoding="utf-8", errors="replace").read(), "problem": problem}
    t0 = time.monotonic()
    serve.stdin.write((json.dumps(req) + "\n").encode())
    serve.stdin.flush()
    answer = json.loads(serve.stdout.readline())
    step_ms = (time.monotonic() - t0) * 1000
    rec = answer.get("record", {})
    comp = rec.get("compile") or {}
    print(json.dumps({"file": path, "step_ms": round(step_ms, 1), "compile_ms": comp.get("ms"),
                      "cached": comp.get("cached"), "pch": comp.get("pch"),
                      "status": rec.get("status"), "error": answer.get("error")}), flush=True)
serve.stdin.close()
serve.wait()
