#!/usr/bin/env python3
"""How long the GPU takes to report a kernel's fault: scripts/fault_latency.cu, built with nvcc,
run once per fault and way of waiting (a fault leaves the context unusable, so one process each),
`--repeats` times. Also times the process's exit after the fault (the context's teardown), a
kernel that never ends (still running after --hang-s, then the process exits under it), and the
longest stall a second process's short kernels see while another process faults. Writes
OUT/fault-latency.md (Markdown for docs/results/) and OUT/fault-latency.jsonl.

  scripts/fault_latency.py [--repeats 3] [--out DIR] [--nvcc nvcc]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = ["ok", "trap", "trap1", "misaligned", "illegal_write", "illegal_read", "read_past"]
WAITS = ["query", "sync", "blocking"]


def run_one(exe, kind, wait, limit_s):
    """One process: its JSON line, with exit_ms (from the line to the process's end) added."""
    p = subprocess.Popen([exe, kind, wait, str(limit_s)], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    t = time.monotonic()
    p.wait()
    exit_ms = (time.monotonic() - t) * 1e3
    try:
        r = json.loads(line)
    except ValueError:
        r = {"kind": kind, "wait": wait, "result": f"no answer (exit {p.returncode})"}
    r["exit_ms"] = round(exit_ms, 2)
    return r


def neighbour(exe, kind, wait):
    """The longest stall of a second process's short kernels while `kind` faults (or hangs for
    0.3 s, then its process exits under the running kernel)."""
    n = subprocess.Popen([exe, "neighbour", "3"], stdout=subprocess.PIPE, text=True)
    time.sleep(1.0)  # the neighbour's context is up
    f = run_one(exe, kind, wait, 0.3)
    out = n.communicate()[0]
    try:
        r = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        r = {"result": "no answer"}
    r["fault"] = kind
    r["fault_result"] = f.get("result")
    return r


def ms(values):
    v = sorted(x for x in values if x is not None)
    if not v:
        return "-"
    return f"{statistics.median(v):.1f} ({v[0]:.1f}-{v[-1]:.1f})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--nvcc", default=os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"),
                                                   "bin", "nvcc"))
    ap.add_argument("--hang-s", type=float, default=0.3)
    a = ap.parse_args()
    exe = os.path.join(tempfile.mkdtemp(prefix="kernrl-fault-latency-"), "fault_latency")
    b = subprocess.run([a.nvcc, "-O2", "-arch=native", "-o", exe,
                        os.path.join(HERE, "fault_latency.cu")], capture_output=True, text=True)
    if b.returncode != 0:
        sys.exit("nvcc failed:\n" + b.stderr[-3000:])
    rows = []
    for kind in KINDS:
        for wait in WAITS:
            for _ in range(a.repeats):
                rows.append(run_one(exe, kind, wait, 10))
                print(json.dumps(rows[-1]), flush=True)
    for _ in range(a.repeats):
        rows.append(run_one(exe, "hang", "query", a.hang_s))
        print(json.dumps(rows[-1]), flush=True)
    neighbours = []
    for kind in ["trap", "misaligned", "illegal_write", "hang"]:
        neighbours.append(neighbour(exe, kind, "query"))
        print(json.dumps(neighbours[-1]), flush=True)
    with open(os.path.join(a.out, "fault-latency.jsonl"), "w") as f:
        for r in rows + neighbours:
            f.write(json.dumps(r) + "\n")
    dev = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip().splitlines()
    md = [f"`scripts/fault_latency.py` on {dev[0] if dev else 'unknown GPU'}, "
          f"{time.strftime('%Y-%m-%d', time.gmtime())}: {a.repeats} processes per row; "
          "milliseconds as median (min-max). result: launch to the error on the host; exit: the "
          "process's end after it (the faulted context's teardown); init: CUDA's start and the "
          "context.", "",
          "| kernel | wait | result | result ms | exit ms | init ms |", "|---|---|---|---|---|---|"]
    groups = {}
    for r in rows:
        groups.setdefault((r["kind"], r.get("wait", "?")), []).append(r)
    for (kind, wait), rs in groups.items():
        res = "/".join(sorted({r.get("result", "?") for r in rs}))
        md.append(f"| {kind} | {wait} | {res} | {ms([r.get('result_ms') for r in rs])} | "
                  f"{ms([r.get('exit_ms') for r in rs])} | {ms([r.get('init_ms') for r in rs])} |")
    md += ["", "A second process's short kernels (64x256 threads, launch and synchronise, back to "
           "back for 3 s) while another process faults:", "",
           "| fault | its result | launches | mean ms | longest ms | over 1 ms | over 10 ms |",
           "|---|---|---|---|---|---|---|"]
    for r in neighbours:
        md.append(f"| {r['fault']} | {r.get('fault_result')} | {r.get('launches', '-')} | "
                  f"{r.get('mean_ms', '-')} | {r.get('max_ms', '-')} | {r.get('over_1ms', '-')} | "
                  f"{r.get('over_10ms', '-')} |")
    text = "\n".join(md) + "\n"
    with open(os.path.join(a.out, "fault-latency.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
