#!/usr/bin/env python3
"""Builds a kernrl suite from a KernelBench checkout (run by `kernrl suite add kernelbench`).

    kernelbench_suite.py KERNELBENCH_DIR OUT_DIR [--levels 1,2,3] [--jobs N] [--timeout S]
                         [--only L2_1]

Reads KERNELBENCH_DIR/KernelBench/level<N>/*.py (KernelBench's own reference problems) and writes
OUT_DIR/problems/L<N>/<number>_<Name>/ (problem.yaml, TorchScript per size set) and
OUT_DIR/suite.json (what converted, what did not and why). Each problem is converted in its own
process with a time limit, so one problem's crash or hang costs only that problem. The builder
opens no network connection (sockets are refused in every process it starts).
"""

import argparse
import json
import os
import pathlib
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

HERE = pathlib.Path(__file__).resolve().parent
SCHEMA = "kernrl.suite.v1"


def no_network():
    import socket

    def refuse(*_a, **_k):
        raise OSError("kernrl's suite builder opens no network connections")

    for name in ("connect", "connect_ex", "sendto", "bind"):
        setattr(socket.socket, name, refuse)
    socket.create_connection = refuse  # type: ignore[assignment]


def convert_one(path, level, out):
    """In the child: converts one file, prints one JSON line."""
    no_network()
    sys.path.insert(0, str(HERE))
    import torch

    torch.set_num_threads(int(os.environ.get("KERNRL_SUITE_THREADS", "1")))
    import kb_problem
    from kb_source import ProblemError

    p = pathlib.Path(path)
    try:
        entry = kb_problem.convert(p, level, pathlib.Path(out))
        print(json.dumps({"ok": True, **entry}))
    except ProblemError as e:
        print(json.dumps({"ok": False, "file": f"level{level}/{p.name}", "reason": str(e)}))
    except Exception as e:  # noqa: BLE001 - the problem's own error, reported as its reason
        msg = str(e).strip().splitlines()[0][:300] if str(e).strip() else ""
        print(json.dumps({"ok": False, "file": f"level{level}/{p.name}",
                          "reason": f"{type(e).__name__}: {msg}"}))


def problem_files(root, levels, only):
    files = []
    for level in levels:
        d = root / "KernelBench" / f"level{level}"
        if not d.is_dir():
            continue
        for f in d.glob("*.py"):
            m = re.match(r"^(\d+)_", f.name)
            if not m:
                continue
            pid = f"L{level}_{m.group(1)}"
            if only and pid not in only:
                continue
            files.append((level, int(m.group(1)), f))
    # Levels interleaved (L1_1, L2_1, L3_1, L1_2, ...): a build cut short still covers every level.
    return sorted(files, key=lambda x: (x[1], x[0]))


def run_child(level, path, out, timeout):
    cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "--one", str(path), str(level), str(out)]
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"ok": False, "file": f"level{level}/{path.name}",
                "reason": f"conversion took over {timeout:.0f} s"}
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if lines:
        res = json.loads(lines[-1])
    else:
        tail = (r.stderr.strip().splitlines() or ["no output"])[-1][:300]
        res = {"ok": False, "file": f"level{level}/{path.name}",
               "reason": f"the converter exited with {r.returncode}: {tail}"}
    res["seconds"] = round(time.monotonic() - t0, 1)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kernelbench", nargs="?")
    ap.add_argument("out", nargs="?")
    ap.add_argument("--levels", default="1,2,3,4")
    ap.add_argument("--jobs", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--only", default="", help="problem ids such as L1_23,L2_1")
    ap.add_argument("--one", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one:
        convert_one(a.one[0], int(a.one[1]), a.one[2])
        return 0
    if not a.kernelbench or not a.out:
        ap.error("KERNELBENCH_DIR and OUT_DIR are required")
    no_network()
    root, out = pathlib.Path(a.kernelbench), pathlib.Path(a.out)
    if not (root / "KernelBench").is_dir():
        print(f"kernelbench_suite: {root} holds no KernelBench/ folder (a KernelBench checkout)", file=sys.stderr)
        return 2
    levels = [int(x) for x in a.levels.split(",") if x]
    only = {x.strip() for x in a.only.split(",") if x.strip()}
    files = problem_files(root, levels, only)
    (out / "problems").mkdir(parents=True, exist_ok=True)
    results = []
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        futs = [pool.submit(run_child, lv, f, out, a.timeout) for lv, _, f in files]
        for (lv, num, f), fut in zip(files, futs):
            r = fut.result()
            r["level"], r["number"] = lv, num
            results.append(r)
            mark = "ok  " if r["ok"] else "FAIL"
            print(f"{mark} L{lv}_{num} {f.name} ({r.get('seconds', 0):.0f} s)"
                  + ("" if r["ok"] else f": {r['reason']}"), flush=True)
            write_suite(root, out, levels, results)  # after each problem: a build cut short lists what it did
    write_suite(root, out, levels, results)
    ok = sum(r["ok"] for r in results)
    print(f"{ok} of {len(results)} problems converted; {out / 'suite.json'} lists the rest")
    return 0


def write_suite(root, out, levels, results):
    import torch  # noqa: F401 - imported once; its version is recorded

    by_level = {}
    for r in results:
        c = by_level.setdefault(str(r["level"]), {"problems": 0, "converted": 0})
        c["problems"] += 1
        c["converted"] += int(r["ok"])
    doc = {
        "schema": SCHEMA,
        "name": "kernelbench",
        "source": str(root.resolve()),
        "levels": levels,
        "torch": torch.__version__,
        "by_level": by_level,
        "converted": [{k: v for k, v in r.items() if k != "ok"} for r in results if r["ok"]],
        "not_converted": [{"level": r["level"], "number": r["number"], "file": r["file"],
                           "reason": r["reason"]} for r in results if not r["ok"]],
    }
    tmp = out / "suite.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    tmp.replace(out / "suite.json")


if __name__ == "__main__":
    sys.exit(main())
