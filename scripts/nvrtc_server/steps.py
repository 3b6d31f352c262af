#!/usr/bin/env python3
"""One session's steps through `kernrl serve --stdio --compile-only`: sends each answer file, waits
for its record, and prints one JSON line per step (wall time at the client, the record's compile
time and whether it was cached). Used by scripts/nvrtc-server-bench.sh.
  steps.py KERNRL CONFIG PROBLEM FILE...
"""
import json
import subprocess
import sys
import time

kernrl, config, problem, files = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
serve = subprocess.Popen([kernrl, "serve", "--stdio", "--compile-only", "--config", config],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
for i, f in enumerate(files):
    req = {"id": i, "source": open(f).read(), "problem": problem}
    t0 = time.monotonic()
    serve.stdin.write((json.dumps(req) + "\n").encode())
    serve.stdin.flush()
    answer = json.loads(serve.stdout.readline())
    step_ms = (time.monotonic() - t0) * 1000
    rec = answer.get("record", {})
    comp = rec.get("compile") or {}
    print(json.dumps({"file": f, "step_ms": round(step_ms, 1), "compile_ms": comp.get("ms"),
                      "cached": comp.get("cached"), "pch": comp.get("pch"), "status": rec.get("status"),
                      "error": answer.get("error")}), flush=True)
serve.stdin.close()
serve.wait()
