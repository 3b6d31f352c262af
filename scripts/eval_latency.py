#!/usr/bin/env python3
"""End-to-end latency of `kernrl eval` on one cached Level-1 kernel, at the bench size and at a
tiny size, and where it goes: the record's `grader` object (prepare, the wait for the worker's
start and the worker's own start-up phases, the worker's round trip), the time until the record
was printed, and the time until the process exited."""
import argparse
import json
import subprocess
import time


def run_once(cmd):
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = p.stdout.readline()
    t_record = time.perf_counter() - t0
    p.stdout.read()
    p.wait()
    t_exit = time.perf_counter() - t0
    return json.loads(line), t_record, t_exit


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--kernrl", default="build-gpu/kernrl")
    ap.add_argument("--kernel", default="problems/L1/23_Softmax/solution.cu")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    subprocess.run([a.kernrl, "eval", a.kernel, "--json"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)  # compile into the cache
    modes = {"bench": [], "tiny": ["--size", "batch_size=4", "--size", "dim=256"]}
    print("| size | status | end to end s | record printed s | prepare ms | waited for worker ms "
          "| worker start-up (its own) ms | worker ms | total ms | worker phases ms |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |")
    for mode, extra in modes.items():
        for _ in range(a.runs):
            r, t_rec, t_exit = run_once([a.kernrl, "eval", a.kernel, "--json"] + extra)
            g = r.get("grader") or {}
            start = ", ".join(f"{k} {v:.0f}" for k, v in sorted((g.get("worker_start") or {}).items()))
            phases = ", ".join(f"{k} {v:.0f}" for k, v in sorted(
                (g.get("phases") or {}).items(), key=lambda kv: -kv[1])[:5])
            print(f"| {mode} | {r['status']} | {t_exit:.2f} | {t_rec:.2f} | {g.get('prepare_ms', 0):.0f} "
                  f"| {g.get('worker_start_ms', 0):.0f} | {start} | {g.get('worker_ms', 0):.0f} "
                  f"| {g.get('total_ms', 0):.0f} | {phases} |")


if __name__ == "__main__":
    main()
