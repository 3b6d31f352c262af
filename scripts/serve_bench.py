#!/usr/bin/env python3
"""Measures a running `kernrl serve` the way RL loops use it (scripts/serve-bench.sh starts one).

Phases, each on OpenEnv WebSocket sessions (examples/kernrl_client.py, standard library only):
  load      S concurrent sessions (each S of --sessions), each taking --steps steps of distinct
            variants of the bundled solution: step latency p50/p99, kernels per minute, and every
            step that was not graded (refused, deadline) by reason
  cache     --group sessions send the same new answer at once (a GRPO group: one grading, the rest
            coalesced), then again (cache hits)
  faults    kernels that crash (illegal address, trap) and hang (infinite loop) mixed into a stream
            of good ones over --group sessions: every step must come back, the bad ones as
            runtime_error / timeout, the good ones correct; zero steps lost
Writes OUT/serve-bench.json and prints a Markdown summary.
"""
import argparse
import json
import re
import statistics
import sys
import threading
import time
import urllib.request
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from kernrl_client import KernrlEnv, ServerError  # noqa: E402

ADV = ROOT / "tests/adversarial/L1_23_Softmax"


def variant(source, tag):
    return f"// bench {tag} {uuid.uuid4()}\n" + source


def pct(xs, q):
    if not xs:
        return None
    xs = sorted(xs)
    k = (len(xs) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def metrics(url):
    with urllib.request.urlopen(url + "/metrics", timeout=30) as r:
        text = r.read().decode()
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        name, value = line.rsplit(" ", 1)
        out[name] = float(value)
    return out


def run_sessions(url, problem, sources_per_session, token=None):
    """One thread per session; each resets, then steps through its sources. Returns one dict per
    step: latency, status, reward, error."""
    steps = []
    lock = threading.Lock()

    def session(i, sources):
        try:
            env = KernrlEnv(url, token, timeout=600)
            env.reset(problem_id=problem)
        except Exception as e:  # noqa: BLE001
            with lock:
                for _ in sources:
                    steps.append({"session": i, "lost": True, "error": f"session failed: {e}"})
            return
        for src in sources:
            t0 = time.monotonic()
            rec = {"session": i}
            try:
                r = env.step(src)
                rec["status"] = r["observation"].get("status")
                rec["reward"] = r["reward"]
                rec["speedup"] = r["observation"].get("speedup")
            except ServerError as e:
                rec["error"] = e.data.get("reason") or e.code
            except Exception as e:  # noqa: BLE001
                rec["lost"] = True
                rec["error"] = str(e)
            rec["latency_s"] = time.monotonic() - t0
            with lock:
                steps.append(rec)
        try:
            env.close()
        except Exception:  # noqa: BLE001
            pass

    threads = [threading.Thread(target=session, args=(i, s)) for i, s in enumerate(sources_per_session)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return steps, time.monotonic() - t0


def summarize(steps, wall):
    graded = [s for s in steps if "status" in s]
    lat = [s["latency_s"] for s in graded]
    by_status, by_error = {}, {}
    for s in graded:
        by_status[s["status"]] = by_status.get(s["status"], 0) + 1
    for s in steps:
        if "error" in s:
            by_error[s["error"] if not s.get("lost") else "lost"] = by_error.get(
                s["error"] if not s.get("lost") else "lost", 0) + 1
    return {"steps": len(steps), "graded": len(graded), "wall_s": round(wall, 3),
            "kernels_per_min": round(len(graded) / wall * 60, 1) if wall > 0 else None,
            "p50_s": pct(lat, 0.5), "p99_s": pct(lat, 0.99), "mean_s": statistics.mean(lat) if lat else None,
            "max_s": max(lat) if lat else None, "by_status": by_status, "not_graded": by_error,
            "lost": sum(1 for s in steps if s.get("lost"))}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--problem", default="L1_23_Softmax")
    ap.add_argument("--sessions", default="1,8,64")
    ap.add_argument("--steps", type=int, default=4, help="steps per session in the load phase")
    ap.add_argument("--group", type=int, default=8, help="sessions of the cache and fault phases")
    ap.add_argument("--phases", default="load,cache,faults")
    ap.add_argument("--out", default="serve-bench-results")
    a = ap.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    solution = (ROOT / "problems/L1/23_Softmax/solution.cu").read_text()
    info = json.loads(urllib.request.urlopen(a.url + "/v1", timeout=30).read())
    result = {"server": info, "phases": {}}
    phases = a.phases.split(",")
    print(f"server: {info['gpu_info']}; compile_only={info['compile_only']}", flush=True)

    # Warm up: the worker has loaded libtorch; the problem's baseline is measured once.
    run_sessions(a.url, a.problem, [[variant(solution, "warmup")]])

    if "load" in phases:
        result["phases"]["load"] = {}
        for n in [int(x) for x in a.sessions.split(",")]:
            srcs = [[variant(solution, f"load-{n}-{i}-{k}") for k in range(a.steps)] for i in range(n)]
            steps, wall = run_sessions(a.url, a.problem, srcs)
            s = summarize(steps, wall)
            result["phases"]["load"][str(n)] = s
            print(f"load {n:>3} sessions: {json.dumps(s)}", flush=True)

    if "cache" in phases:
        m0 = metrics(a.url)
        same = variant(solution, "cache")
        first, wall1 = run_sessions(a.url, a.problem, [[same]] * a.group)
        m1 = metrics(a.url)
        again, wall2 = run_sessions(a.url, a.problem, [[same]] * a.group)
        m2 = metrics(a.url)
        key = 'kernrl_serve_cache_total{result="%s"}'
        result["phases"]["cache"] = {
            "group": a.group,
            "first": summarize(first, wall1),
            "again": summarize(again, wall2),
            "first_counts": {k: m1.get(key % k, 0) - m0.get(key % k, 0) for k in ("miss", "hit", "coalesced")},
            "again_counts": {k: m2.get(key % k, 0) - m1.get(key % k, 0) for k in ("miss", "hit", "coalesced")},
        }
        print(f"cache: {json.dumps(result['phases']['cache'])}", flush=True)

    if "faults" in phases:
        m0 = metrics(a.url)
        bad = {"illegal_address": (ADV / "illegal_address.cu").read_text(),
               "trap": (ADV / "trap.cu").read_text(),
               "infinite_loop": (ADV / "infinite_loop.cu").read_text()}
        plan, expect = [], {}
        for i in range(a.group):
            srcs = []
            for k in range(4):
                kind = "good"
                if k == 1 and i % 2 == 0:
                    kind = "illegal_address" if i % 4 == 0 else "trap"
                if k == 2 and i < 2:
                    kind = "infinite_loop"
                src = variant(solution if kind == "good" else bad[kind], f"fault-{i}-{k}")
                expect[src] = kind
                srcs.append(src)
            plan.append(srcs)
        steps, wall = run_sessions(a.url, a.problem, plan)
        m1 = metrics(a.url)
        s = summarize(steps, wall)
        # Which status each kind got.
        kinds = {}
        ordered = sorted(steps, key=lambda x: x["session"])
        per_session = {}
        for st in ordered:
            per_session.setdefault(st["session"], []).append(st)
        for i, srcs in enumerate(plan):
            for src, st in zip(srcs, per_session.get(i, [])):
                kinds.setdefault(expect[src], {}).setdefault(st.get("status") or st.get("error"), 0)
                kinds[expect[src]][st.get("status") or st.get("error")] += 1
        restarts = sum(v for k, v in m1.items() if k.startswith("kernrl_serve_gpu_worker_restarts_total")) - \
            sum(v for k, v in m0.items() if k.startswith("kernrl_serve_gpu_worker_restarts_total"))
        s["statuses_by_kind"] = kinds
        s["worker_restarts"] = restarts
        result["phases"]["faults"] = s
        print(f"faults: {json.dumps(s)}", flush=True)

    (out / "serve-bench.json").write_text(json.dumps(result, indent=2) + "\n")
    print_markdown(result)


def fmt(x, unit="s"):
    return "-" if x is None else (f"{x:.3f} {unit}" if unit else f"{x}")


def print_markdown(r):
    print("\n## kernrl serve bench\n")
    print(f"Server: {r['server']['gpu_info']}, step deadline {r['server']['step_timeout_s']} s, "
          f"run timeout {r['server']['run_timeout_s']} s\n")
    if "load" in r["phases"]:
        print("| sessions | steps | graded | p50 | p99 | max | kernels/min | not graded | lost |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for n, s in r["phases"]["load"].items():
            print(f"| {n} | {s['steps']} | {s['graded']} | {fmt(s['p50_s'])} | {fmt(s['p99_s'])} | "
                  f"{fmt(s['max_s'])} | {s['kernels_per_min']} | {s['not_graded'] or '-'} | {s['lost']} |")
    if "cache" in r["phases"]:
        c = r["phases"]["cache"]
        print(f"\nCache, {c['group']} sessions with one answer: first round {c['first_counts']} "
              f"(p50 {fmt(c['first']['p50_s'])}), second round {c['again_counts']} "
              f"(p50 {fmt(c['again']['p50_s'])})")
    if "faults" in r["phases"]:
        f = r["phases"]["faults"]
        print(f"\nFaults: {f['steps']} steps, {f['graded']} graded, {f['lost']} lost, "
              f"worker restarts {f['worker_restarts']:.0f}; statuses by kind: {f['statuses_by_kind']}")


if __name__ == "__main__":
    main()
