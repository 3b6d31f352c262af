#!/usr/bin/env python3
"""The torch.compile baseline of a KernelBench suite, measured with the host's Python torch.

    kb_baselines.py SUITE_DIR [--out FILE] [--only L1_23,L2_1] [--jobs N] [--deadline S]
                    [--trials 100] [--mode default] [--seed FILE] [--missing]

KernelBench publishes two baselines per problem: PyTorch eager and torch.compile. kernrl's worker
times the eager module itself (the suite's TorchScript reference, run op by op); the
torch.compile baseline needs Python (Dynamo and Inductor), so this tool measures it offline, on
the GPU that will grade, and writes it into the suite's baseline file, which eval, grade-dir and
serve read (docs/grading.md, section 7):

    problems.<id>: {sizes: <bench sizes>,
                    compile_baseline: {timing: {median_ms, mean_ms, std_ms, min_ms, max_ms, n},
                                       eager_timing: {...}, backend: "inductor", mode,
                                       torch, compile_s, method}}

For each problem the module is built as KernelBench builds it (seed 42, the file's own bench
constants, `Model(*get_init_inputs())`, moved to the GPU), get_inputs() drawn with seed 42, and
the module and `torch.compile(module)` timed the way KernelBench times them (CUDA events, the L2
cache flushed before each trial, 5 warm-up runs, `--trials` timed runs). Each problem runs in its
own process; compiling (CPU) runs in parallel in `--jobs` processes, while the timing itself holds
a lock, so that one problem is timed at a time. The file is written after each problem, so a run
cut short by `--deadline` keeps what it measured. An existing file for the same GPU (`kernrl
bench --baselines --suite` writes one) is added to; its other entries are kept.
"""

import argparse
import datetime
import fcntl
import json
import os
import pathlib
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
SCHEMA = "kernrl.baselines.v1"


def gpu_slug(name):
    """kernrl's gpu_slug: "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"."""
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]", "-", name.lower())).strip("-")


def bench_sizes(problem_dir):
    """problem.yaml's bench sizes (the builder writes them as one JSON mapping)."""
    for line in (problem_dir / "problem.yaml").read_text().splitlines():
        if line.startswith("  bench: "):
            return json.loads(line[len("  bench: "):])
    raise ValueError(f"{problem_dir / 'problem.yaml'}: no bench sizes")


def stats(ms):
    import statistics

    s = sorted(ms)
    return {"median_ms": statistics.median(s), "mean_ms": statistics.fmean(s),
            "std_ms": statistics.pstdev(s) if len(s) > 1 else 0.0, "min_ms": s[0], "max_ms": s[-1],
            "n": len(s)}


def time_cuda(fn, args, trials, torch):
    """KernelBench's cuda_event timing: warm-up, then per trial the L2 flushed, one timed run."""
    for _ in range(5):
        fn(*args)
    torch.cuda.synchronize()
    l2 = torch.cuda.get_device_properties(0).L2_cache_size or (64 << 20)
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda")
    out = []
    for _ in range(trials):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn(*args)
        end.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(end))
    return stats(out)


def measure_one(pid, source, lock_path, trials, mode):
    """In the child: one problem's eager and compiled timings, printed as one JSON line."""
    sys.path.insert(0, str(HERE))
    import torch
    from kb_convert import describe_inputs
    from kb_source import Source, kernelbench_model, seed_all

    ns = Source(pathlib.Path(source)).load()
    model, _ = kernelbench_model(ns)
    model = model.to("cuda")
    tensors, layout = describe_inputs(ns, None)
    xs = iter([x.to("cuda") for x, _ in tensors])
    args = [next(xs) if v is None else v for v in layout]
    compiled = torch.compile(model, backend="inductor", mode=None if mode == "default" else mode)
    t0 = time.monotonic()
    with torch.no_grad():
        seed_all()
        compiled(*args)  # Dynamo and Inductor compile here (CPU), outside the lock
        torch.cuda.synchronize()
    compile_s = time.monotonic() - t0
    with open(lock_path, "w") as lock, torch.no_grad():
        fcntl.flock(lock, fcntl.LOCK_EX)  # one problem on the GPU at a time
        eager = time_cuda(model, args, trials, torch)
        comp = time_cuda(compiled, args, trials, torch)
    print(json.dumps({"id": pid, "eager": eager, "compile": comp, "compile_s": round(compile_s, 1)}))


def run_child(pid, source, lock_path, a):
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--one", pid, source, lock_path,
           str(a.trials), a.mode]
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=a.timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        return {"id": pid, "error": f"took over {a.timeout:.0f} s"}
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if lines:
        return json.loads(lines[-1])
    tail = (r.stderr.strip().splitlines() or ["no output"])[-1][:200]
    return {"id": pid, "error": f"exited with {r.returncode}: {tail}"}


def load_doc(path, device_name, torch):
    if path.exists():
        doc = json.loads(path.read_text())
        if doc.get("schema") != SCHEMA:
            raise SystemExit(f"kb_baselines: {path} is not a kernrl baseline file")
        if doc.get("device", {}).get("name") != device_name:
            raise SystemExit(f"kb_baselines: {path} is for {doc.get('device', {}).get('name')}, not {device_name}")
        return doc
    # A file of compile baselines alone: the worker's own versions are not known here, so the
    # eager entries (written by `kernrl bench --baselines`) are absent and measured as usual.
    return {"schema": SCHEMA, "device": {"name": device_name},
            "versions": {"torch": torch.__version__.split("+")[0], "cuda": torch.version.cuda or "",
                         "driver": ""},
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "config": {}, "ceilings": {}, "problems": {}}


def table(doc):
    """A baseline file's torch.compile entries: eager and compiled mean and median, the ratio."""
    rows = ["| problem | eager mean ms | torch.compile mean ms | eager median ms | torch.compile median ms | "
            "eager / compile (mean) | compiled in s |", "| --- | --- | --- | --- | --- | --- | --- |"]
    ratios = []
    for pid, e in sorted(doc.get("problems", {}).items(),
                         key=lambda kv: (int(kv[0].split("_")[0][1:]), int(kv[0].split("_")[1]))):
        c = e.get("compile_baseline")
        if not c:
            continue
        ea, co = c["eager_timing"], c["timing"]
        ratios.append(ea["mean_ms"] / co["mean_ms"])
        rows.append(f"| {pid} | {ea['mean_ms']:.4g} | {co['mean_ms']:.4g} | {ea['median_ms']:.4g} | "
                    f"{co['median_ms']:.4g} | {ratios[-1]:.3f} | {c.get('compile_s', '')} |")
    import math

    g = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else float("nan")
    tv = next((e["compile_baseline"].get("torch", "?") for e in doc.get("problems", {}).values()
               if e.get("compile_baseline")), "?")
    head = (f"{len(ratios)} problems on {doc['device']['name']} (torch {tv}); "
            f"geometric mean of eager / torch.compile: {g:.3f}\n\n")
    return head + "\n".join(rows) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite", nargs="?")
    ap.add_argument("--out", help="baseline file (default: SUITE/baselines/<gpu>.json)")
    ap.add_argument("--only", default="", help="problem ids (L1_23 or L1_23_Softmax), in this order first")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--deadline", type=float, default=0, help="start no problem after this many seconds")
    ap.add_argument("--timeout", type=float, default=300, help="per problem")
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--mode", default="default", help="torch.compile mode (default, max-autotune, ...)")
    ap.add_argument("--all", action="store_true", help="with --only: the listed problems first, then the rest")
    ap.add_argument("--seed", metavar="FILE",
                    help="a baseline file of the same GPU to start from where the output file does not exist")
    ap.add_argument("--missing", action="store_true",
                    help="only problems the baseline file has no torch.compile entry for")
    ap.add_argument("--table", metavar="FILE", help="print a baseline file's torch.compile entries as Markdown")
    ap.add_argument("--one", nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        measure_one(a.one[0], a.one[1], a.one[2], int(a.one[3]), a.one[4])
        return 0
    if a.table:
        print(table(json.loads(pathlib.Path(a.table).read_text())), end="")
        return 0
    if not a.suite:
        ap.error("SUITE_DIR is required")
    import torch

    suite = pathlib.Path(a.suite)
    sj = json.loads((suite / "suite.json").read_text())
    kb_root = pathlib.Path(sj["source"])
    entries = {c["id"]: c for c in sj["converted"]}
    wanted = [x.strip() for x in a.only.split(",") if x.strip()]
    order = []
    for w in wanted:
        order += [i for i in entries if (i == w or i.startswith(w + "_")) and i not in order]
    if not wanted or a.all:
        order += [i for i in entries if i not in order]
    device = torch.cuda.get_device_name(0)
    out = pathlib.Path(a.out) if a.out else suite / "baselines" / f"{gpu_slug(device)}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    if a.seed and not out.exists():
        seed = json.loads(pathlib.Path(a.seed).read_text())
        if seed.get("device", {}).get("name") != device:
            raise SystemExit(f"kb_baselines: {a.seed} is for {seed.get('device', {}).get('name')}, not {device}")
        out.write_text(json.dumps(seed, indent=1) + "\n")
    doc = load_doc(out, device, torch)
    if a.missing:
        order = [i for i in order if not doc["problems"].get(i, {}).get("compile_baseline")]
    lock_path = str(out.parent / ".kb_baselines.lock")
    start = time.monotonic()

    def job(pid):
        if a.deadline and time.monotonic() - start > a.deadline:
            return {"id": pid, "error": "skipped: --deadline reached"}
        return run_child(pid, str(kb_root / "KernelBench" / entries[pid]["file"]), lock_path, a)

    done = failed = 0
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for r in pool.map(job, order):
            pid = r["id"]
            if "error" in r:
                failed += 1
                print(f"FAIL {pid}: {r['error']}", flush=True)
                continue
            level, folder = pid.split("_", 1)
            sizes = bench_sizes(suite / "problems" / level / folder)
            e = doc["problems"].setdefault(pid, {})
            e["sizes"] = e.get("sizes", sizes)
            e["compile_baseline"] = {"timing": r["compile"], "eager_timing": r["eager"], "backend": "inductor",
                                     "mode": a.mode, "torch": torch.__version__, "compile_s": r["compile_s"],
                                     "method": f"cuda events, L2 flushed, 5 warm-up, {a.trials} trials"}
            done += 1
            print(f"ok   {pid}: eager {r['eager']['mean_ms']:.4f} ms, compile {r['compile']['mean_ms']:.4f} ms "
                  f"(compiled in {r['compile_s']} s)", flush=True)
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(doc, indent=1) + "\n")
            tmp.replace(out)
    print(f"{done} problems timed, {failed} not, in {time.monotonic() - start:.0f} s; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
