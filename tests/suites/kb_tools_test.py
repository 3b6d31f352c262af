#!/usr/bin/env python3
"""The GPU-side KernelBench tools' CPU parts: what scripts/kb_side_by_side.py and
tools/suites/kb_baselines.py compute from their measurements (no GPU, no KernelBench checkout).

1. kb_side_by_side: which generations are graded (levels 1-3, problems the suite converted), the
   KernelBench evaluation batches (no two files with the same extension name in one process),
   KernelBench's package loaded with stand-ins for the modules its eval does not use, and the
   Markdown result: the verdict agreement, the geometric-mean speedups, rows not graded by both.
2. kb_baselines: gpu_slug as kernrl's, the bench sizes read from problem.yaml, the table.
"""

import json
import math
import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "tools" / "suites"))
import kb_baselines  # noqa: E402
import kb_side_by_side as side  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def kernel(name):
    return f'import torch\nfrom torch.utils.cpp_extension import load_inline\next = load_inline(name="{name}", cpp_sources="")\n'


def test_collect_and_batches(tmp):
    suite = tmp / "suite"
    (suite / "problems" / "L1" / "23_Softmax").mkdir(parents=True)
    (suite / "suite.json").write_text(json.dumps({
        "source": str(tmp / "KernelBench-checkout"),
        "converted": [{"id": "L1_23_Softmax", "file": "level1/23_Softmax.py"},
                      {"id": "L3_1_MLP", "file": "level3/1_MLP.py"}]}))
    gens = tmp / "gens"
    gens.mkdir()
    for n, ext in [("level_1_problem_23_sample_0_kernel.py", "softmax"), ("level_1_problem_23_sample_1_kernel.py", "softmax"),
                   ("level_3_problem_1_sample_0_kernel.py", "mlp"), ("level_2_problem_5_sample_0_kernel.py", "x"),
                   ("level_5_problem_1_sample_0_kernel.py", "y"), ("notes.py", "z")]:
        (gens / n).write_text(kernel(ext))
    files, skipped, kb_root = side.collect([str(gens)], str(suite))
    names = sorted(f.name for f, _ in files)
    check(names == ["level_1_problem_23_sample_0_kernel.py", "level_1_problem_23_sample_1_kernel.py",
                    "level_3_problem_1_sample_0_kernel.py"], f"collect: levels 1-3 on converted problems: {names}")
    reasons = {pathlib.Path(f).name: why for f, why in skipped}
    check("not a converted problem" in reasons.get("level_2_problem_5_sample_0_kernel.py", "")
          and "levels 1-3" in reasons.get("level_5_problem_1_sample_0_kernel.py", "")
          and "notes.py" not in reasons, f"collect: what is left out, and why: {reasons}")
    check(kb_root == tmp / "KernelBench-checkout", "collect: the KernelBench checkout the suite was built from")
    jobs = [{"file": str(gens / n)} for n in ["level_1_problem_23_sample_0_kernel.py", "level_3_problem_1_sample_0_kernel.py",
                                              "level_1_problem_23_sample_1_kernel.py"]]
    b = side.batches(jobs)
    check([len(x) for x in b] == [2, 1], f"batches: a repeated extension name starts a new process: {[len(x) for x in b]}")
    (gens / "noname.py").write_text("ext = load_inline(name=f'{n}', cpp_sources='')\n")
    b = side.batches([{"file": str(gens / "noname.py")}] + jobs[:2])
    check([len(x) for x in b] == [1, 2], "batches: a file with no literal extension name runs alone")


def test_standins(tmp):
    kb = tmp / "KernelBench"
    pkg = kb / "src" / "kernelbench"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import openai, litellm, dotenv\n")
    (pkg / "eval.py").write_text(
        "from pydantic import BaseModel\n"
        "class KernelExecResult(BaseModel):\n"
        "    compiled: bool = False\n    metadata: dict = {}\n    runtime: float = -1.0\n")
    ev = side.kb_import(str(kb))
    a, b = ev.KernelExecResult(compiled=True), ev.KernelExecResult()
    a.metadata["x"] = 1
    check(a.compiled is True and b.compiled is False and b.metadata == {} and b.runtime == -1.0,
          "kb_import: KernelBench's package with stand-ins (a BaseModel whose defaults are copies)")


def row(name, kb_correct, kernrl_status, kb_speedup=None, kernrl_speedup=None, compile_ms=None, kernel_ms=None):
    kb = {"compiled": True, "correct": kb_correct}
    if kb_speedup:
        kb.update(runtime_us=100.0, ref_runtime_us=100.0 * kb_speedup)
    kr = {"status": kernrl_status, "speedup": kernrl_speedup, "kernel_ms": kernel_ms}
    return {"name": name, "set": "t:g", "problem": "L1_1_X", "kb": kb, "kernrl": kr, "compile_ms": compile_ms}


def test_markdown():
    rows = [row("a", True, "correct", 2.0, 2.1, compile_ms=1.0, kernel_ms=0.5),
            row("b", True, "correct", 0.5, 0.5),
            row("c", False, "incorrect"),
            row("d", True, "format_error"),
            {"name": "e", "set": "t:g", "problem": "L1_1_X", "kb": {"not_run": "time"}, "kernrl": {"status": "correct"}}]
    s = {"tag": "t", "gpu": "G", "jobs": 4, "rows": rows, "skipped": [], "prebuild": None,
         "wall_s": {"kernrl": 5, "kb_compile": 60, "kb_eval": 20}}
    md = side.markdown([s])
    check("Same correct/incorrect verdict: 3 of 4 (75.0%)" in md, "markdown: agreement over the rows both graded")
    g_kb, g_k = math.sqrt(2.0 * 0.5), math.sqrt(2.1 * 0.5)
    check(f"KernelBench {g_kb:.3f}x, kernrl {g_k:.3f}x" in md and "within 5%" in md,
          "markdown: geometric-mean speedups over the files correct for both")
    check("over torch.compile" in md and "2.000x" in md, "markdown: the speedup over torch.compile from the baseline file")
    check("| d | t:g | L1_1_X | correct | format_error |" in md and "DIFFERENT" in md,
          "markdown: a difference is marked, with both sides' reasons")
    check("Not graded by both (1" in md and "- e (t:g)" in md, "markdown: a file KernelBench did not reach is listed apart")
    check("Wall time: kernrl grade-dir 5 s; KernelBench 60 s" in md, "markdown: the wall times of both")


def test_baselines_tools(tmp):
    check(kb_baselines.gpu_slug("NVIDIA H100 80GB HBM3") == "nvidia-h100-80gb-hbm3", "kb_baselines: gpu_slug as kernrl's")
    d = tmp / "p"
    d.mkdir()
    (d / "problem.yaml").write_text('id: "L1_1_X"\nsizes:\n  bench: {"N": 4096, "M": 3}\n  test:\n    - {"N": 7, "M": 3}\n')
    check(kb_baselines.bench_sizes(d) == {"N": 4096, "M": 3}, "kb_baselines: the bench sizes of problem.yaml")
    doc = {"device": {"name": "G"}, "problems": {
        "L1_10_b": {"sizes": {}, "compile_baseline": {"timing": {"mean_ms": 1.0, "median_ms": 1.0},
                                                      "eager_timing": {"mean_ms": 4.0, "median_ms": 4.0}, "torch": "2.x"}},
        "L1_2_a": {"sizes": {}, "compile_baseline": {"timing": {"mean_ms": 2.0, "median_ms": 2.0},
                                                     "eager_timing": {"mean_ms": 1.0, "median_ms": 1.0}, "torch": "2.x"}},
        "L1_3_c": {"sizes": {}, "baseline": {"median_ms": 1.0}}}}
    t = kb_baselines.table(doc)
    lines = [ln for ln in t.splitlines() if ln.startswith("| L")]
    check([ln.split(" | ")[0] for ln in lines] == ["| L1_2_a", "| L1_10_b"] and "geometric mean of eager / torch.compile: 1.414" in t,
          f"kb_baselines --table: problems in number order, the geometric mean: {t}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        test_collect_and_batches(tmp)
        test_standins(tmp)
        test_markdown()
        test_baselines_tools(tmp)
    if failures:
        print(f"{len(failures)} checks failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
