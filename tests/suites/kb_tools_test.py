#!/usr/bin/env python3
"""The GPU-side KernelBench tools' CPU parts: what scripts/kb_side_by_side.py and
tools/suites/kb_baselines.py compute from their measurements (no GPU, no KernelBench checkout).

1. kb_side_by_side: which generations are graded (levels 1-3, problems the suite converted),
   KernelBench's package loaded with stand-ins for the modules its eval does not use, and the
   Markdown result: the verdict agreement, the geometric-mean speedups, rows not graded by both.
   kb_eval_pool on a stand-in KernelBench package of the same shape: every file built and
   evaluated in a process of its own, several at a time, their GPU phases never at the same
   time (the input draws outside them), a failed build recorded as KernelBench records it, a file
   that holds the GPU too long killed as hung.
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
import kb_eval_pool  # noqa: E402
import kb_side_by_side as side  # noqa: E402

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)


def kernel(name):
    return f'import torch\nfrom torch.utils.cpp_extension import load_inline\next = load_inline(name="{name}", cpp_sources="")\n'


def test_collect(tmp):
    suite = tmp / "suite"
    (suite / "problems" / "L1" / "23_Softmax").mkdir(parents=True)
    (suite / "suite.json").write_text(json.dumps({
        "source": str(tmp / "KernelBench-checkout"),
        "converted": [{"id": "L1_23_Softmax", "file": "level1/23_Softmax.py"},
                      {"id": "L3_1_MLP", "file": "level3/1_MLP.py"}],
        "not_converted": [{"level": 2, "number": 5, "file": "level2/5_X.py", "reason": "no TorchScript route"}]}))
    gens = tmp / "gens"
    gens.mkdir()
    for n, ext in [("level_1_problem_23_sample_0_kernel.py", "softmax"), ("level_1_problem_23_sample_1_kernel.py", "softmax"),
                   ("level_3_problem_1_sample_0_kernel.py", "mlp"), ("level_2_problem_5_sample_0_kernel.py", "x"),
                   ("level_5_problem_1_sample_0_kernel.py", "y"), ("notes.py", "z")]:
        (gens / n).write_text(kernel(ext))
    found, skipped = side.gen_files([str(gens)])
    names = sorted(f.name for f, _, _ in found)
    check(names == ["level_1_problem_23_sample_0_kernel.py", "level_1_problem_23_sample_1_kernel.py",
                    "level_2_problem_5_sample_0_kernel.py", "level_3_problem_1_sample_0_kernel.py"],
          f"gen_files: the generations of levels 1-3: {names}")
    reasons = {pathlib.Path(f).name: why for f, why in skipped}
    check(list(reasons) == ["level_5_problem_1_sample_0_kernel.py"] and "levels 1-3" in reasons[list(reasons)[0]],
          f"gen_files: another level is left out, with why; a file of another name is no generation: {reasons}")
    conv, nc = side.suite_index(str(suite))
    check(sorted(conv) == [(1, 23), (3, 1)] and nc == {(2, 5): "no TorchScript route"},
          f"suite_index: the suite's converted problems and the others with their reasons: {sorted(conv)}, {nc}")
    check(side.suite_index(str(tmp / "none")) == (None, {}), "suite_index: no suite.json yet (the suite is being built)")
    check(side.set_name(gens / "x.py") == f"{tmp.name}/gens", "set_name: a generations folder by its last two names")


# A stand-in for KernelBench's package with the shape kb_eval_pool relies on: the eval module's
# load_original_model_and_inputs, _process_input_tensor, run_and_check_correctness and
# timing.get_timing_function, called by eval_kernel_against_ref. The "GPU phases" write their
# start and end to a log; a file asking for HANG never ends its timing.
FAKE_EVAL = """
import os, time
from pydantic import BaseModel
from . import timing
LOG = os.environ["FAKE_KB_LOG"]
def note(what):
    with open(LOG, "a") as f:
        f.write(f"{os.getpid()} {what} {time.time():.6f}\\n")
class KernelExecResult(BaseModel):
    compiled: bool = False
    correctness: bool = False
    metadata: dict = {}
    runtime: float = -1.0
    ref_runtime: float = -1.0
def build_compile_cache(src, verbose=False, build_dir=None):
    if "BUILD_FAIL" in src:
        return False, "", "error: expected ';'"
    os.makedirs(build_dir, exist_ok=True)
    return True, "", None
def load_original_model_and_inputs(src, context):
    exec(src, context)
    return context["Model"], context["get_init_inputs"], context["get_inputs"]
def _process_input_tensor(x, device, backend="cuda", precision=None):
    note("copy")
    return x
def run_and_check_correctness(model, new, get_inputs, metadata, num_correct_trials, **kw):
    ok = True
    for t in range(num_correct_trials):
        inputs = [_process_input_tensor(x, None) for x in get_inputs()]
        note("gpu+")
        time.sleep(0.02)
        ok = ok and model(*inputs) == new(*inputs)
        note("gpu-")
    return KernelExecResult(compiled=True, correctness=ok, metadata=metadata)
def eval_kernel_against_ref(original_model_src, custom_model_src, seed_num=42, num_correct_trials=1,
                            num_perf_trials=10, measure_performance=False, timing_method="cuda_event",
                            build_dir=None, device=None, **kw):
    Model, get_init_inputs, get_inputs = load_original_model_and_inputs(original_model_src, {})
    ctx = {}
    exec(custom_model_src, ctx)
    r = run_and_check_correctness(Model(), ctx["ModelNew"](), get_inputs, {}, num_correct_trials)
    fn = timing.get_timing_function(timing_method)
    r.runtime = fn(ctx["ModelNew"](), get_inputs())
    r.ref_runtime = fn(Model(), get_inputs())
    return r
"""
FAKE_TIMING = """
import time
def get_timing_function(method="cuda_event"):
    def fn(model, inputs, **kw):
        from .eval import note
        note("gpu+")
        time.sleep(3600 if getattr(model, "hang", False) else 0.05)
        note("gpu-")
        return model.ms
    return fn
"""
REF = "class Model:\n    ms = 2.0\n    def __call__(self, x):\n        return x * 2\n" \
      "def get_inputs():\n    import os, sys, time\n    from kernelbench.eval import note\n" \
      "    note('draw-held' if os.path.exists(sys.argv[-1]) else 'draw-free')\n" \
      "    time.sleep(0.05)\n    return [3]\ndef get_init_inputs():\n    return []\n"


def gen(body, ms=1.0, hang=False):
    return f"class ModelNew:\n    ms = {ms}\n    hang = {hang}\n    def __call__(self, x):\n        return {body}\n"


def test_pool(tmp):
    import os

    kb = tmp / "fakekb"
    pkg = kb / "src" / "kernelbench"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "eval.py").write_text(FAKE_EVAL)
    (pkg / "timing.py").write_text(FAKE_TIMING)
    log = tmp / "fake.log"
    os.environ["FAKE_KB_LOG"] = str(log)
    (tmp / "ref.py").write_text(REF)
    files = {"good_a": gen("x * 2", 0.5), "good_b": gen("x + x", 4.0), "wrong": gen("x * 3"),
             "nobuild": "BUILD_FAIL\n" + gen("x * 2"), "hang": gen("x * 2", hang=True), "good_c": gen("2 * x", 1.0)}
    items = []
    for name, text in files.items():
        (tmp / f"{name}.py").write_text(text)
        items.append({"file": str(tmp / f"{name}.py"), "ref": str(tmp / "ref.py"), "name": name,
                      "build_dir": str(tmp / "builds" / name)})
    rows = {}
    pool = kb_eval_pool.Pool(kb, tmp / "work", build_jobs=3, max_eval=4, gpu_total_gb=1000, host_gb=1000,
                             on_row=lambda f, r: rows.__setitem__(pathlib.Path(f).stem, r), hold_max=5)
    stats = pool.run(items)
    check(sorted(rows) == sorted(files), f"pool: a row for every file: {sorted(rows)}")
    check(all(rows[n].get("correct") for n in ("good_a", "good_b", "good_c")) and rows["wrong"].get("correct") is False,
          f"pool: KernelBench's verdicts: {[(n, r.get('correct')) for n, r in rows.items()]}")
    check(abs(rows["good_a"].get("ref_runtime_ms", 0) / rows["good_a"].get("runtime_ms", 1) - 4.0) < 1e-9,
          f"pool: the timings as eval_kernel_against_ref returns them: {rows['good_a']}")
    check(rows["nobuild"].get("compiled") is False and "expected" in rows["nobuild"].get("error", ""),
          f"pool: a failed build is KernelBench's compile failure: {rows['nobuild']}")
    check("hung" in rows["hang"].get("error", "") and rows["hang"].get("correct") is False,
          f"pool: a file that holds the GPU too long is killed as hung: {rows['hang']}")
    check(stats["built"] == 5, f"pool: 5 of 6 extensions built: {stats}")
    # The GPU phases of different processes never overlap; the draws happen outside them.
    events = [ln.split() for ln in log.read_text().splitlines()]
    spans, opened = [], {}
    for pid, what, t in events:
        if what == "gpu+":
            opened[pid] = float(t)
        elif what == "gpu-":
            spans.append((opened.pop(pid), float(t), pid))
    spans.sort()
    overlap = [(a, b) for a, b in zip(spans, spans[1:]) if b[0] < a[1] and a[2] != b[2]]
    pids = {p for _, _, p in spans}
    check(len(pids) >= 4 and not overlap, f"pool: {len(pids)} processes, GPU phases one at a time ({len(overlap)} overlaps)")
    draws = [what for _, what, _ in events if what.startswith("draw")]
    check(draws and all(w == "draw-free" for w in draws),
          f"pool: inputs drawn with the GPU lock let go, so that others may use the GPU meanwhile: {set(draws)}")


def test_admission(tmp):
    """The pool's GPU memory model: what running evaluations keep, plus the largest phase."""
    gib = 2**30
    res, peak, host = kb_eval_pool.memory(6 * gib, 6 * gib)  # a level-1 elementwise problem
    check(abs(res - 19.5) < 1e-9 and abs(peak - 30.0) < 1e-9 and abs(host - 8.5) < 1e-9,
          f"memory: inputs and both outputs kept, a new output and the comparison in a phase: {res, peak, host}")
    check(kb_eval_pool.memory(None, None)[0] > 20, "memory: an unknown problem counts as a large one")
    pool = kb_eval_pool.Pool(tmp, tmp / "adm", gpu_total_gb=100, host_gb=1000)  # 94 GB to give
    fake = type("P", (), {"poll": lambda self: None})()
    for k in range(3):
        pool.running[k] = ({"res_gb": 20.0, "peak_gb": 30.0, "host_gb": 1.0}, fake, 0.0, tmp / "x")
    pool.res_used = 60.0
    check(pool._need(0.0, 0.0) == 90.0, f"admission: 3 x 20 GB kept + one 30 GB phase: {pool._need(0.0, 0.0)}")
    check(pool._need(20.0, 30.0) > pool.gpu_budget, "admission: a fourth such evaluation does not fit")
    pool.other_peak = 40.0
    check(pool._need(0.0, 0.0) == 100.0, "admission: kernrl's share counts as the phase it holds the GPU for")


def test_standins(tmp):
    kb = tmp / "KernelBench"
    pkg = kb / "src" / "kernelbench"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import openai, litellm, dotenv\n")
    (pkg / "eval.py").write_text(
        "from pydantic import BaseModel\n"
        "class KernelExecResult(BaseModel):\n"
        "    compiled: bool = False\n    metadata: dict = {}\n    runtime: float = -1.0\n")
    ev = kb_eval_pool.kb_import(str(kb))
    a, b = ev.KernelExecResult(compiled=True), ev.KernelExecResult()
    a.metadata["x"] = 1
    check(a.compiled is True and b.compiled is False and b.metadata == {} and b.runtime == -1.0,
          "kb_import: KernelBench's package with stand-ins (a BaseModel whose defaults are copies)")


def row(name, kb_correct, kernrl_status, kb_speedup=None, kernrl_speedup=None, compile_ms=None, kernel_ms=None):
    kb = {"compiled": True, "correct": kb_correct, "compile_s": 40.0, "s": 10.0, "lock_wait_s": 2.0}
    if kb_speedup:
        kb.update(runtime_ms=1.0, ref_runtime_ms=1.0 * kb_speedup)
    kr = {"status": kernrl_status, "speedup": kernrl_speedup, "kernel_ms": kernel_ms}
    return {"name": name, "set": "t:g", "problem": "L1_1_X", "kb": kb, "kernrl": kr, "compile_ms": compile_ms}


def test_markdown():
    rows = [row("a", True, "correct", 2.0, 2.1, compile_ms=1.0, kernel_ms=0.5),
            row("b", True, "correct", 0.5, 0.5),
            row("c", False, "incorrect"),
            row("d", True, "format_error"),
            {"name": "e", "set": "t:g", "problem": "L1_1_X", "kb": {"not_run": "time"}, "kernrl": {"status": "correct"}}]
    s = {"tag": "t", "gpu": "G", "jobs": 4, "max_eval": 3, "rows": rows, "skipped": [], "kb_build_s": [30, 40, 50],
         "wall_s": {"kernrl": 5, "kb_build": 60, "kb_eval": 20}, "kb_file_s": 90, "kb_lock_wait_s": 30}
    md = side.markdown([s])
    check("Same correct/incorrect verdict: 3 of 4 (75.0%)" in md, "markdown: agreement over the rows both graded")
    g_kb, g_k = math.sqrt(2.0 * 0.5), math.sqrt(2.1 * 0.5)
    check(f"KernelBench {g_kb:.3f}x, kernrl {g_k:.3f}x" in md and "within 5%" in md,
          "markdown: geometric-mean speedups over the files correct for both")
    check("over torch.compile" in md and "2.000x" in md, "markdown: the speedup over torch.compile from the baseline file")
    check("| d | t:g | L1_1_X | correct | format_error |" in md and "DIFFERENT" in md,
          "markdown: a difference is marked, with both sides' reasons")
    check("Not graded by both (1" in md and "- e (t:g)" in md, "markdown: a file KernelBench did not reach is listed apart")
    later = dict(s, tag="u", rows=[dict(rows[4], set="u:g", kb={"compiled": True, "correct": True}),
                                   dict(rows[0], set="u:g", kb={"not_run": "time"})])
    md2 = side.markdown([s, later])
    check("Same correct/incorrect verdict: 4 of 5" in md2 and "| e | u:g |" in md2 and "| a | t:g |" in md2,
          "markdown --combine: a file graded in a later run counts once, with the run that has both verdicts")
    check("Wall time: kernrl grade-dir 5 s for 5 files. KernelBench: 4 extension builds of 160 s together (one 40 s, "
          "median, 40-40 s; 4 at a time, 60 s wall-clock); 4 evaluations of 32 s together" in md
          and "(one 8 s, median; 3 processes at a time, their GPU phases one at a time, 20 s wall-clock)" in md,
          f"markdown: the wall times of both: {md}")
    oom = dict(rows[0], kb={"compiled": True, "correct": False, "error": "CUDA out of memory. Tried to allocate 6 GiB"})
    md3 = side.markdown([dict(s, rows=[oom] + rows[1:])])
    check("Same correct/incorrect verdict: 2 of 3" in md3 and "- a (t:g): KernelBench ran out of GPU memory" in md3,
          "markdown: an evaluation that ran out of GPU memory is no verdict")


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


def test_head_sizes():
    """kb_source.group_sizes and kb_sizes.candidates: an embedding split into heads keeps its head
    size at the test sizes; other divisions do not tie sizes."""
    import ast

    import kb_sizes
    import kb_source

    def groups(init_body, init_params, constants):
        src = (f"import torch.nn as nn\nclass Model(nn.Module):\n    def __init__(self, {', '.join(init_params)}):\n"
               + "".join(f"        {ln}\n" for ln in init_body)
               + "".join(f"{k} = {v}\n" for k, v in constants.items())
               + f"def get_inputs():\n    return []\ndef get_init_inputs():\n    return [{', '.join(init_params)}]\n")
        tree = ast.parse(src)
        return kb_source.group_sizes(tree, kb_source.size_constants(tree)[0])

    sizes = {"n_embd": 768, "n_head": 12, "block_len": 64}
    check(groups(["assert n_embd % n_head == 0", "self.n_head = n_head"], ["n_embd", "n_head"], sizes)
          == [("n_embd", "n_head")], "group_sizes: assert n_embd % n_head == 0")
    check(groups(["self.q = n_embd // block_len"], ["n_embd", "block_len"], sizes) == [],
          "group_sizes: a division by a constant not named like a head count ties nothing")
    check(groups(["self.a = nn.MultiheadAttention(num_heads=n_head, embed_dim=n_embd)"], ["n_embd", "n_head"], sizes)
          == [("n_embd", "n_head")], "group_sizes: MultiheadAttention by keyword")
    check(groups(["assert n_embd % n_head == 0"], ["n_embd", "n_head"], {"n_embd": 768, "n_head": 1}) == [],
          "group_sizes: one head ties nothing")
    for which in range(3):
        c = kb_sizes.candidates({"n_embd": 768, "n_head": 12, "batch": 16}, which, 1, [("n_embd", "n_head")])
        check(2 <= c["n_head"] < 12 and c["n_embd"] == 64 * c["n_head"],
              f"candidates {which}: the head size 64 kept, the head count shrunk below its bench value: {c}")
        c = kb_sizes.candidates({"n_embd": 768, "n_head": 2, "batch": 16}, which, 1, [("n_embd", "n_head")])
        check(c.get("n_embd", 768) == 768 and c.get("n_head", 2) == 2,
              f"candidates {which}: two heads stay two, so the embedding stays: {c}")


def main():
    test_head_sizes()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        test_collect(tmp)
        test_pool(tmp)
        test_admission(tmp)
        test_standins(tmp)
        test_markdown()
        test_baselines_tools(tmp)
    if failures:
        print(f"{len(failures)} checks failed", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
