#!/usr/bin/env python3
"""KernelBench generations graded by KernelBench's own eval and by kernrl, side by side.

    kb_side_by_side.py --kernrl BUILD/kernrl --suite SUITE --kernelbench KB_CHECKOUT \
                       --gens DIR [DIR ...] --out WORK [--jobs 8] [--max-eval 6] [--tag NAME] \
                       [--ready FILE] [--deadline S] [--hard-deadline S] [--previous SIDE_JSON]
    kb_side_by_side.py --combine WORK1|SIDE_JSON [WORK2 ...] --md RESULT.md

Every `level_<L>_problem_<P>_sample_<S>_kernel.py` of levels 1-3 under the DIRs is graded twice
on this GPU:

- KernelBench: its own `eval_kernel_against_ref` from the checkout's src/kernelbench, with the
  settings of its scripts/eval_from_generations.py (seed 42, 5 correctness trials, 100 timed
  trials with CUDA events, PyTorch eager timed the same way), its extensions built first with its
  `build_compile_cache`, one process per file, several at a time with their GPU phases under one
  lock (scripts/kb_eval_pool.py says how).
- kernrl: `kernrl grade-dir DIR --suite SUITE` on the files whose problem the suite converted,
  holding the same GPU lock.

Everything can start before kernrl and the suite exist: KernelBench's side starts at once, and
kernrl's waits for `--ready FILE` (written once kernrl is built and the suite converted; the
suite's suite.json is read then, and files of problems it did not convert are left out of both
sides from then on). `--deadline S`: no evaluation starts after S seconds; `--hard-deadline S`:
whatever still runs then is stopped. WORK/side.json and WORK/side_by_side.md are rewritten after
every file, so a run cut short keeps what it graded. `--previous SIDE_JSON` takes KernelBench's
verdicts of an earlier run on the same GPU model instead of evaluating those files again.
`--combine` merges the side.json of several runs into one Markdown result.
"""

import argparse
import collections
import contextlib
import fcntl
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import kb_eval_pool  # noqa: E402

NAME = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")


def gen_files(dirs):
    """(file, level, number) of every level 1-3 generation under dirs; the others, with why."""
    files, skipped = [], []
    for d in dirs:
        for f in sorted(pathlib.Path(d).glob("*.py")):
            m = NAME.match(f.name)
            if not m:
                continue
            lv, num = int(m.group(1)), int(m.group(2))
            if lv in (1, 2, 3):
                files.append((f, lv, num))
            else:
                skipped.append((str(f), f"level {lv} is not one of KernelBench's levels 1-3"))
    return files, skipped


def suite_index(suite):
    """(converted: (level, number) -> entry, not converted: (level, number) -> reason) of suite.json."""
    p = pathlib.Path(suite) / "suite.json"
    if not p.exists():
        return None, {}
    sj = json.loads(p.read_text())
    conv = {(int(c["id"].split("_")[0][1:]), int(c["id"].split("_")[1])): c for c in sj["converted"]}
    nc = {(int(c["level"]), int(c["number"])): c.get("reason", "") for c in sj.get("not_converted", [])}
    return conv, nc


def set_name(f):
    """A generations folder's name in the results: its last two path components."""
    p = pathlib.Path(f).resolve().parent
    return f"{p.parent.name}/{p.name}"


def ref_file(kb_root, lv, num):
    hits = sorted((pathlib.Path(kb_root) / "KernelBench" / f"level{lv}").glob(f"{num}_*.py"))
    return hits[0] if hits else None


def kernrl_rows(out, d):
    rows = {}
    for ln in out.read_text().splitlines() if out.exists() else []:
        r = json.loads(ln)
        f = str(pathlib.Path(d) / pathlib.Path(r.get("file", "")).name)
        err = r.get("error") or {}
        kernel = ((r.get("timing") or {}).get("kernel") or {}).get("median_ms")
        rows[f] = {"status": r.get("status"), "speedup": r.get("speedup"), "kernel_ms": kernel,
                   "compile_speedup": ((r.get("baseline") or {}).get("speedups") or {}).get("compile"),
                   "suspicious": bool(r.get("suspicious", False)),
                   "message": (err.get("message") if isinstance(err, dict) else str(err))[:300] if err else ""}
    return rows


class Run:
    """One side-by-side run: KernelBench's pool and kernrl's grade-dir beside it."""

    def __init__(self, a):
        self.a = a
        self.work = pathlib.Path(a.out)
        self.work.mkdir(parents=True, exist_ok=True)
        self.logf = open(self.work / "side.log", "a")
        self.t0 = time.monotonic()
        self.mu = threading.Lock()
        found, self.skipped_levels = gen_files(a.gens)
        self.kb_root = pathlib.Path(a.kernelbench)
        prev = json.loads(pathlib.Path(a.previous).read_text()) if a.previous else {"rows": []}
        prev_rows = [r for s in prev.get("sides", [prev]) for r in s["rows"]]  # side.json or --combine's --json
        self.prev = {r["name"] + "@" + r["set"].split(":", 1)[-1]: r["kb"] for r in prev_rows if valid_kb(r.get("kb", {}))}
        # Both sides grade copies of the same files (one folder per source folder).
        self.files = []
        for k, d in enumerate(a.gens):
            dd = self.work / f"gens-{k}"
            shutil.rmtree(dd, ignore_errors=True)
            dd.mkdir()
            for f, lv, num in found:
                if f.parent == pathlib.Path(d):
                    shutil.copy(f, dd / f.name)
                    self.files.append({"orig": f, "copy": dd / f.name, "lv": lv, "num": num, "k": k})
        self.kb, self.kr = {}, {}
        for x in self.files:
            old = self.prev.get(x["orig"].name + "@" + set_name(x["orig"]))
            if old and f'{x["orig"].name}@{set_name(x["orig"])}' not in (a.kb_again or []):
                self.kb[str(x["copy"])] = dict(old, previous=True)
        self.walls = {"kernrl": 0.0, "kernrl_wait": 0.0, "kb_build": 0.0, "kb_eval": 0.0}
        self.gpu = gpu_name()

    def log(self, s):
        s = f"[{time.monotonic() - self.t0:6.0f} s] {s}"
        print(s, flush=True)
        self.logf.write(s + "\n")
        self.logf.flush()

    def not_converted(self, lv, num):
        conv, nc = suite_index(self.a.suite)
        if (lv, num) in nc:
            return f"L{lv}_{num} is not a converted problem of the suite: {nc[(lv, num)][:120]}"
        if conv is not None and self.ready_seen() and (lv, num) not in conv:
            return f"L{lv}_{num} is not a converted problem of the suite"
        return None

    def ready_seen(self):
        return not self.a.ready or pathlib.Path(self.a.ready).exists()

    def on_kb(self, f, row):
        with self.mu:
            self.kb[f] = row
            self.save()
        st = "not run" if "not_run" in row else "skipped" if "skipped" in row else \
            ("correct" if row.get("correct") else "incorrect")
        self.log(f"KernelBench {pathlib.Path(f).name}: {st} ({row.get('s', '')} s, waited {row.get('lock_wait_s', 0)} s "
                 f"for the GPU)")

    def kb_side(self, pool):
        items = []
        for x in self.files:
            if str(x["copy"]) in self.kb:
                continue
            ref = ref_file(self.kb_root, x["lv"], x["num"])
            if ref is None:
                self.kb[str(x["copy"])] = {"skipped": "no such KernelBench problem"}
                continue
            items.append({"file": str(x["copy"]), "ref": str(ref), "lv": x["lv"], "num": x["num"],
                          "name": f"gens-{x['k']}-{x['copy'].stem}",
                          "build_dir": str(self.work / "kb-build" / f"gens-{x['k']}-{x['copy'].stem}")})
        self.log(f"KernelBench: {len(items)} files to build and evaluate ({len(self.kb)} from --previous)")
        stats = pool.run(items)
        self.walls["kb_build"], self.walls["kb_eval"] = stats["build_wall_s"], stats["eval_wall_s"]
        self.kb_stats = {"built": stats["built"], "build_s": sorted(stats["build_s"])}
        self.log(f"KernelBench: built {stats['built']} extensions in {stats['build_wall_s']} s, evaluated in "
                 f"{stats['eval_wall_s']} s")

    def kernrl_side(self, pool):
        a = self.a
        while a.ready and not pathlib.Path(a.ready).exists():
            if a.hard_deadline and time.monotonic() - self.t0 > a.hard_deadline:
                self.log("kernrl: not ready before the run's time limit")
                return
            time.sleep(2)
        conv, _ = suite_index(a.suite)
        if not conv or not os.access(a.kernrl, os.X_OK):
            self.log(f"kernrl: no suite.json in {a.suite} or no kernrl at {a.kernrl}: kernrl's side not run")
            return
        todo = [x for x in self.files if (x["lv"], x["num"]) in conv]
        self.log(f"kernrl: grading {len(todo)} files, {a.chunk} at a time between KernelBench's GPU phases")
        # In chunks, each a grade-dir holding the GPU lock, so that KernelBench's evaluations are
        # not stopped for the whole of kernrl's run.
        for c in range(0, len(todo), a.chunk):
            part = todo[c:c + a.chunk]
            need = max(it_gb(self.kb_root, x) for x in part)
            t_wait = time.monotonic()
            pool.reserve(need)
            try:
                with open(pool.lock_path, "a+") as lk:
                    fcntl.flock(lk, fcntl.LOCK_EX)
                    self.walls["kernrl_wait"] += time.monotonic() - t_wait
                    for k in sorted({x["k"] for x in part}):
                        self.grade_dir(part, k, c)
            finally:
                pool.unreserve(need)
            if a.hard_deadline and time.monotonic() - self.t0 > a.hard_deadline:
                break
        self.log(f"kernrl: {len(self.kr)} files graded in {self.walls['kernrl']:.0f} s "
                 f"(and {self.walls['kernrl_wait']:.0f} s waiting for the GPU)")

    def grade_dir(self, part, k, c):
        """kernrl grade-dir on the files of `part` from generations folder k (a chunk's folder)."""
        a = self.a
        dd = self.work / f"kernrl-{k}-{c}"
        shutil.rmtree(dd, ignore_errors=True)
        dd.mkdir()
        for x in part:
            if x["k"] == k:
                shutil.copy(x["copy"], dd / x["copy"].name)
        out = self.work / f"kernrl-{k}-{c}.jsonl"
        left = a.hard_deadline - (time.monotonic() - self.t0) if a.hard_deadline else None
        t0 = time.monotonic()
        with contextlib.suppress(subprocess.TimeoutExpired):
            subprocess.run([a.kernrl, "grade-dir", str(dd), "--suite", str(a.suite), "--out", str(out),
                            "--no-resume", "--quiet"], capture_output=True, text=True, check=False,
                           timeout=max(left, 1) if left else None)
        self.walls["kernrl"] += time.monotonic() - t0
        rows = kernrl_rows(out, self.work / f"gens-{k}")
        with self.mu:
            self.kr.update(rows)
            self.save()
        self.log(f"kernrl: {len(rows)} of {sum(1 for x in part if x['k'] == k)} files of chunk {c // a.chunk} graded "
                 f"({time.monotonic() - t0:.0f} s)")

    def save(self):
        """side.json and the Markdown as they stand."""
        conv, nc = suite_index(self.a.suite)
        compile_ms = compile_baselines(self.a.suite)
        rows, skipped = [], list(self.skipped_levels)
        for x in self.files:
            key = (x["lv"], x["num"])
            if key in nc or (conv is not None and self.ready_seen() and key not in conv):
                skipped.append((str(x["orig"]), f"L{key[0]}_{key[1]} is not a converted problem of the suite"))
                continue
            pid = conv[key]["id"] if conv and key in conv else f"L{key[0]}_{key[1]}"
            rows.append({"file": str(x["orig"]), "name": x["orig"].name, "set": f"{self.a.tag}:{set_name(x['orig'])}",
                         "gens": f"gens-{x['k']}",
                         "problem": pid, "kernrl": self.kr.get(str(x["copy"]), {}), "kb": self.kb.get(str(x["copy"]), {}),
                         "compile_ms": compile_ms.get(pid)})
        kb_rows = [r for r in self.kb.values() if "s" in r and not r.get("previous")]
        side = {"tag": self.a.tag, "gpu": self.gpu, "rows": rows, "skipped": skipped, "jobs": self.a.jobs,
                "max_eval": self.a.max_eval,
                "wall_s": {k: round(v, 1) for k, v in self.walls.items()},
                "kb_file_s": round(sum(r["s"] for r in kb_rows), 1),
                "kb_lock_wait_s": round(sum(r.get("lock_wait_s", 0) for r in kb_rows), 1),
                "kb_build_s": getattr(self, "kb_stats", {}).get("build_s", []),
                "elapsed_s": round(time.monotonic() - self.t0, 1)}
        tmp = self.work / "side.json.tmp"
        tmp.write_text(json.dumps(side, indent=1) + "\n")
        tmp.replace(self.work / "side.json")
        (self.work / "side_by_side.md").write_text(markdown([side]))


def it_gb(kb_root, x):
    ref = ref_file(kb_root, x["lv"], x["num"])
    n_in, n_out = kb_eval_pool.estimate(ref) if ref else (None, None)
    if n_in is None:
        n_in = n_out = 8 * 2**30
    return (2 * n_in + 4 * n_out) / 2**30 + 4.0


def main_run(a):
    run = Run(a)
    stop = run.t0 + a.deadline if a.deadline else None
    hard = run.t0 + a.hard_deadline if a.hard_deadline else None
    pool = kb_eval_pool.Pool(run.kb_root, run.work, build_jobs=a.jobs, max_eval=a.max_eval, on_row=run.on_kb,
                             skip=lambda it: run.not_converted(it["lv"], it["num"]), stop_at=stop, hard_at=hard)
    run.log(f"{len(run.files)} generations of levels 1-3; GPU memory for KernelBench's evaluations: "
            f"{pool.gpu_budget:.0f} GB; {a.max_eval} at a time at most")
    kr = threading.Thread(target=run.kernrl_side, args=(pool,), daemon=True)
    kr.start()
    run.kb_side(pool)
    left = (hard - time.monotonic()) if hard else None
    kr.join(timeout=max(left, 1) if left else None)
    with run.mu:
        run.save()
    run.log(f"wrote {run.work / 'side_by_side.md'}")


def compile_baselines(suite):
    """problem id -> torch.compile median ms, from the suite's baseline files (kb_baselines.py)."""
    out = {}
    for f in (pathlib.Path(suite) / "baselines").glob("*.json"):
        try:
            doc = json.loads(f.read_text())
        except ValueError:
            continue
        for pid, e in doc.get("problems", {}).items():
            t = (e.get("compile_baseline") or {}).get("timing") or {}
            if t.get("median_ms"):
                out[pid] = t["median_ms"]
    return out


def gpu_name():
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        r = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", "0"], capture_output=True,
                           text=True, timeout=30, check=False)
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.strip()
    try:
        import torch

        return torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001
        return "?"


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def kb_speedup(kb):
    return kb["ref_runtime_ms"] / kb["runtime_ms"] if kb.get("runtime_ms") and kb.get("ref_runtime_ms") else None


def summary(sides, rows, walls):
    n = len(rows)
    same = [r for r in rows if (r["kernrl"].get("status") == "correct") == bool(r["kb"].get("correct"))]
    both = [r for r in rows if r["kernrl"].get("status") == "correct" and r["kb"].get("correct")
            and r["kernrl"].get("speedup") and kb_speedup(r["kb"])]
    g_kb, g_k = geomean([kb_speedup(r["kb"]) for r in both]), geomean([r["kernrl"]["speedup"] for r in both])
    comp = [r["kernrl"].get("compile_speedup") or (r["compile_ms"] / r["kernrl"]["kernel_ms"]
            if r.get("compile_ms") and r["kernrl"].get("kernel_ms") else None) for r in both]
    g_c, n_c = geomean(comp), sum(1 for c in comp if c)
    gpus = sorted({s["gpu"] for s in sides})
    out = [f"Generations graded by both: {n} (sets: {', '.join(s['tag'] + ' ' + str(len(s['rows'])) for s in sides)}), "
           f"on {', '.join(gpus)}.", ""]
    if n:
        out.append(f"- Same correct/incorrect verdict: {len(same)} of {n} ({100 * len(same) / n:.1f}%). Verdict pairs "
                   "(KernelBench / kernrl): " + ", ".join(f"{kbv} / {st} {c}" for (kbv, st), c in sorted(
                       collections.Counter((kb_verdict(r["kb"]), r["kernrl"]["status"]) for r in rows).items(),
                       key=lambda x: -x[1])) + ".")
    if both:
        ratio = g_k / g_kb
        out.append(f"- Correct for both: {len(both)}. Geometric-mean speedup over PyTorch eager: KernelBench "
                   f"{g_kb:.3f}x, kernrl {g_k:.3f}x (kernrl / KernelBench = {ratio:.3f}, "
                   f"{'within' if abs(ratio - 1) <= 0.05 else 'NOT within'} 5%).")
        if g_c:
            out.append(f"- kernrl's geometric-mean speedup over torch.compile (the suite's baseline file, "
                       f"kb_baselines.py) on the {n_c} of them whose problem has one: {g_c:.3f}x.")
    out.append(wall_line(sides, merged_rows(sides), walls))
    return out


def wall_line(sides, all_rows, walls):
    """The wall times of both: kernrl's grade-dir, KernelBench's builds and evaluations (per
    file, from the rows, and as wall-clock where the run finished)."""
    kb = [r["kb"] for r in all_rows if valid_kb(r["kb"]) and not r["kb"].get("previous")]
    builds = sorted(k["compile_s"] for k in kb if k.get("compile_s"))
    evals = sorted(k["s"] - k.get("lock_wait_s", 0) for k in kb if k.get("s"))
    n_k = sum(1 for r in all_rows if r["kernrl"].get("status"))
    line = f"- Wall time: kernrl grade-dir {walls['kernrl']:.0f} s for {n_k} files. KernelBench: "
    if builds:
        line += (f"{len(builds)} extension builds of {sum(builds):.0f} s together (one {builds[len(builds) // 2]:.0f} s, median, "
                 f"{builds[0]:.0f}-{builds[-1]:.0f} s; {sides[0]['jobs']} at a time")
        line += f", {walls['kb_build']:.0f} s wall-clock)" if walls["kb_build"] else ")"
    if evals:
        line += (f"{'; ' if builds else ''}{len(evals)} evaluations of {sum(evals):.0f} s together, each less its "
                 f"waits for the GPU (one {evals[len(evals) // 2]:.0f} s, median; {sides[0].get('max_eval', 1)} processes at a "
                 f"time, their GPU phases one at a time")
        line += f", {walls['kb_eval']:.0f} s wall-clock)" if walls["kb_eval"] else ")"
    return line + "."


def valid_kb(kb):
    """A KernelBench verdict, unless its evaluation ran out of GPU memory (a host overcommitted,
    not the kernel: not a verdict on the file)."""
    return "correct" in kb and "out of memory" not in (kb.get("error") or "")


def kb_verdict(kb):
    return "correct" if kb.get("correct") else ("incorrect" if kb.get("compiled") else "no build")


def graded(r):
    return valid_kb(r["kb"]) and bool(r["kernrl"].get("status"))


def merged_rows(sides):
    """Every file once: where several runs graded it (a run continued by another), the last run
    that has both verdicts, else the last run."""
    by = {}
    for s in sides:
        for r in s["rows"]:
            key = (r["name"], r["set"].split(":", 1)[-1])
            if key not in by or graded(r) or not graded(by[key]):
                by[key] = r
    return list(by.values())


def markdown(sides):
    all_rows = merged_rows(sides)
    rows = [r for r in all_rows if graded(r)]
    not_run = [r for r in all_rows if not graded(r)]
    walls = {k: sum(s["wall_s"].get(k, 0) for s in sides) for k in ("kernrl", "kb_build", "kb_eval")}
    out = summary(sides, rows, walls)
    out += ["", "| file | set | problem | KernelBench | kernrl | KB speedup | kernrl speedup | verdicts |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        kb, kr = r["kb"], r["kernrl"]
        kbv = kb_verdict(kb)
        if kb.get("excessive_speedup"):
            kbv += " (excessive speedup)"
        kbs = f"{kb_speedup(kb):.3f}" if kb_speedup(kb) else ""
        ks = f"{kr['speedup']:.3f}" if kr.get("speedup") else ""
        agree = (kr.get("status") == "correct") == bool(kb.get("correct"))
        why = "" if agree else " — KB: " + (kb.get("error") or "")[:90].replace("|", "/").replace("\n", " ") + \
            "; kernrl: " + (kr.get("message") or "")[:140].replace("|", "/").replace("\n", " ")
        out.append(f"| {r['name']} | {r['set']} | {r['problem']} | {kbv} | {kr.get('status', 'no record')} | {kbs} | "
                   f"{ks} | {'same' if agree else 'DIFFERENT'}{why} |")
    if not_run:
        out += ["", f"Not graded by both ({len(not_run)}: the run's time limit came first, or one of them "
                "wrote no result):", ""]
        for r in not_run:
            kb = r["kb"]
            kbs = kb.get("not_run") or ("ran out of GPU memory" if "correct" in kb and not valid_kb(kb) else
                                        "correct" if kb.get("correct") else "incorrect" if "correct" in kb else "no result")
            out.append(f"- {r['name']} ({r['set']}): KernelBench {kbs}; kernrl {r['kernrl'].get('status', 'no record')}")
    sk = [x for s in sides for x in s["skipped"]]
    if sk:
        out += ["", "Left out (not graded by either):", ""] + [f"- {pathlib.Path(f).name}: {why}" for f, why in sk]
    return "\n".join(out) + "\n"


def kb_outputs(dirs):
    """(generations folder copy, file name) -> KernelBench's row, from the evaluations' own
    outputs (WORK/kb-eval/*.out of kb_eval_pool: the last KBROW line of each)."""
    out = {}
    for d in dirs:
        for f in sorted(pathlib.Path(d).glob("*.out")):
            lines = [ln[len(kb_eval_pool.ROW):] for ln in f.read_text(errors="replace").splitlines()
                     if ln.startswith(kb_eval_pool.ROW)]
            if lines:
                r = json.loads(lines[-1])
                out[(pathlib.Path(r["file"]).parent.name, pathlib.Path(r["file"]).name)] = r
    return out


def fill_kb(sides, outputs):
    """Rows without a KernelBench verdict take the one of the evaluation's own output, where it
    has one (a run whose side.json was written before its last evaluations ended). Returns the
    files whose two verdicts differ."""
    differ = []
    for s in sides:
        order = []  # older side.json: the generations folders in the order the run took them
        for r in s["rows"]:
            st = r["set"].split(":", 1)[-1]
            if st not in order:
                order.append(st)
        for r in s["rows"]:
            new = outputs.get((r.get("gens") or f"gens-{order.index(r['set'].split(':', 1)[-1])}", r["name"]))
            if not new or not valid_kb(new):
                continue
            if not valid_kb(r["kb"]):
                r["kb"] = dict(new, compile_s=r["kb"].get("compile_s"), from_output=True)
            elif bool(new.get("correct")) != bool(r["kb"].get("correct")):
                differ.append(r["name"])
    return differ


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernrl")
    ap.add_argument("--suite")
    ap.add_argument("--kernelbench")
    ap.add_argument("--gens", nargs="+", default=[])
    ap.add_argument("--out")
    ap.add_argument("--tag", default="run")
    ap.add_argument("--jobs", type=int, default=8, help="KernelBench extensions built at a time")
    ap.add_argument("--max-eval", type=int, default=8, help="KernelBench evaluations at a time at most")
    ap.add_argument("--chunk", type=int, default=8, help="files per kernrl grade-dir (each holds the GPU lock)")
    ap.add_argument("--ready", help="a file whose existence says kernrl is built and the suite converted")
    ap.add_argument("--previous", help="side.json of an earlier run: its KernelBench verdicts are reused")
    ap.add_argument("--kb-again", nargs="*", help="NAME@SET (e.g. level_1_problem_50_sample_0_kernel.py@v3/kb-prompt): "
                    "files KernelBench evaluates again despite --previous")
    ap.add_argument("--deadline", type=float, default=0, help="seconds after which no evaluation starts")
    ap.add_argument("--hard-deadline", type=float, default=0, help="seconds after which everything is stopped")
    ap.add_argument("--combine", nargs="+")
    ap.add_argument("--md")
    ap.add_argument("--kb-outputs", nargs="+", help="with --combine: kb-eval folders whose outputs fill rows "
                    "without a KernelBench verdict")
    ap.add_argument("--json", help="with --combine: the combined rows as JSON")
    a = ap.parse_args()
    if a.combine:
        sides = [json.loads((pathlib.Path(d) if pathlib.Path(d).is_file() else pathlib.Path(d) / "side.json").read_text())
                 for d in a.combine]
        if a.kb_outputs:
            differ = fill_kb(sides, kb_outputs(a.kb_outputs))
            print(f"KernelBench verdicts from the evaluations' outputs; {len(differ)} files with two different "
                  f"verdicts: {differ}", file=sys.stderr)
        if a.json:
            pathlib.Path(a.json).write_text(json.dumps({"sides": sides}, indent=1) + "\n")
        text = markdown(sides)
        pathlib.Path(a.md).write_text(text) if a.md else sys.stdout.write(text)
        return 0
    if not (a.kernrl and a.suite and a.kernelbench and a.gens and a.out):
        ap.error("--kernrl, --suite, --kernelbench, --gens and --out are required")
    a.gens = [str(pathlib.Path(d)) for d in a.gens]
    main_run(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
