#!/usr/bin/env python3
"""KernelBench generations graded by KernelBench's own eval and by kernrl, side by side.

    kb_side_by_side.py --kernrl BUILD/kernrl --suite SUITE --kernelbench KB_CHECKOUT \
                       --gens DIR [DIR ...] --out OUT [--jobs 16] [--tag NAME]
    kb_side_by_side.py --prebuild --kernelbench KB_CHECKOUT --gens DIR [DIR ...] --out OUT
    kb_side_by_side.py --combine OUT1|SIDE_JSON [OUT2 ...] --md RESULT.md

Every `level_<L>_problem_<P>_sample_<S>_kernel.py` of levels 1-3 under the DIRs whose problem the
suite converted is graded twice on this GPU:

- KernelBench: its own `eval_kernel_against_ref` (from the checkout's src/kernelbench, with the
  settings of its scripts/eval_from_generations.py: seed 42, 5 correctness trials, 100 timed
  trials with CUDA events, PyTorch eager timed the same way). The load_inline extensions are
  built first, `--jobs` at a time, with KernelBench's `build_compile_cache` into a build folder
  per file, as eval_from_generations does; then the files are evaluated one at a time on the
  GPU, in one process (a new one after a file that breaks the CUDA context).
- kernrl: `kernrl grade-dir DIR --suite SUITE`, which converts each file and grades it.

OUT gets side.json (one row per file, the wall times) and side_by_side.md. `--prebuild` runs
KernelBench's builds alone (they need no suite), so that they can overlap building kernrl and
the suite; the run then finds them up to date (its build wall time is then the check only,
and the prebuild's own time is reported beside it). `--combine` merges
the rows of several OUT folders (runs on the same GPU model) into one Markdown result.

KernelBench's package imports modules its eval does not use (openai, litellm, dotenv, requests,
tqdm for its LLM clients and progress bars; pydantic for its result class); where the host lacks
them, minimal stand-ins are put on the path (a plain BaseModel for the result class).
"""

import argparse
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

NAME = re.compile(r"^level_(\d+)_problem_(\d+)_sample_(\d+)_kernel\.py$")

STANDINS = {
    "dotenv": "def load_dotenv(*a, **k):\n    return False\n",
    "openai": "class OpenAI:\n    def __init__(self, *a, **k):\n        raise RuntimeError('not available')\n",
    "litellm": "def completion(*a, **k):\n    raise RuntimeError('not available')\n",
    "tqdm": "def tqdm(iterable=None, *a, **k):\n    return iterable\n",
    "requests": "",
    "pydantic": (
        "import copy\n"
        "class BaseModel:\n"
        "    def __init__(self, **kw):\n"
        "        for c in reversed(type(self).__mro__):\n"
        "            for k in getattr(c, '__annotations__', {}):\n"
        "                if hasattr(c, k):\n"
        "                    setattr(self, k, copy.deepcopy(getattr(c, k)))\n"
        "        for k, v in kw.items():\n"
        "            setattr(self, k, v)\n"
    ),
}


# ---------------------------------------------------------------- KernelBench side (children)

def kb_import(kb_root):
    """KernelBench's eval module from the checkout, with stand-ins for modules it does not use."""
    import importlib.util

    import atexit

    shim = pathlib.Path(tempfile.mkdtemp(prefix="kb-standins-"))
    atexit.register(shutil.rmtree, shim, True)
    for mod, text in STANDINS.items():
        if importlib.util.find_spec(mod) is None:
            (shim / f"{mod}.py").write_text(text)
    sys.path.insert(0, str(pathlib.Path(kb_root) / "src"))
    sys.path.append(str(shim))
    from kernelbench import eval as kb_eval  # noqa: E402

    return kb_eval


def child_compile(kb_root, src, build_dir):
    kb_eval = kb_import(kb_root)
    t0 = time.monotonic()
    ok, _, err = kb_eval.build_compile_cache(pathlib.Path(src).read_text(), verbose=False, build_dir=build_dir)
    print(json.dumps({"ok": bool(ok), "error": (err or "")[:300], "s": round(time.monotonic() - t0, 1)}))


def child_eval(kb_root, jobs_file):
    """Evaluates the files listed (one JSON a line: file, ref, build_dir) one after another,
    printing one JSON line each; exits after a file that leaves CUDA unusable."""
    kb_eval = kb_import(kb_root)
    import torch

    for line in pathlib.Path(jobs_file).read_text().splitlines():
        j = json.loads(line)
        t0 = time.monotonic()
        row = {"file": j["file"]}
        try:
            r = kb_eval.eval_kernel_against_ref(
                pathlib.Path(j["ref"]).read_text(), pathlib.Path(j["file"]).read_text(), seed_num=42,
                num_correct_trials=5, num_perf_trials=100, measure_performance=True,
                timing_method="cuda_event", build_dir=j["build_dir"], device=torch.device("cuda:0"))
            if r is None:
                row.update(compiled=False, correct=False, error="lock file error (KernelBench asks for a retry)")
            else:
                md = r.metadata or {}
                err = md.get("runtime_error") or md.get("compilation_error") or md.get("correctness_issue") or ""
                row.update(compiled=bool(r.compiled), correct=bool(r.correctness),
                           runtime_us=r.runtime if r.runtime and r.runtime > 0 else None,
                           ref_runtime_us=r.ref_runtime if r.ref_runtime and r.ref_runtime > 0 else None,
                           excessive_speedup=bool(md.get("excessive_speedup", False)), error=str(err)[:300])
        except Exception as e:  # noqa: BLE001 - KernelBench's own failure, recorded
            row.update(compiled=True, correct=False, error=f"{type(e).__name__}: {str(e)[:250]}")
        row["s"] = round(time.monotonic() - t0, 2)
        print(json.dumps(row), flush=True)
        try:
            torch.cuda.synchronize()
        except Exception:  # noqa: BLE001 - the context is gone: a new process takes the rest
            return


# ---------------------------------------------------------------- parent

def collect(dirs, suite):
    sj = json.loads((pathlib.Path(suite) / "suite.json").read_text())
    converted = {}
    for c in sj["converted"]:
        lv, num = c["id"].split("_")[0][1:], c["id"].split("_")[1]
        converted[(int(lv), int(num))] = c
    files, skipped = [], []
    for d in dirs:
        for f in sorted(pathlib.Path(d).glob("*.py")):
            m = NAME.match(f.name)
            if not m:
                continue
            lv, num = int(m.group(1)), int(m.group(2))
            if lv not in (1, 2, 3):
                skipped.append((str(f), f"level {lv} is not one of KernelBench's levels 1-3"))
            elif (lv, num) not in converted:
                skipped.append((str(f), f"L{lv}_{num} is not a converted problem of the suite"))
            else:
                files.append((f, converted[(lv, num)]))
    return files, skipped, pathlib.Path(sj["source"])


def build_kb(files, kb_root, work, jobs, log):
    """KernelBench's build_compile_cache for every file, `jobs` at a time (CPU only)."""
    me = str(pathlib.Path(__file__).resolve())
    env = dict(os.environ, MAX_JOBS="2")
    builds = {}

    def build(item):
        f, c = item
        # Named by the folder the side-by-side copies it into (gens-<k>), so that --prebuild's
        # builds are the ones the run finds up to date.
        bd = str(work / "kb-build" / (f"{c}-{f.stem}" if isinstance(c, str) else f"{f.parent.name}-{f.stem}"))
        builds[str(f)] = bd
        try:
            r = subprocess.run([sys.executable, me, "--kb-compile", str(kb_root), str(f), bd], capture_output=True,
                               text=True, timeout=600, env=env, check=False)
            lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
            return json.loads(lines[-1]) if lines else {"ok": False, "error": f"exit {r.returncode}"}
        except subprocess.TimeoutExpired:
            return {"ok": False, "error": "compile took over 600 s"}

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        built = dict(zip([str(f) for f, _ in files], pool.map(build, files)))
    compile_wall = time.monotonic() - t0
    log(f"KernelBench: {len(files)} extensions built in {compile_wall:.0f} s ({jobs} at a time)")
    return builds, built, compile_wall


def ext_names(path):
    """The load_inline extension names a file asks for (`name="..."`), as far as they are literal."""
    return set(re.findall(r"""\bname\s*=\s*["']([^"']+)["']""", pathlib.Path(path).read_text()))


def batches(pending):
    """Consecutive runs of files whose extension names differ: torch rebuilds an extension whose
    name one process has already loaded from other sources (a new version of it), so no process
    evaluates two files with the same name, and a file with no literal name runs alone."""
    out, cur, names = [], [], set()
    for j in pending:
        n = ext_names(j["file"])
        if cur and (not n or names & n or not names):
            out.append(cur)
            cur, names = [], set()
        cur.append(j)
        names |= n
    if cur:
        out.append(cur)
    return out


def eval_batch(me, kb_root, work, batch, rows, per_file_s):
    """One process evaluates `batch` in order; a file that takes over per_file_s (a kernel that
    never ends) or kills the process is recorded as such, and the rest go to a new process."""
    import queue
    import threading

    pending = list(batch)
    while pending:
        jf = work / "kb-jobs.jsonl"
        jf.write_text("".join(json.dumps(j) + "\n" for j in pending))
        p = subprocess.Popen([sys.executable, me, "--kb-eval", str(kb_root), str(jf)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(ln) for ln in p.stdout] + [lines.put(None)], daemon=True).start()
        err = []
        threading.Thread(target=lambda: err.extend(p.stderr), daemon=True).start()
        killed = False
        while True:
            try:
                ln = lines.get(timeout=per_file_s)
            except queue.Empty:
                p.kill()
                killed = True
                f = next(j["file"] for j in pending if j["file"] not in rows)
                rows[f] = {"file": f, "compiled": True, "correct": False, "error": f"no result in {per_file_s} s (hung)"}
                break
            if ln is None:
                break
            if ln.startswith('{"file"'):
                r = json.loads(ln)
                rows[r["file"]] = r
        p.wait()
        rest = [j for j in pending if j["file"] not in rows]
        if rest and not killed and (p.returncode != 0 or len(rest) == len(pending)):
            # The process died on rest[0] (or gave nothing for it): that file's failure; the
            # others go on in a new process. (Exit 0 with files left: CUDA was unusable after
            # the last file, so the rest start afresh.)
            tail = ("".join(err).strip().splitlines() or ["no output"])[-1][:200]
            rows[rest[0]["file"]] = {"file": rest[0]["file"], "compiled": True, "correct": False,
                                     "error": f"the evaluating process died: {tail}"}
            rest = rest[1:]
        pending = rest


def eval_kb(files, kb_root, work, builds, built, log, stop_at=None, progress=None):
    """KernelBench's eval_kernel_against_ref for every file, one at a time on the GPU (none
    started after `stop_at`, a time.monotonic() value: those files are left out)."""
    me = str(pathlib.Path(__file__).resolve())
    pending = [{"file": str(f), "ref": str(kb_root / "KernelBench" / c["file"]), "build_dir": builds[str(f)]}
               for f, c in files]
    rows = {}
    t1 = time.monotonic()
    for b in batches(pending):
        if stop_at and time.monotonic() > stop_at:
            for j in b:
                rows[j["file"]] = {"file": j["file"], "not_run": "the run's time limit (--deadline) came first"}
            continue
        eval_batch(me, kb_root, work, b, rows, 150)
        if progress:
            progress(rows, time.monotonic() - t1)
    eval_wall = time.monotonic() - t1
    for f, b in built.items():
        rows.setdefault(f, {"file": f, "compiled": False, "correct": False, "error": b.get("error", "")})
        rows[f]["built"] = b.get("ok", False)
        rows[f]["compile_s"] = b.get("s")
    log(f"KernelBench: {len(rows)} files evaluated in {eval_wall:.0f} s")
    return rows, eval_wall


def run_kernrl(kernrl, suite, dirs, work, log):
    rows, wall = {}, 0.0
    for k, d in enumerate(dirs):
        out = work / f"kernrl-{k}.jsonl"
        t0 = time.monotonic()
        subprocess.run([kernrl, "grade-dir", str(d), "--suite", str(suite), "--out", str(out), "--no-resume",
                        "--quiet"], capture_output=True, text=True, check=False)
        wall += time.monotonic() - t0
        for ln in out.read_text().splitlines() if out.exists() else []:
            r = json.loads(ln)
            f = str(pathlib.Path(d) / pathlib.Path(r.get("file", "")).name)
            err = r.get("error") or {}
            kernel = ((r.get("timing") or {}).get("kernel") or {}).get("median_ms")
            rows[f] = {"status": r.get("status"), "speedup": r.get("speedup"), "kernel_ms": kernel,
                       "compile_speedup": (r.get("baseline") or {}).get("speedups", {}).get("compile"),
                       "suspicious": bool(r.get("suspicious", False)),
                       "message": (err.get("message") if isinstance(err, dict) else str(err))[:300] if err else ""}
    log(f"kernrl: {len(rows)} files graded in {wall:.0f} s")
    return rows, wall


def main_run(a):
    work = pathlib.Path(a.out)
    work.mkdir(parents=True, exist_ok=True)
    logf = open(work / "side.log", "a")

    def log(s):
        print(s, flush=True)
        logf.write(s + "\n")

    t_start = time.monotonic()
    files, skipped, kb_root = collect(a.gens, a.suite)
    if a.kernelbench:
        kb_root = pathlib.Path(a.kernelbench)
    log(f"{len(files)} generations of levels 1-3 on the suite's problems; {len(skipped)} left out")
    # kernrl grades copies of exactly the files KernelBench evaluates (one folder per source folder).
    dirs = []
    for k, d in enumerate(a.gens):
        dd = work / f"gens-{k}"
        shutil.rmtree(dd, ignore_errors=True)
        dd.mkdir()
        for f, _ in files:
            if f.parent == pathlib.Path(d):
                shutil.copy(f, dd / f.name)
        dirs.append(dd)
    copies = [(pathlib.Path(dirs[a.gens.index(str(f.parent))]) / f.name, c) for f, c in files]
    # KernelBench's builds (CPU) run while kernrl grades (GPU); then KernelBench evaluates.
    with ThreadPoolExecutor(max_workers=1) as bg:
        building = bg.submit(build_kb, copies, kb_root, work, a.jobs, log)
        k_rows, k_wall = run_kernrl(a.kernrl, a.suite, dirs, work, log)
        builds, built, kb_compile = building.result()
    pre = work / "kb-prebuild.json"
    prebuild = json.loads(pre.read_text()) if pre.exists() else None
    gpu = gpu_name()

    def save(kb_rows, kb_eval):
        """side.json and the Markdown as they stand: a run cut short keeps what it graded."""
        compile_ms = compile_baselines(a.suite)
        rows = []
        for (f, c), (orig, _) in zip(copies, files):
            rows.append({"file": str(orig), "name": f.name, "set": f"{a.tag}:{orig.parent.name}", "problem": c["id"],
                         "kernrl": k_rows.get(str(f), {}), "kb": kb_rows.get(str(f), {}),
                         "compile_ms": compile_ms.get(c["id"])})
        side = {"tag": a.tag, "gpu": gpu, "rows": rows, "skipped": skipped, "prebuild": prebuild,
                "wall_s": {"kernrl": round(k_wall, 1), "kb_compile": round(kb_compile, 1),
                           "kb_eval": round(kb_eval, 1)},
                "jobs": a.jobs}
        tmp = work / "side.json.tmp"
        tmp.write_text(json.dumps(side, indent=1) + "\n")
        tmp.replace(work / "side.json")
        (work / "side_by_side.md").write_text(markdown([side]))

    save({}, 0.0)
    kb_rows, kb_eval = eval_kb(copies, kb_root, work, builds, built, log,
                               t_start + a.deadline if a.deadline else None, save)
    save(kb_rows, kb_eval)
    log(f"wrote {work / 'side_by_side.md'}")


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
    try:
        import torch

        return torch.cuda.get_device_name(0)
    except Exception:  # noqa: BLE001
        return "?"


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def markdown(sides):
    all_rows = [r for s in sides for r in s["rows"]]
    rows = [r for r in all_rows if "correct" in r["kb"] and r["kernrl"].get("status")]
    not_run = [r for r in all_rows if r not in rows]
    n = len(rows)
    same = [r for r in rows if (r["kernrl"].get("status") == "correct") == bool(r["kb"].get("correct"))]
    both = [r for r in rows if r["kernrl"].get("status") == "correct" and r["kb"].get("correct")
            and r["kernrl"].get("speedup") and r["kb"].get("runtime_us") and r["kb"].get("ref_runtime_us")]
    kb_sp = [r["kb"]["ref_runtime_us"] / r["kb"]["runtime_us"] for r in both]
    k_sp = [r["kernrl"]["speedup"] for r in both]
    g_kb, g_k = geomean(kb_sp), geomean(k_sp)
    g_c = geomean([r["kernrl"].get("compile_speedup") or (
        r["compile_ms"] / r["kernrl"]["kernel_ms"] if r.get("compile_ms") and r["kernrl"].get("kernel_ms") else None)
        for r in both])
    n_c = sum(1 for r in both if r["kernrl"].get("compile_speedup") or (r.get("compile_ms") and r["kernrl"].get("kernel_ms")))
    walls = {k: sum(s["wall_s"][k] for s in sides) for k in ("kernrl", "kb_compile", "kb_eval")}
    pre = [s["prebuild"] for s in sides if s.get("prebuild")]
    walls["kb_compile"] += sum(p["wall_s"] for p in pre)
    per_file = sorted(x for p in pre for x in p["compile_s"])
    gpus = sorted({s["gpu"] for s in sides})
    out = [f"Generations graded: {n} (sets: {', '.join(s['tag'] + ' ' + str(len(s['rows'])) for s in sides)}), "
           f"on {', '.join(gpus)}.", ""]
    if n:
        out.append(f"- Same correct/incorrect verdict: {len(same)} of {n} ({100 * len(same) / n:.1f}%).")
    if both:
        ratio = g_k / g_kb
        out.append(f"- Correct for both: {len(both)}. Geometric-mean speedup over PyTorch eager: KernelBench "
                   f"{g_kb:.3f}x, kernrl {g_k:.3f}x (kernrl / KernelBench = {ratio:.3f}, "
                   f"{'within' if abs(ratio - 1) <= 0.05 else 'NOT within'} 5%).")
        if g_c:
            out.append(f"- kernrl's geometric-mean speedup over torch.compile (the suite's baseline file, "
                       f"kb_baselines.py) on the {n_c} of them whose problem has one: {g_c:.3f}x.")
    out.append(f"- Wall time: kernrl grade-dir {walls['kernrl']:.0f} s; KernelBench {walls['kb_compile']:.0f} s "
               f"building the extensions ({sides[0]['jobs']} at a time) + {walls['kb_eval']:.0f} s evaluating = "
               f"{walls['kb_compile'] + walls['kb_eval']:.0f} s.")
    if pre:
        out.append(f"- KernelBench's build time includes {len(pre)} prebuild(s) of {sum(p['files'] for p in pre)} "
                   f"files ({sum(p['wall_s'] for p in pre):.0f} s) that ran while kernrl and the suite were being "
                   f"built on the same CPUs; one file's build took {per_file[len(per_file) // 2]:.0f} s "
                   f"(median; {per_file[0]:.0f}-{per_file[-1]:.0f} s)." if per_file else "")
    out += ["", "| file | set | problem | KernelBench | kernrl | KB speedup | kernrl speedup | verdicts |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        kb, kr = r["kb"], r["kernrl"]
        kbv = "correct" if kb.get("correct") else ("incorrect" if kb.get("compiled") else "no build")
        if kb.get("excessive_speedup"):
            kbv += " (excessive speedup)"
        kbs = f"{kb['ref_runtime_us'] / kb['runtime_us']:.3f}" if kb.get("runtime_us") and kb.get("ref_runtime_us") else ""
        ks = f"{kr['speedup']:.3f}" if kr.get("speedup") else ""
        agree = (kr.get("status") == "correct") == bool(kb.get("correct"))
        why = "" if agree else " — KB: " + (kb.get("error") or "")[:90].replace("|", "/").replace("\n", " ") + \
            "; kernrl: " + (kr.get("message") or "")[:140].replace("|", "/").replace("\n", " ")
        out.append(f"| {r['name']} | {r['set']} | {r['problem']} | {kbv} | {kr.get('status', 'no record')} | {kbs} | "
                   f"{ks} | {'same' if agree else 'DIFFERENT'}{why} |")
    if not_run:
        out += ["", f"Not graded by both ({len(not_run)}: the run's time limit came first, or one of them "
                "wrote no result):", ""] + [f"- {r['name']} ({r['set']})" for r in not_run]
    sk = [x for s in sides for x in s["skipped"]]
    if sk:
        out += ["", "Left out (not graded by either):", ""] + [f"- {pathlib.Path(f).name}: {why}" for f, why in sk]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernrl")
    ap.add_argument("--suite")
    ap.add_argument("--kernelbench")
    ap.add_argument("--gens", nargs="+", default=[])
    ap.add_argument("--out")
    ap.add_argument("--tag", default="run")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--deadline", type=float, default=0,
                    help="seconds from the start after which KernelBench evaluates no more files")
    ap.add_argument("--prebuild", action="store_true",
                    help="only build KernelBench's extensions of --gens into --out (needs no suite)")
    ap.add_argument("--combine", nargs="+")
    ap.add_argument("--md")
    ap.add_argument("--kb-compile", nargs=3, help=argparse.SUPPRESS)
    ap.add_argument("--kb-eval", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.kb_compile:
        child_compile(*a.kb_compile)
        return 0
    if a.kb_eval:
        child_eval(*a.kb_eval)
        return 0
    if a.prebuild:
        # KernelBench's builds alone (no suite needed), e.g. while kernrl itself is being built.
        items = [(f, f"gens-{k}") for k, d in enumerate(a.gens) for f in sorted(pathlib.Path(d).glob("*.py"))
                 if NAME.match(f.name) and int(NAME.match(f.name).group(1)) in (1, 2, 3)]
        pathlib.Path(a.out).mkdir(parents=True, exist_ok=True)
        _, built, wall = build_kb(items, pathlib.Path(a.kernelbench), pathlib.Path(a.out), a.jobs, print)
        (pathlib.Path(a.out) / "kb-prebuild.json").write_text(json.dumps(
            {"wall_s": round(wall, 1), "files": len(items), "jobs": a.jobs,
             "compile_s": [b.get("s") for b in built.values() if b.get("s") is not None]}) + "\n")
        return 0
    if a.combine:
        sides = [json.loads((pathlib.Path(d) if pathlib.Path(d).is_file() else pathlib.Path(d) / "side.json").read_text())
                 for d in a.combine]
        text = markdown(sides)
        pathlib.Path(a.md).write_text(text) if a.md else sys.stdout.write(text)
        return 0
    if not (a.kernrl and a.suite and a.gens and a.out):
        ap.error("--kernrl, --suite, --gens and --out are required")
    a.gens = [str(pathlib.Path(d)) for d in a.gens]
    main_run(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
