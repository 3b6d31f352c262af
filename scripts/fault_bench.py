#!/usr/bin/env python3
"""The fault mix on a GPU machine: a Level-1 batch in KernelBench's layout graded by `kernrl
grade-dir`, clean and with a third of its files replaced by kernels that crash (illegal address),
trap or hang, with the spare worker and the problem-sized watchdog ("after", the defaults) and
without them ("before": `workers.spare: false`, every plan run bounded by `timeouts.plan_run_s`
alone), on one GPU and, where there are two, on two. Prints a short table and writes it, as
Markdown for docs/results/, to OUT/faults.md.

  scripts/fault_bench.py --kernrl build-gpu/kernrl [--samples 4] [--gpus 0 0,1] [--out DIR]
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FAULTS = ["illegal_address", "trap", "infinite_loop"]  # tests/adversarial/L1_23_Softmax/*.cu
CONFIGS = {
    "after": "timeouts:\n  run_s: 20\n",
    "before": "timeouts:\n  run_s: 20\n  plan_run_floor_s: 5\nworkers:\n  spare: false\n",
}


def make_batch(folder, samples, faulty):
    """Every Level-1 solution `samples` times; with `faulty`, half as many files again (a third of
    the batch) cycling through FAULTS, named as samples of problem 23. Returns {file: kind}."""
    os.makedirs(folder)
    kinds = {}
    sols = sorted(d for d in os.listdir(os.path.join(ROOT, "problems", "L1"))
                  if os.path.exists(os.path.join(ROOT, "problems", "L1", d, "solution.cu")))
    for d in sols:
        num = d.split("_")[0]
        for s in range(samples):
            name = f"level_1_problem_{num}_sample_{s}_kernel.cu"
            shutil.copy(os.path.join(ROOT, "problems", "L1", d, "solution.cu"),
                        os.path.join(folder, name))
            kinds[name] = "good"
    if faulty:
        n = len(kinds) // 2
        for i in range(n):
            kind = FAULTS[i % len(FAULTS)]
            name = f"level_1_problem_23_sample_{100 + i}_kernel.cu"
            shutil.copy(os.path.join(ROOT, "tests", "adversarial", "L1_23_Softmax", kind + ".cu"),
                        os.path.join(folder, name))
            kinds[name] = kind
    return kinds


def grade(kernrl, folder, gpus, config, work):
    """One grade-dir run with a cold compile cache: (records, its summary parsed, wall s)."""
    out = os.path.join(work, "records.jsonl")
    cfg = os.path.join(work, "config.yaml")
    with open(cfg, "w") as f:
        f.write(config)
    env = dict(os.environ, KERNRL_CACHE=os.path.join(work, "cache"))
    t0 = time.time()
    p = subprocess.run([kernrl, "grade-dir", folder, "--gpus", gpus, "--out", out, "--config", cfg,
                        "--no-resume"], env=env, capture_output=True, text=True)
    wall = time.time() - t0
    recs = [json.loads(line) for line in open(out)] if os.path.exists(out) else []
    summary = {"kpm": None, "gpus": []}
    m = re.search(r"records in ([\d.]+) s = ([\d.]+) kernels/min", p.stderr)
    if m:
        summary["run_s"], summary["kpm"] = float(m.group(1)), float(m.group(2))
    for m in re.finditer(r"GPU (\d+): (\d+) evaluations, (\d+) worker restarts \((\d+) to a started "
                         r"spare, ([\d.]+) ms waited for workers to start\), worker busy (\d+)% of "
                         r"the run, GPU utilisation \(NVML\) (\S+)", p.stderr):
        summary["gpus"].append({"gpu": int(m.group(1)), "evals": int(m.group(2)),
                                "restarts": int(m.group(3)), "spare": int(m.group(4)),
                                "wait_ms": float(m.group(5)), "busy_pct": int(m.group(6)),
                                "nvml": m.group(7)})
    if summary["kpm"] is None:
        sys.stderr.write(p.stderr[-3000:])
    return recs, summary, wall


def smi(*args):
    """nvidia-smi's output, empty where there is none."""
    try:
        return subprocess.run(["nvidia-smi", *args], capture_output=True, text=True).stdout
    except OSError:
        return ""


def statuses(recs, kinds):
    by = collections.defaultdict(collections.Counter)
    for r in recs:
        by[kinds.get(os.path.basename(r["file"]), "?")][r["status"]] += 1
    return {k: dict(v) for k, v in sorted(by.items())}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernrl", required=True)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--gpus", nargs="*", default=None,
                    help="GPU lists to run on (default: 0, and 0,1 where two GPUs are visible)")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    a = ap.parse_args()
    kernrl = os.path.abspath(a.kernrl)
    if a.gpus is None:
        n = smi("-L").count("GPU ")
        a.gpus = ["0"] + (["0,1"] if n >= 2 else [])
    work = tempfile.mkdtemp(prefix="kernrl-faults-")
    rows = []
    try:
        batches = {}
        for faulty in (False, True):
            folder = os.path.join(work, "faulty" if faulty else "clean")
            batches[faulty] = (folder, make_batch(folder, a.samples, faulty))
        for gpus in a.gpus:
            for label, faulty, cfg in (("clean", False, "after"), ("faults, before", True, "before"),
                                       ("faults, after", True, "after")):
                folder, kinds = batches[faulty]
                run_dir = tempfile.mkdtemp(dir=work)
                recs, s, wall = grade(kernrl, folder, gpus, CONFIGS[cfg], run_dir)
                g = s["gpus"]
                rows.append({
                    "gpus": gpus, "run": label, "files": len(kinds), "records": len(recs),
                    "kpm": s["kpm"], "run_s": s.get("run_s", wall),
                    "busy": "/".join(f"{x['busy_pct']}%" for x in g),
                    "nvml": "/".join(x["nvml"] for x in g),
                    "restarts": sum(x["restarts"] for x in g),
                    "spare": sum(x["spare"] for x in g),
                    "wait_s": sum(x["wait_ms"] for x in g) / 1000,
                    "statuses": statuses(recs, kinds)})
                r = rows[-1]
                print(f"GPUs {gpus:4} {label:15} {r['records']}/{r['files']} records in "
                      f"{r['run_s']:.1f} s = {r['kpm'] or 0:.0f} kernels/min; worker busy {r['busy']}, "
                      f"NVML {r['nvml']}; restarts {r['restarts']} ({r['spare']} to a spare, "
                      f"{r['wait_s']:.1f} s waited); {r['statuses']}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    dev = smi("--query-gpu=name,driver_version", "--format=csv,noheader").strip().splitlines()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    md = [f"`scripts/fault_bench.py` on {dev[0] if dev else 'unknown GPU'}, "
          f"{time.strftime('%Y-%m-%d', time.gmtime())}, at commit {commit or 'unknown'}: "
          f"{a.samples} samples of every Level-1 solution, and for the fault mix half as many "
          "files again (a third of the batch) that crash (illegal address), trap or hang, in "
          "turn; a cold compile cache each run. \"before\": `workers.spare: false` and every plan "
          "run bounded by `timeouts.plan_run_s` (5 s); \"after\": the defaults (a started spare "
          "worker per GPU, plan runs bounded by 100x the reference's time, at least 0.25 s).", "",
          "| GPUs | run | files | wall s | kernels/min | worker busy | NVML utilisation | "
          "restarts (to a spare) | waited for starts s |",
          "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        md.append(f"| {r['gpus']} | {r['run']} | {r['files']} | {r['run_s']:.1f} | "
                  f"{r['kpm'] or 0:.0f} | {r['busy']} | {r['nvml']} | {r['restarts']} "
                  f"({r['spare']}) | {r['wait_s']:.1f} |")
    md += ["", "Statuses by kind of file:", ""]
    for r in rows:
        md.append(f"- GPUs {r['gpus']}, {r['run']}: {json.dumps(r['statuses'])}")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "faults.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
