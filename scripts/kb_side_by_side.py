#!/usr/bin/env python3
"""KernelBench generations graded by KernelBench's own eval and by kernrl, side by side.

    kb_side_by_side.py --kernrl BUILD/kernrl --suite SUITE --kernelbench KB_CHECKOUT \
                       --gens DIR [DIR ...] --out OUT [--jobs 16] [--tag NAME]
    kb_side_by_side.py --combine OUT1 [OUT2 ...] --md RESULT.md

Every `level_<L>_problem_<P>_sample_<S>_kernel.py` of levels 1-3 under the DIRs whose problem the
suite converted is graded twice on this GPU:

- KernelBench: its own `eval_kernel_against_ref` (from the checkout's src/kernelbench, with the
  settings of its scripts/eval_from_generations.py: seed 42, 5 correctness trials, 100 timed
  trials with CUDA events, PyTorch eager timed the same way). The load_inline extensions are
  built first, `--jobs` at a time, with KernelBench's `build_compile_cache` into a build folder
  per file, as eval_from_generations does; then the files are evaluated one at a time on the
  GPU, in one process (a new one after a file that breaks the CUDA context).
- kernrl: `kernrl grade-dir DIR --suite SUITE`, which converts each file and grades it.

OUT gets side.json (one row per file, the wall times) and side_by_side.md. `--combine` merges
the rows of several OUT folders (runs on the same GPU model) into one Markdown result.

KernelBench's package imports modules its eval does not use (openai, litellm, dotenv, pydantic,
for its LLM clients and result class); where the host lacks them, minimal stand-ins are put on
the path (a plain BaseModel for its result class, empty modules for the clients).
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

    shim = pathlib.Path(tempfile.mkdtemp(prefix="kb-standins-"))
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


def run_kb(files, kb_root, work, jobs, log):
    me = str(pathlib.Path(__file__).resolve())
    env = dict(os.environ, MAX_JOBS="2")
    builds = {}

    def build(item):
        f, _ = item
        bd = str(work / "kb-build" / f.stem)
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
    pending = [{"file": str(f), "ref": str(kb_root / "KernelBench" / c["file"]), "build_dir": builds[str(f)]}
               for f, c in files]
    rows = {}
    t1 = time.monotonic()
    while pending:
        jf = work / "kb-jobs.jsonl"
        jf.write_text("".join(json.dumps(j) + "\n" for j in pending))
        p = subprocess.run([sys.executable, me, "--kb-eval", str(kb_root), str(jf)], capture_output=True, text=True,
                           timeout=max(120, 60 * len(pending)), check=False)
        for ln in p.stdout.splitlines():
            if ln.startswith('{"file"'):
                r = json.loads(ln)
                rows[r["file"]] = r
        done = [j for j in pending if j["file"] in rows]
        rest = [j for j in pending if j["file"] not in rows]
        if rest and len(done) < len(pending):
            # The process died on rest[0]: recorded as a runtime failure, the others go on.
            tail = (p.stderr.strip().splitlines() or ["no output"])[-1][:200]
            rows[rest[0]["file"]] = {"file": rest[0]["file"], "compiled": True, "correct": False,
                                     "error": f"the evaluating process died: {tail}"}
            rest = rest[1:]
        pending = rest
    eval_wall = time.monotonic() - t1
    for f, b in built.items():
        rows.setdefault(f, {"file": f, "compiled": False, "correct": False, "error": b.get("error", "")})
        rows[f]["built"] = b.get("ok", False)
        rows[f]["compile_s"] = b.get("s")
    log(f"KernelBench: {len(rows)} files evaluated in {eval_wall:.0f} s")
    return rows, compile_wall, eval_wall


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
            rows[f] = {"status": r.get("status"), "speedup": r.get("speedup"),
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
    k_rows, k_wall = run_kernrl(a.kernrl, a.suite, dirs, work, log)
    kb_rows, kb_compile, kb_eval = run_kb(copies, kb_root, work, a.jobs, log)
    rows = []
    for (f, c), (orig, _) in zip(copies, files):
        kr, br = k_rows.get(str(f), {}), kb_rows.get(str(f), {})
        rows.append({"file": str(orig), "name": f.name, "set": a.tag, "problem": c["id"], "kernrl": kr, "kb": br})
    side = {"tag": a.tag, "gpu": gpu_name(), "rows": rows, "skipped": skipped,
            "wall_s": {"kernrl": round(k_wall, 1), "kb_compile": round(kb_compile, 1), "kb_eval": round(kb_eval, 1)},
            "jobs": a.jobs}
    (work / "side.json").write_text(json.dumps(side, indent=1) + "\n")
    (work / "side_by_side.md").write_text(markdown([side]))
    log(f"wrote {work / 'side_by_side.md'}")


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
    rows = [r for s in sides for r in s["rows"]]
    n = len(rows)
    same = [r for r in rows if (r["kernrl"].get("status") == "correct") == bool(r["kb"].get("correct"))]
    both = [r for r in rows if r["kernrl"].get("status") == "correct" and r["kb"].get("correct")
            and r["kernrl"].get("speedup") and r["kb"].get("runtime_us") and r["kb"].get("ref_runtime_us")]
    kb_sp = [r["kb"]["ref_runtime_us"] / r["kb"]["runtime_us"] for r in both]
    k_sp = [r["kernrl"]["speedup"] for r in both]
    g_kb, g_k = geomean(kb_sp), geomean(k_sp)
    g_c = geomean([r["kernrl"].get("compile_speedup") for r in both])
    walls = {k: sum(s["wall_s"][k] for s in sides) for k in ("kernrl", "kb_compile", "kb_eval")}
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
            out.append(f"- kernrl's geometric-mean speedup over torch.compile (the suite's baseline file) "
                       f"on the same files: {g_c:.3f}x.")
    out.append(f"- Wall time: kernrl grade-dir {walls['kernrl']:.0f} s; KernelBench {walls['kb_compile']:.0f} s "
               f"building the extensions ({sides[0]['jobs']} at a time) + {walls['kb_eval']:.0f} s evaluating = "
               f"{walls['kb_compile'] + walls['kb_eval']:.0f} s.")
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
    if a.combine:
        sides = [json.loads((pathlib.Path(d) / "side.json").read_text()) for d in a.combine]
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
