#!/usr/bin/env python3
"""The kernrl-nvrtc fork server (src/nvrtc/server.h), spoken to directly in its frames
(docs/protocol.md): the sandbox check of its children, the exfiltration routes of sandbox_test.py
through a child (with and without a precompiled header), a PCH made for a header set and used with
the same cubin and log as a compile without it, a header set's PCH made when it comes a second time, the per-child time and output bounds (the server
answers and goes on), a bad body, and its folder removed when its input closes (a stale one of a
killed server removed when the next starts).
  nvrtc_server_test.py KERNRL_NVRTC CUDA_INCLUDE_DIR"""
import glob, json, os, subprocess, sys, tempfile

nvrtc, inc = os.path.abspath(sys.argv[1]), os.path.realpath(sys.argv[2])
tmp = tempfile.gettempdir()
work = tempfile.mkdtemp(prefix="kernrl-server-test-")
secret = os.path.join(work, "secret.h")
with open(secret, "w") as f:
    f.write("kernrl_secret_token_4711\n")
stale = os.path.join(tmp, "kernrl-pch-999999999-stale")
os.makedirs(stale, exist_ok=True)

OPTS = ["-arch=sm_90a", "-std=c++17", "-default-device", "-I" + inc, "-I" + inc + "/cccl",
        "--pre-include=kernrl_prelude.h", "-DKERNRL=1"]
server = subprocess.Popen([nvrtc, "--server", "--pch-sets", "2"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, env={}, cwd=work)
next_id = [0]
failed = [0]


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    failed[0] += not ok


def job(kind="compile", source=None, names=(), pch=(), timeout_s=60, max_output=80 << 20, body=None):
    next_id[0] += 1
    head = {"id": next_id[0], "kind": kind, "include_dirs": [inc], "sandbox": True, "timeout_s": timeout_s,
            "memory_limit_mb": 8192, "max_output_bytes": max_output, "options": OPTS, "pch_headers": list(pch)}
    if body is None:
        body = "" if source is None else json.dumps(
            {"source": source, "filename": "k.cu", "options": OPTS, "names": list(names),
             "include_dirs": [inc], "sandbox": True})
    server.stdin.write((json.dumps(head) + "\n" + body + "\n").encode())
    server.stdin.flush()
    reply = json.loads(server.stdout.readline())
    data = server.stdout.read(reply["bytes"])
    check(reply["id"] == next_id[0], "reply %d answers its job" % next_id[0])
    return reply, data


def answer(data):
    line, _, cubin = data.partition(b"\n")
    return json.loads(line), cubin


r, data = job("check_sandbox")
check(not os.path.exists(stale), "a stale PCH folder of a server no longer running is removed")
verdict = json.loads(data)
check(verdict.get("ok") and verdict["checks"].get("create a file in the PCH folder") is False,
      "the children's sandbox holds, the PCH folder read-only: " + json.dumps(verdict.get("checks")))

kernel = "\n__global__ void k(float* x) { x[0] = 1; }\n"
header = "#include <cuda/std/limits>\n"
for pch in ([], ["cuda/std/limits"]):
    if pch:
        r, _ = job("prepare", pch=pch)
        check(r["pch"] == "used", "a PCH is made for " + pch[0] + " (" + r["pch"] + ")")
    for name, src in {"absolute #include": header + '#include "%s"' % secret + kernel,
                      "relative to the working directory": header + '#include "secret.h"' + kernel,
                      "through a macro": header + '#define H "%s"\n#include H' % secret + kernel}.items():
        r, data = job(source=src, pch=pch)
        a, _ = answer(data)
        check("kernrl_secret_token_4711" not in json.dumps(a) and "sandbox_error" not in a,
              "sandboxed (PCH %s): %s" % (r["pch"], name))

src = header + "__global__ void k(float* x) { x[0] = cuda::std::numeric_limits<float>::max(); }\n"
r_cold, cold = job(source=src, names=["k"])
r_pch, warm = job(source=src, names=["k"], pch=["cuda/std/limits"])
check(r_cold["pch"] == "none" and r_pch["pch"] == "used", "the PCH is used only when asked for")
check(answer(cold)[0]["ok"] and cold == warm, "the same cubin, log and names with the PCH as without")

src2 = "#include <cuda/std/cstdint>\n__global__ void k(unsigned* x) { x[0] = 1; }\n"
r1, _ = job(source=src2, names=["k"], pch=["cuda/std/cstdint"])
r2, _ = job(source=src2, names=["k"], pch=["cuda/std/cstdint"])
check(r1["pch"] == "seen" and r2["pch"] in ("building", "used"),
      "a header set gets a PCH when it comes a second time (%s, %s)" % (r1["pch"], r2["pch"]))

r, data = job(source=src, names=["k"], timeout_s=0.001)
check(r["timed_out"] and r["bytes"] == 0, "a compile past its time is killed and answered")
r, data = job(source=src, names=["k"], max_output=10)
check(r["output_overflow"] and r["bytes"] == 0, "a compile past its output bound is killed and answered")
r, data = job(body="{not json")
check(answer(data)[0]["error"].startswith("bad request"), "a bad body is answered inside the child")
r, data = job(source=src, names=["k"])
check(answer(data)[0]["ok"], "the server goes on after those")

folders = glob.glob(os.path.join(tmp, "kernrl-pch-%d-*" % server.pid))
server.stdin.close()
check(server.wait(timeout=60) == 0, "the server exits when its input closes")
check(folders and not any(os.path.exists(f) for f in folders), "and removes its folder")
sys.exit(1 if failed[0] else 0)
