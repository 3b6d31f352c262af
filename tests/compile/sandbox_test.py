#!/usr/bin/env python3
"""The compiler's sandbox, tested below the lexical include scan: requests go straight to
kernrl-nvrtc, so nothing but the operating system stands between a submission and the files of the
machine. Every route must fail to read the target inside the sandbox; the same requests with the
sandbox off must read it (so the test can tell a working sandbox from a broken probe).
  sandbox_test.py KERNRL_NVRTC CUDA_INCLUDE_DIR"""
import json, os, subprocess, sys, tempfile

nvrtc, inc = os.path.abspath(sys.argv[1]), os.path.realpath(sys.argv[2])
secret_dir = tempfile.mkdtemp(prefix="kernrl-sandbox-test-")
secret = os.path.join(secret_dir, "secret.h")
with open(secret, "w") as f:
    f.write("kernrl_secret_token_4711\n")
env_secret = "KERNRL_TEST_ENV_SECRET=kernrl_env_token_0815"

def compile_(source, names=(), sandbox=True):
    req = {"source": source, "filename": "k.cu", "names": list(names), "include_dirs": [inc], "sandbox": sandbox,
           "options": ["-arch=sm_90a", "-std=c++17", "-default-device", "-I" + inc, "-I" + inc + "/cccl",
                       "--pre-include=kernrl_prelude.h"]}
    env = dict(os.environ)
    env["KERNRL_TEST_ENV_SECRET"] = "kernrl_env_token_0815"
    out = subprocess.run([nvrtc], input=json.dumps(req).encode(), capture_output=True, env=env, cwd=secret_dir).stdout
    return json.loads(out.split(b"\n", 1)[0])

kernel = "\n__global__ void k(float* x) { x[0] = 1; }\n"
routes = {
    "absolute #include": ('#include "%s"' % secret + kernel, [], "kernrl_secret_token_4711"),
    "carriage return after the name": ('#include "%s"\r' % secret + kernel, [], "kernrl_secret_token_4711"),
    "relative to the working directory": ('#include "secret.h"' + kernel, [], "kernrl_secret_token_4711"),
    "through a macro": ('#define H "%s"\n#include H' % secret + kernel, [], "kernrl_secret_token_4711"),
    "/proc/self/environ": ('#include "/proc/self/environ"' + kernel, [], "kernrl_env_token_0815"),
    "newline in a name expression": (kernel, ['k\n#include "%s"\n' % secret], "kernrl_secret_token_4711"),
}
failed = 0
for name, (src, names, token) in routes.items():
    inside = compile_(src, names, sandbox=True)
    leaked = token in json.dumps(inside)
    ok = not leaked and "sandbox_error" not in inside
    print(("ok  " if ok else "FAIL") + " sandboxed: " + name + (" (leaked!)" if leaked else ""))
    failed += not ok
# The probe must be able to fail: without the sandbox the file is read (its text reaches the log).
outside = compile_(routes["absolute #include"][0], sandbox=False)
if "kernrl_secret_token_4711" not in json.dumps(outside):
    print("FAIL probe: without the sandbox the secret was not read either, so the test proves nothing")
    failed += 1
else:
    print("ok   unsandboxed control read the file")
# Writing: a compile cannot create files (the cubin comes back on stdout).
check = subprocess.run([nvrtc, "--check-sandbox", inc], capture_output=True, env={}).stdout
verdict = json.loads(check)
print(("ok  " if verdict.get("ok") else "FAIL") + " --check-sandbox: " + json.dumps(verdict.get("checks")))
failed += not verdict.get("ok")
sys.exit(1 if failed else 0)
