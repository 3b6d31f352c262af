#!/usr/bin/env python3
"""The identity check of a KernelBench suite: kernrl's reference path against KernelBench's.

    kb_identity.py SUITE_DIR KERNELBENCH_DIR --refdump BUILD/kernrl_refdump [--device cuda]
                   [--only L1_23,L2_1] [--exclude L1_1,...] [--shard K/N] [--max-bench-mb 1024]

For every converted problem and size set, kernrl_refdump draws the inputs as kernrl's worker does
and runs the reference through kernrl's TorchScript path (C++, torch::jit::load); this script then
builds the problem's Model the way KernelBench does (seed 42, the same sizes) and checks that
  - the weights kernrl gives kernels are exactly KernelBench's, and
  - KernelBench's eager module, on the same inputs, gives the same outputs within the problem's
    tolerance (KernelBench's own: 1e-4 for fp32).
Prints a markdown table, one row per problem; exits 1 when a check fails.
"""

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from kb_convert import describe_inputs  # noqa: E402
from kb_source import Source, kernelbench_model  # noqa: E402

TORCH_DTYPES = {"Float": torch.float32, "Double": torch.float64, "Long": torch.int64, "Int": torch.int32,
                "Bool": torch.bool, "Half": torch.float16, "BFloat16": torch.bfloat16, "Char": torch.int8,
                "Byte": torch.uint8, "Short": torch.int16}


def load(d, entry, device):
    a = np.fromfile(os.path.join(d, entry["file"]), dtype=np.uint8)
    t = torch.from_numpy(a.copy()).view(TORCH_DTYPES[entry["dtype"]])
    return t.reshape(entry["shape"]).to(device)


def source_of(kb_root, pid):
    level, number = pid.split("_")[0][1:], pid.split("_")[1]
    return Source(next((kb_root / "KernelBench" / f"level{level}").glob(f"{number}_*.py")))


def refdump_error(stderr):
    """The line of a failed refdump's stderr that says why: libtorch's errors end in a stack of
    frames, the cause is the last line before them that names an error."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith(("frame #", "Exception raised from"))]
    named = [ln for ln in lines if "Error" in ln or "error" in ln]
    return ((named or lines or ["refdump failed"])[-1])[:200]


def check_problem(refdump, suite, kb_root, pid, device, which, work):
    """Rows (set, weights equal, max |diff|, within tolerance) for one problem."""
    env = dict(os.environ, KERNRL_PROBLEMS=str(suite / "problems"))
    dump = work / pid
    r = subprocess.run([refdump, pid, str(dump), "--sizes", which, "--device", device],
                       capture_output=True, text=True, env=env, check=False)
    if r.returncode != 0:
        return [{"set": which, "error": refdump_error(r.stderr)}]
    meta = json.loads((dump / "meta.json").read_text())
    src = source_of(kb_root, pid)
    rows = []
    for k, s in enumerate(meta["sets"]):
        d = s["dir"]
        sizes = {n: v for n, v in s["sizes"].items() if n in src.sizes}
        ns = src.load(sizes)
        model, _ = kernelbench_model(ns)  # as KernelBench builds it: nothing of kernrl's
        model = model.to(device)
        _, layout = describe_inputs(ns, "meta")  # get_inputs()'s non-tensor values, in place
        weights = dict(list(model.named_parameters()) + list(model.named_buffers()))
        given = {e["name"]: load(d, e, device) for e in s["parameters"]}
        same_w = set(given) == set(weights) and all(torch.equal(given[n], weights[n].detach()) for n in given)
        xs = iter([load(d, e, device) for e in s["inputs"]])
        with torch.no_grad():
            got = model(*[next(xs) if v is None else v for v in layout])
        got = list(got) if isinstance(got, (tuple, list)) else [got]
        want = [load(d, e, device) for e in s["outputs"]]
        ok, diff = len(got) == len(want), 0.0
        for g, w, e in zip(got, want, s["outputs"]):
            if g.shape != w.shape or g.dtype != w.dtype:
                ok = False
                continue
            if g.is_floating_point():
                diff = max(diff, float((g.double() - w.double()).abs().max()) if g.numel() else 0.0)
                ok = ok and torch.allclose(g, w, atol=e["atol"], rtol=e["rtol"], equal_nan=True)
            else:
                ok = ok and torch.equal(g, w)
        rows.append({"set": f"{s['kind']}{k}", "weights": same_w, "max_diff": diff, "ok": ok and same_w})
    shutil.rmtree(dump, ignore_errors=True)
    return rows


def bench_mb(suite, pid):
    """The bench set's tensors in MB, read from problem.yaml's sizes (the refdump writes them)."""
    sj = json.loads((suite / "suite.json").read_text())
    for c in sj["converted"]:
        if c["id"] == pid:
            return c.get("bench_mb", 0)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suite")
    ap.add_argument("kernelbench")
    ap.add_argument("--refdump", required=True)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--only", default="")
    ap.add_argument("--exclude", default="", help="problem ids not to check (e.g. checked before)")
    ap.add_argument("--shard", default="0/1", help="K/N: check every N-th problem from the K-th (parallel runs)")
    ap.add_argument("--max-bench-mb", type=float, default=1024,
                    help="check the bench size only where its tensors are at most this many MB")
    a = ap.parse_args()
    suite, kb_root = pathlib.Path(a.suite), pathlib.Path(a.kernelbench)
    only = {x for x in a.only.split(",") if x}
    ids = [c["id"] for c in json.loads((suite / "suite.json").read_text())["converted"]]
    ids = [i for i in ids if not only or any(i == o or i.startswith(o + "_") for o in only)]
    exclude = {x for x in a.exclude.split(",") if x}
    ids = [i for i in ids if not any(i == o or i.startswith(o + "_") for o in exclude)]
    k, n = (int(x) for x in a.shard.split("/"))
    ids = ids[k::n]
    failed = 0
    print("| problem | size sets | weights = KernelBench's | max abs diff | verdict |")
    print("| --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory() as tmp:
        for pid in ids:
            which = "all" if bench_mb(suite, pid) <= a.max_bench_mb else "test"
            try:
                rows = check_problem(a.refdump, suite, kb_root, pid, a.device, which, pathlib.Path(tmp))
            except Exception as e:  # noqa: BLE001 - reported per problem
                rows = [{"set": which, "error": f"{type(e).__name__}: {str(e)[:160]}"}]
            err = next((r["error"] for r in rows if "error" in r), None)
            ok = err is None and all(r["ok"] for r in rows)
            failed += not ok
            sets = ",".join(r["set"] for r in rows)
            if err:
                print(f"| {pid} | {sets} | | | error: {err} |", flush=True)
            else:
                w = all(r["weights"] for r in rows)
                diff = max(r["max_diff"] for r in rows)
                print(f"| {pid} | {sets} | {'yes' if w else 'NO'} | {diff:.3g} | {'same' if ok else 'DIFFERENT'} |", flush=True)
    print(f"\n{len(ids) - failed} of {len(ids)} problems: kernrl's reference path = KernelBench's at every size checked")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
