#!/usr/bin/env python3
"""The fault mix on a GPU machine: a Level-1 batch in KernelBench's layout graded by `kernrl
grade-dir`, clean and with a third of its files replaced by kernels that crash (illegal address),
trap or hang, under several settings (--runs, names from RUNS below: "after" is the defaults;
"before" no spare worker and every plan run bounded by `timeouts.plan_run_s` alone; "one-spare"
one spare and no fault grace), on one GPU and, where there are two, on two. Prints a short table
and where each run's time went (by kind of file: the worker's round trips, the waits for workers
to start), and writes them, as Markdown for docs/results/, to OUT/faults.md (--name: another file).

  scripts/fault_bench.py --kernrl build-gpu/kernrl [--samples 4] [--gpus 0 0,1] [--out DIR]
                         [--runs clean before after] [--name faults.md] [--spread] [--keep]
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
# name: (batch with faults, config, what it is)
RUNS = {
    "clean": (False, "timeouts:\n  run_s: 20\n", "clean"),
    "before": (True, "timeouts:\n  run_s: 20\n  plan_run_floor_s: 5\nworkers:\n  spare: false\n",
               "faults, no spare, 5 s bound"),
    "one-spare": (True, "timeouts:\n  run_s: 20\n  fault_grace_s: 0\nworkers:\n  spares: 1\n",
                  "faults, 1 spare, no grace"),
    "after": (True, "timeouts:\n  run_s: 20\n", "faults, defaults"),
    "spares4": (True, "timeouts:\n  run_s: 20\nworkers:\n  spares: 4\n", "faults, 4 spares"),
    "floor0.1": (True, "timeouts:\n  run_s: 20\n  plan_run_floor_s: 0.1\nworkers:\n  spares: 4\n",
                 "faults, 4 spares, floor 0.1 s"),
}


def make_batch(folder, samples, faulty, spread=False):
    """Every Level-1 solution `samples` times; with `faulty`, half as many files again (a third of
    the batch) cycling through FAULTS, named as samples of problem 23 (graded in name order: one
    burst). With `spread`, the files are named by their place in the batch instead (their launch
    blocks name their problems) and every third faults. Returns {file: kind}."""
    os.makedirs(folder)
    files = []  # (source, kind, KernelBench name)
    sols = sorted(d for d in os.listdir(os.path.join(ROOT, "problems", "L1"))
                  if os.path.exists(os.path.join(ROOT, "problems", "L1", d, "solution.cu")))
    for d in sols:
        num = d.split("_")[0]
        for s in range(samples):
            files.append((os.path.join(ROOT, "problems", "L1", d, "solution.cu"), "good",
                          f"level_1_problem_{num}_sample_{s}_kernel.cu"))
    bad = []
    if faulty:
        for i in range(len(files) // 2):
            kind = FAULTS[i % len(FAULTS)]
            bad.append((os.path.join(ROOT, "tests", "adversarial", "L1_23_Softmax", kind + ".cu"),
                        kind, f"level_1_problem_23_sample_{100 + i}_kernel.cu"))
    if spread:
        order, good_files = [], list(files)
        for i, b in enumerate(bad):
            order += good_files[2 * i:2 * i + 2] + [b]
        order += good_files[2 * len(bad):]
        files = [(src, kind, f"{k:04d}_{kind}.cu") for k, (src, kind, _) in enumerate(order)]
    else:
        files += bad
    kinds = {}
    for src, kind, name in files:
        shutil.copy(src, os.path.join(folder, name))
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
                         r"the run, GPU utilisation \(NVML\) ([^\s,]+)", p.stderr):
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


def breakdown(recs, kinds):
    """Where a run's time went, by kind of file: {kind: {n, worker_s, start_wait_s, spare_first_s,
    spare_first_n}} (spare_first: the first kernel a spare graded after taking over)."""
    by = {}
    for r in recs:
        k = kinds.get(os.path.basename(r["file"]), "?")
        g = r.get("grader") or {}
        b = by.setdefault(k, {"n": 0, "worker_s": 0.0, "start_wait_s": 0.0, "spare_first_s": 0.0,
                              "spare_first_n": 0})
        b["n"] += 1
        b["worker_s"] += (g.get("worker_ms") or 0) / 1000
        b["start_wait_s"] += (g.get("worker_start_ms") or 0) / 1000
        if g.get("worker_spare"):
            b["spare_first_s"] += (g.get("worker_ms") or 0) / 1000
            b["spare_first_n"] += 1
    return by


def start_phases(recs):
    """The median of each worker start-up phase (ms) over the workers that graded a kernel here:
    {"first": {...}, "spare": {...}, "n_spare": n}."""
    out = {}
    for key, pick in (("first", lambda g: not g.get("worker_spare")),
                      ("spare", lambda g: g.get("worker_spare"))):
        phases = collections.defaultdict(list)
        for r in recs:
            g = r.get("grader") or {}
            if g.get("worker_start") and pick(g):
                for k, v in g["worker_start"].items():
                    phases[k].append(v)
                phases["waited"].append(g.get("worker_start_ms") or 0)
        out[key] = {k: round(sorted(v)[len(v) // 2], 1) for k, v in phases.items()}
        out["n_" + key] = len(phases["waited"])
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernrl", required=True)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--gpus", nargs="*", default=None,
                    help="GPU lists to run on (default: 0, and 0,1 where two GPUs are visible)")
    ap.add_argument("--runs", nargs="*", default=["clean", "before", "after"], choices=list(RUNS))
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--name", default="faults.md")
    ap.add_argument("--keep", action="store_true", help="keep each run's records in OUT/records/")
    ap.add_argument("--spread", action="store_true",
                    help="the faulty files spread through the batch (every third file in name "
                         "order) instead of one burst")
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
            batches[faulty] = (folder, make_batch(folder, a.samples, faulty, a.spread))
        for gpus in a.gpus:
            for name in a.runs:
                faulty, cfg, label = RUNS[name]
                folder, kinds = batches[faulty]
                run_dir = tempfile.mkdtemp(dir=work)
                recs, s, wall = grade(kernrl, folder, gpus, cfg, run_dir)
                if a.keep:
                    os.makedirs(os.path.join(a.out, "records"), exist_ok=True)
                    shutil.copy(os.path.join(run_dir, "records.jsonl"),
                                os.path.join(a.out, "records", f"{os.path.splitext(a.name)[0]}-{name}-"
                                             f"gpus{gpus.replace(',', '_')}.jsonl"))
                g = s["gpus"]
                rows.append({
                    "gpus": gpus, "run": label, "files": len(kinds), "records": len(recs),
                    "kpm": s["kpm"], "run_s": s.get("run_s", wall),
                    "busy": "/".join(f"{x['busy_pct']}%" for x in g),
                    "nvml": "/".join(x["nvml"] for x in g),
                    "restarts": sum(x["restarts"] for x in g),
                    "spare": sum(x["spare"] for x in g),
                    "wait_s": sum(x["wait_ms"] for x in g) / 1000,
                    "statuses": statuses(recs, kinds), "breakdown": breakdown(recs, kinds)})
                r = rows[-1]
                print(f"GPUs {gpus:4} {label:30} {r['records']}/{r['files']} records in "
                      f"{r['run_s']:.1f} s = {r['kpm'] or 0:.0f} kernels/min; worker busy {r['busy']}, "
                      f"NVML {r['nvml']}; restarts {r['restarts']} ({r['spare']} to a spare, "
                      f"{r['wait_s']:.1f} s waited); {r['statuses']}", flush=True)
                print("    " + json.dumps(r["breakdown"]), flush=True)
                r["starts"] = start_phases(recs)
                print("    worker starts (median ms): " + json.dumps(r["starts"]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    dev = smi("--query-gpu=name,driver_version", "--format=csv,noheader").strip().splitlines()
    # KERNRL_COMMIT names the commit of a tree copied without its .git (inside another checkout,
    # git would name that one's).
    commit = os.environ.get("KERNRL_COMMIT") or subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
        text=True).stdout.strip()
    md = [f"`scripts/fault_bench.py --runs {' '.join(a.runs)}` on "
          f"{dev[0] if dev else 'unknown GPU'}, {time.strftime('%Y-%m-%d', time.gmtime())}, at "
          f"commit {commit or 'unknown'}: {a.samples} samples of every Level-1 solution, and for "
          "the fault mix half as many files again (a third of the batch) that crash (illegal "
          "address), trap or hang, in turn"
          + ("; every third file of the batch faults (--spread)" if a.spread else
             ", graded after the good files (one burst)")
          + "; a cold compile cache each run. Settings: "
          + "; ".join(f"{RUNS[n][2]}: `{RUNS[n][1].strip() or 'defaults'}`".replace("\n", " ")
                      for n in a.runs) + ".", "",
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
    md += ["", "Where the time went, by kind of file: the worker's round trips (s), the waits for "
           "a worker to start (s), and of the round trips those of the first kernel a spare graded "
           "after taking over (s, count):", "",
           "| GPUs | run | kind | files | worker s | start waits s | first on a spare s (n) |",
           "|---|---|---|---|---|---|---|"]
    for r in rows:
        for k, b in sorted(r["breakdown"].items()):
            md.append(f"| {r['gpus']} | {r['run']} | {k} | {b['n']} | {b['worker_s']:.2f} | "
                      f"{b['start_wait_s']:.2f} | {b['spare_first_s']:.2f} ({b['spare_first_n']}) |")
    md += ["", "Worker starts, median ms of each phase (`grader.worker_start`; waited: "
           "`grader.worker_start_ms`), of the first worker and of the spares that took over:", ""]
    for r in rows:
        md.append(f"- GPUs {r['gpus']}, {r['run']}: {json.dumps(r['starts'])}")
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, a.name), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
