#!/usr/bin/env python3
"""A stand-in for kernrl-worker, for tests on machines without a GPU: it speaks the worker protocol
(docs/protocol.md) and answers without running anything. What it does with an eval request is
chosen by the request's seed or by the names of the kernels in it:
  seed 2, or a kernel named standin_crash*: writes to its log and exits 1 (a crashed worker)
  seed 3, or a kernel named standin_hang*:  never answers (a kernel that never ends)
  seed 4, or a kernel named standin_fatal*: answers `correct` with `fatal` true, then exits
  anything else: answers `correct`, the kernel twice as fast as the baseline.
A Triton plan with autotuned launches is answered with a choice per tuning group: made-up times
that make the last config of each group the fastest.
bench_device answers made-up ceilings; bench_reference a 1 ms baseline for the problem's folder.
It says hello after 0.2 s, with a start-up breakdown (with `warm_up` when started with --warm-up,
as kernrl starts spares). With KERNRL_STANDIN_EVENTS set, it appends
what it is about to do with each eval request ("answer", "crash", "hang", "fatal") to that file, one
line each, so that a test can wait for a kernel to be running. With KERNRL_STANDIN_REQUESTS set, it
appends each eval request's seed and kernel names to that file as one JSON line."""
import json
import os
import sys
import time


def note(what):
    path = os.environ.get("KERNRL_STANDIN_EVENTS")
    if path:
        with open(path, "a") as f:
            f.write(what + "\n")

PROTOCOL = 7  # kWorkerProtocol (src/protocol/worker.h); a unit test checks they agree


def stats(median):
    return {"mean_ms": median, "median_ms": median, "min_ms": median, "max_ms": median,
            "std_ms": 0.0, "mad_ms": 0.0, "n": 10, "rel_stderr": 0.0}


def autotune(plan):
    """The worker's `autotune` answer: per tuning group, config i takes 1 / (i + 1) ms."""
    out, seen = [], set()
    for launch in plan.get("launches", []):
        group, choices = launch.get("tune_group"), launch.get("autotune") or []
        if not choices or group in seen:
            continue
        seen.add(group)
        configs = max(c["config"] for c in choices) + 1
        times = [None] * configs
        for c in choices:
            times[c["config"]] = 1.0 / (c["config"] + 1)
        out.append({"group": group, "config": choices[-1]["config"], "times_ms": times})
    return out


def behaviour(req):
    names = " ".join(req.get("lowered", {}).keys())
    for seed, word in ((2, "crash"), (3, "hang"), (4, "fatal")):
        if req.get("seed") == seed or f"standin_{word}" in names:
            return word
    return "answer"


def main():
    time.sleep(0.2)
    print(json.dumps({
        "hello": True, "protocol": PROTOCOL, "build_id": "stand-in",
        "device": {"name": "Stand-in", "compute_capability": "9.0", "sms": 132,
                   "l2_bytes": 52428800, "memory_bytes": 85045395456, "driver": 13000},
        "uuid": "", "versions": {"torch": "0", "cuda": "13.0", "driver": "13.0"},
        "startup_ms": dict({"exec": 12.5, "cuda_init": 1.0, "context": 2.0, "torch": 0.5},
                           **({"warm_up": 3.0} if "--warm-up" in sys.argv[1:] else {}))}),
          flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("cmd") == "quit":
            return
        if req.get("cmd") == "bench_device":
            ceilings = {"bandwidth_gbs": 3000.0, "launch_us": 3.0,
                        "matmul_tflops": {"fp32": 50.0, "tf32": 400.0, "fp16": 750.0,
                                          "bf16": 750.0, "fp8": 1500.0}}
            print(json.dumps({"ok": True, "fatal": False, "result": {
                "device": {}, "ceilings": ceilings, "repeats": req.get("repeats", 1)}}), flush=True)
            continue
        if req.get("cmd") == "bench_reference":
            problem = req["problem_dir"].rstrip("/").split("/")
            pid = f"{problem[-2]}_{problem[-1]}"
            print(json.dumps({"ok": True, "fatal": False,
                              "result": {"problem": pid, "baseline": stats(1.0)}}), flush=True)
            continue
        what = behaviour(req)
        note(what)
        requests = os.environ.get("KERNRL_STANDIN_REQUESTS")
        if requests:
            with open(requests, "a") as f:
                f.write(json.dumps({"seed": req.get("seed"),
                                    "kernels": sorted(req.get("lowered", {}).keys())}) + "\n")
        if what == "crash":
            print("stand-in: crashing now", file=sys.stderr, flush=True)
            sys.exit(1)
        if what == "hang":
            time.sleep(3600)
        answer = {
            "status": "correct", "fatal": what == "fatal",
            "correctness": {"trials": [], "n_trials": 5, "n_passed": 5},
            "timing": {"kernel": stats(0.5), "baseline": stats(1.0),
                       "sizes": req.get("sizes") or {}},
            "phases_ms": {"kernel": 1.0, "timing": 2.0}}
        tuned = autotune(req.get("plan") or {}) if req.get("time", True) else []
        if tuned:
            answer["autotune"] = tuned
        print(json.dumps(answer), flush=True)
        if what == "fatal":
            sys.exit(3)


if __name__ == "__main__":
    main()
