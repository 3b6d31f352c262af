#!/usr/bin/env python3
"""Timing faithful to Triton's own: the same bundled Triton solution timed by kernrl (the records
of a `grade-dir` run) and by `triton.testing.do_bench` through Triton's own launcher, at the bench
sizes, both with the L2 cache flushed before every run. Only solutions with one launch and no
scratch buffers are compared (the launch is replayed from the launch block). Prints a Markdown
table: problem, kernrl median, do_bench median, difference, and the same launch timed with the GPU
idle before each run (as kernrl's loop leaves it, which checks each run before the next) and
kernrl's difference from that.

    scripts/triton_timing.py RECORDS.jsonl [PROBLEM_ID ...]

Runs on a GPU host with torch and Triton; it imports the bundled solutions (trusted files of this
repository), never a submission.
"""
import importlib.util
import json
import math
import os
import sys

import torch
import triton
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "int64": torch.int64, "int32": torch.int32, "int16": torch.int16, "int8": torch.int8,
          "uint8": torch.uint8, "uint32": getattr(torch, "uint32", torch.int32),
          "bool": torch.bool}


def scalar_list(spec):
    """problem.yaml's scalars, a mapping name -> {dtype, value}, as a list of {name, dtype, value}."""
    sc = spec.get("scalars") or {}
    if isinstance(sc, dict):
        return [dict(v, name=k) for k, v in sc.items()]
    return list(sc)


def random_tensor(t, shape, dt):
    """Inputs of the kind kernrl draws (problem.yaml's `init`): `randint` ranges (for float tensors
    too), `normal` mean and std, else normal floats and integers in 0..16; a kernel whose speed
    depends on its data (libdevice's atan2, branches) sees data of the same kind."""
    init = t.get("init") if isinstance(t.get("init"), dict) else {}
    if t.get("dtype") == "bool":
        return torch.randint(0, 2, shape, device="cuda").to(dt)
    if "randint" in init or not dt.is_floating_point:
        r = init.get("randint") or {}
        low, high = int(r.get("low", 0)), int(r.get("high", 16))
        return torch.randint(low, high, shape, device="cuda", dtype=torch.int64).to(dt)
    n = init.get("normal") or {}
    x = torch.randn(shape, device="cuda") * float(n.get("std", 1.0)) + float(n.get("mean", 0.0))
    return x.to(dt)


def problem_dir(pid):
    level, rest = pid.split("_", 1)
    return os.path.join(ROOT, "problems", level, rest)


def expr(text, names):
    env = dict(names, cdiv=lambda a, b: -(-a // b), min=min, max=max)
    return int(eval(str(text), {"__builtins__": {}}, env))  # the repository's own launch blocks


def launch_of(pid):
    d = problem_dir(pid)
    spec = yaml.safe_load(open(os.path.join(d, "problem.yaml")))
    src = open(os.path.join(d, "solution.py")).read()
    block = yaml.safe_load(src.split('"""kernrl', 1)[1].split('"""', 1)[0])
    if len(block["launches"]) != 1 or block.get("scratch"):
        return None
    mod_spec = importlib.util.spec_from_file_location("sol_" + pid, os.path.join(d, "solution.py"))
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    sizes = dict(spec["sizes"]["bench"])
    for s in scalar_list(spec):
        if str(s.get("dtype", "")).startswith("int"):
            sizes.setdefault(s["name"], int(s["value"]))
    sizes["num_sms"] = torch.cuda.get_device_properties(0).multi_processor_count
    tensors = {}
    for t in (spec.get("inputs") or []) + (spec.get("parameters") or []) + spec["outputs"]:
        shape = [expr(x, sizes) for x in t["shape"]]
        dt = DTYPES[t["dtype"]]
        tensors[t["name"]] = random_tensor(t, shape, dt)
    scalars = {s["name"]: s["value"] for s in scalar_list(spec)}
    l = block["launches"][0]
    grid = tuple(expr(g, sizes) for g in l["grid"])
    args = []
    for a in l["args"]:
        a = str(a)
        if a in tensors or a in scalars:
            args.append(tensors[a] if a in tensors else scalars[a])
            continue
        try:
            args.append(expr(a, sizes))
        except Exception:
            args.append(float(a.rstrip("fF")))
    kw = {k: (v if isinstance(v, (bool, float)) else expr(v, sizes))
          for k, v in (l.get("constexprs") or {}).items()}
    for opt in ("num_warps", "num_stages"):
        if opt in l:
            kw[opt] = int(l[opt])
    kernel = getattr(mod, l["kernel"])
    return lambda: kernel[grid](*args, **kw)


def synced_median(run, reps=200):
    """Triton's launcher timed as kernrl's loop times a kernel: the GPU idle before each run (kernrl
    checks the previous run and draws fresh inputs between runs), then the L2 flush, then the run
    between events. The same flush as do_bench's; only the idle GPU before each run differs."""
    cache = triton.runtime.driver.active.get_empty_cache_for_benchmark()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(reps):
        torch.cuda.synchronize()
        cache.zero_()
        start.record()
        run()
        end.record()
        end.synchronize()
        ms.append(start.elapsed_time(end))
    ms.sort()
    return ms[len(ms) // 2]


def main():
    records = [json.loads(x) for x in open(sys.argv[1])]
    wanted = set(sys.argv[2:])
    print("| problem | kernrl median ms | do_bench median ms | difference | do_bench, GPU idle before each run | kernrl against it |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for r in records:
        pid = r.get("problem")
        if r.get("status") != "correct" or (wanted and pid not in wanted):
            continue
        try:
            run = launch_of(pid)
        except Exception as e:  # a launch this replay cannot make: named, not fatal
            print(f"| {pid} | skipped: {type(e).__name__}: {e} | | |")
            continue
        if run is None:
            continue
        run()
        torch.cuda.synchronize()
        ms = triton.testing.do_bench(run, warmup=25, rep=200, return_mode="median")
        idle = synced_median(run)
        k = r["timing"]["kernel"]["median_ms"]
        print(f"| {pid} | {k:.4f} | {ms:.4f} | {100 * (k - ms) / ms:+.1f}% | {idle:.4f} | "
              f"{100 * (k - idle) / idle:+.1f}% |", flush=True)


if __name__ == "__main__":
    main()
