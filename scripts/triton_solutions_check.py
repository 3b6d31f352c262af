#!/usr/bin/env python3
"""Checks the bundled Triton solutions (problems/*/*/solution.py) with Triton's own launcher.

A standalone GPU script, independent of kernrl's grading path: for every problem with a
solution.py it reads the file's kernrl launch block (the Triton kernel-file contract), draws the
inputs and parameters as problem.yaml describes them (normal / uniform / randint / kaiming_uniform
/ bernoulli / constant, and the few `custom` generators roughly as the problems describe them),
runs the launches in order through `kernel[grid](*args, **constexprs, num_warps=...)` with the
outputs poisoned (NaN / 0xA5) and the scratch buffers zeroed, and compares every output with the
problem's `torch:` Model (TF32 off) under kernrl's rule (allclose: atol + rtol * |ref| elementwise,
NaN/inf placement and the relative L2 error; exact: bitwise) at every test size and the bench size.
The kernels are then timed at the bench size with `triton.testing.do_bench` (median, L2 flushed
between runs; the scratch zeroing is not timed), and the torch reference likewise.

Correctness runs in worker processes (one per problem, so a faulting kernel cannot poison the
rest); timing runs afterwards in one process, one problem at a time.

Usage:
  scripts/triton_solutions_check.py [--filter 'L1_*'] [--jobs N] [--no-time] [--no-ref-time]
      [--json FILE] [--markdown FILE]
  scripts/triton_solutions_check.py --static      # no GPU, no Triton: parse and resolve every launch
  scripts/triton_solutions_check.py --render RUN.json --markdown FILE.md   # the table of a saved run
"""
import argparse
import ast
import datetime
import fnmatch
import importlib.util
import inspect
import json
import math
import os
import re
import sys
import time
import traceback
import zlib

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

try:
    import yaml
except ImportError:  # pragma: no cover - the GPU hosts' Python has PyYAML (transformers needs it)
    sys.exit("triton_solutions_check.py: PyYAML is required (python3 -m pip install pyyaml)")


# ---------------------------------------------------------------------------------------------
# Problems, launch blocks and expressions


def find_problems(flt):
    out = []
    base = os.path.join(ROOT, "problems")
    for lvl in sorted(os.listdir(base), key=lambda s: int(s[1:]) if s[1:].isdigit() else 99):
        ldir = os.path.join(base, lvl)
        if not os.path.isdir(ldir):
            continue
        for name in sorted(os.listdir(ldir), key=lambda s: (int(s.split("_")[0]) if s.split("_")[0].isdigit() else 0, s)):
            d = os.path.join(ldir, name)
            if not os.path.exists(os.path.join(d, "solution.py")):
                continue
            spec = yaml.safe_load(open(os.path.join(d, "problem.yaml")))
            if fnmatch.fnmatch(spec["id"], flt):
                out.append(d)
    return out


def launch_block(path):
    """The kernrl launch block of a Triton file: a module docstring starting with `kernrl`, or a
    `# kernrl` line followed by `#` comment lines."""
    src = open(path).read()
    doc = ast.get_docstring(ast.parse(src), clean=False)
    if doc is not None and doc.lstrip().startswith("kernrl"):
        text = doc.lstrip()[len("kernrl"):]
    else:
        lines = src.splitlines()
        try:
            start = next(i for i, l in enumerate(lines) if l.strip() == "# kernrl")
        except StopIteration:
            raise ValueError(f"{path}: no kernrl launch block (docstring or '# kernrl' comment block)")
        body = []
        for l in lines[start + 1:]:
            if not l.startswith("#"):
                break
            body.append(l[2:] if l.startswith("# ") else l[1:])
        text = "\n".join(body)
    block = yaml.safe_load(text)
    if not isinstance(block, dict) or not block.get("launches"):
        raise ValueError(f"{path}: the launch block has no launches")
    return block


def _cdiv(a, b):
    return -(-a // b)


def _div(a, b):
    if isinstance(a, int) and isinstance(b, int):
        q = abs(a) // abs(b)
        return q if (a >= 0) == (b >= 0) else -q
    return a / b


_BIN = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.Div: _div, ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}
_FUNCS = {"cdiv": _cdiv, "min": min, "max": max}


def evaluate(expr, env):
    """An integer expression of the contract (sizes, integer scalars, num_sms, + - * / % and
    cdiv/min/max; `/` on integers truncates as in C)."""
    if isinstance(expr, bool) or isinstance(expr, (int, float)):
        return expr
    node = ast.parse(str(expr).strip(), mode="eval").body

    def ev(n):
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in env:
                raise KeyError(f"unknown name '{n.id}' in expression '{expr}'")
            return env[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in _BIN:
            return _BIN[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _FUNCS:
            return _FUNCS[n.func.id](*[ev(a) for a in n.args])
        raise ValueError(f"unsupported expression '{expr}'")

    return ev(node)


def size_sets(spec):
    return [("bench", spec["sizes"]["bench"])] + [(f"test{i}", s) for i, s in enumerate(spec["sizes"]["test"])]


def scalar_values(spec):
    out = {}
    for name, s in (spec.get("scalars") or {}).items():
        out[name] = float(s["value"]) if s["dtype"].startswith("float") else int(s["value"])
    return out


def expr_env(spec, sizes, num_sms):
    env = dict(sizes)
    env.update({k: v for k, v in scalar_values(spec).items() if isinstance(v, int)})
    env["num_sms"] = num_sms
    return env


# ---------------------------------------------------------------------------------------------
# Static check (no torch, no Triton): every launch resolves against the file and the problem


def jit_functions(path):
    """name -> (non-constexpr params, constexpr params, tuned: autotune/heuristics present)."""
    out = {}
    for n in ast.parse(open(path).read()).body:
        if not isinstance(n, ast.FunctionDef):
            continue
        decos = [ast.unparse(d) for d in n.decorator_list]
        if not any("jit" in d for d in decos):
            continue
        params, consts = [], []
        for a in n.args.args:
            ann = ast.unparse(a.annotation) if a.annotation is not None else ""
            (consts if "constexpr" in ann else params).append(a.arg)
        out[n.name] = (params, consts, any("autotune" in d or "heuristics" in d for d in decos))
    return out


def static_check(d, num_sms=132):
    spec = yaml.safe_load(open(os.path.join(d, "problem.yaml")))
    path = os.path.join(d, "solution.py")
    block = launch_block(path)
    if block.get("problem") != spec["id"]:
        raise ValueError(f"{path}: launch block names problem {block.get('problem')!r}, not {spec['id']}")
    funcs = jit_functions(path)
    tensors = {t["name"] for k in ("inputs", "parameters", "outputs") for t in (spec.get(k) or [])}
    tensors |= set((block.get("scratch") or {}).keys())
    floats = {k for k, v in scalar_values(spec).items() if isinstance(v, float)}
    for label, sizes in size_sets(spec):
        env = expr_env(spec, sizes, num_sms)
        for i, ln in enumerate(block["launches"]):
            where = f"{path}: launch {i} ({ln.get('kernel')}) at {label}"
            if ln["kernel"] not in funcs:
                raise ValueError(f"{where}: no @triton.jit function named {ln['kernel']}")
            params, consts, tuned = funcs[ln["kernel"]]
            if len(ln.get("args", [])) != len(params):
                raise ValueError(f"{where}: {len(ln.get('args', []))} args for {len(params)} parameters {params}")
            given = set((ln.get("constexprs") or {}).keys())
            if given - set(consts):
                raise ValueError(f"{where}: constexprs {sorted(given - set(consts))} are not constexpr parameters")
            if not tuned and set(consts) - given:
                raise ValueError(f"{where}: constexprs {sorted(set(consts) - given)} not given")
            grid = [evaluate(g, env) for g in ln["grid"]]
            if not 1 <= len(grid) <= 3 or any(not isinstance(g, int) or g < 1 for g in grid):
                raise ValueError(f"{where}: grid {ln['grid']} -> {grid}")
            for a in ln.get("args", []):
                if isinstance(a, str) and (a in tensors or a in floats):
                    continue
                v = evaluate(a, env)
                if not isinstance(v, (int, float)):
                    raise ValueError(f"{where}: arg {a!r} -> {v!r}")
            for k, v in (ln.get("constexprs") or {}).items():
                evaluate(v, env)
        for name, sc in (block.get("scratch") or {}).items():
            evaluate(sc["count"], env)
    return len(block["launches"])


# ---------------------------------------------------------------------------------------------
# GPU: inputs, reference, launches, comparison (torch and Triton imported lazily)


def torch_dtype(torch, name):
    return {"float32": torch.float32, "float64": torch.float64, "float16": torch.float16,
            "bfloat16": torch.bfloat16, "int8": torch.int8, "uint8": torch.uint8, "int16": torch.int16,
            "int32": torch.int32, "int64": torch.int64, "bool": torch.bool, "complex64": torch.complex64,
            "uint32": torch.int32}[name]


def custom_tensor(torch, pid, name, shape, dtype, g, dev):
    """The problems' `custom` generators, as their descriptions state them."""
    if pid == "L1_95_CrossEntropyLoss" and name == "predictions":
        z = torch.randn(shape[0], 1, generator=g, device=dev)
        return torch.randn(shape, generator=g, device=dev) * torch.exp(2 * z)
    if pid == "L4_6_INT4_Quantized_GEMM" and name == "scales":
        return (torch.randn(shape, generator=g, device=dev).abs() * 0.1).to(torch.float16)
    if pid == "L10_5_ChaCha20" and name == "counter":
        return torch.randint(-2**31, 2**31, shape, generator=g, device=dev, dtype=torch.int32)
    raise ValueError(f"{pid}: no generator here for the custom tensor '{name}'")


def make_tensor(torch, spec, t, env, seed, dev):
    shape = [evaluate(e, env) for e in t["shape"]]
    dtype = torch_dtype(torch, t["dtype"])
    g = torch.Generator(device=dev)
    g.manual_seed(seed ^ zlib.crc32(t["name"].encode()))
    init = t.get("init", {"normal": {"mean": 0, "std": 1}})
    kind, p = (init, {}) if isinstance(init, str) else next(iter(init.items()))
    if kind == "custom":
        return custom_tensor(torch, spec["id"], t["name"], shape, dtype, g, dev).contiguous()
    if kind == "normal":
        v = torch.randn(shape, generator=g, device=dev) * float(p["std"]) + float(p["mean"])
    elif kind == "uniform":
        v = torch.rand(shape, generator=g, device=dev) * (float(p["high"]) - float(p["low"])) + float(p["low"])
    elif kind == "kaiming_uniform":
        bound = 1.0 / math.sqrt(evaluate(p["fan_in"], env))
        v = (torch.rand(shape, generator=g, device=dev) * 2 - 1) * bound
    elif kind == "randint":
        if not dtype.is_floating_point:
            return torch.randint(int(p["low"]), int(p["high"]), shape, generator=g, device=dev, dtype=dtype)
        v = torch.randint(int(p["low"]), int(p["high"]), shape, generator=g, device=dev).float()
    elif kind == "bernoulli":
        v = (torch.rand(shape, generator=g, device=dev) < float(p["p"]))
    elif kind == "constant":
        v = torch.full(shape, float(p["value"]), device=dev)
    else:
        raise ValueError(f"{spec['id']}: unknown init '{kind}' of {t['name']}")
    return v.to(dtype).contiguous()


def reference(torch, spec, sizes, inputs, params, dev):
    scope = {}
    exec(compile(spec["torch"], f"<{spec['id']} torch:>", "exec"), scope)
    cls = scope["Model"]
    args = {**sizes, **scalar_values(spec)}
    sig = inspect.signature(cls.__init__)
    with torch.device(dev):
        model = cls(**{k: v for k, v in args.items() if k in sig.parameters})
        model.load_state_dict({k: v.clone() for k, v in params.items()}, strict=True)
        model = model.to(dev).eval()
        with torch.no_grad():
            out = model(*[x.clone() for x in inputs])
    return list(out) if isinstance(out, (tuple, list)) else [out]


def compare(torch, spec, o, got, want):
    """(ok, max_abs_error, message) under kernrl's rule."""
    cmp = o.get("compare", spec.get("compare", "allclose"))
    want = want.to(got.device)
    if tuple(got.shape) != tuple(want.shape):
        want = want.reshape(got.shape) if want.numel() == got.numel() else want
        if tuple(got.shape) != tuple(want.shape):
            return False, math.inf, f"shape {tuple(want.shape)} expected, {tuple(got.shape)} given"
    if cmp == "exact" or not (got.is_floating_point() or got.is_complex()):
        w = want.to(got.dtype)
        if got.is_floating_point():
            eq = got.view(torch.int32 if got.element_size() == 4 else torch.int64 if got.element_size() == 8 else torch.int16) == \
                w.view(torch.int32 if got.element_size() == 4 else torch.int64 if got.element_size() == 8 else torch.int16)
        else:
            eq = got == w
        bad = int((~eq).sum().item())
        err = 0.0 if bad == 0 else float((got.double() - w.double()).abs().max().item())
        return bad == 0, err, "" if bad == 0 else f"{bad} of {got.numel()} elements differ"
    tol = dict(spec.get("tolerance") or {})
    tol.update(o.get("tolerance") or {})
    atol, rtol, rel_l2 = tol.get("atol", 1e-4), tol.get("rtol", 1e-4), tol.get("rel_l2", 1e-2)
    g, w = got.double(), want.double()
    if got.is_complex():
        g, w = torch.view_as_real(got).double(), torch.view_as_real(want.to(got.dtype)).double()
    fin = torch.isfinite(w)
    bad = (torch.isnan(g) != torch.isnan(w)) | (torch.isinf(w) & (g != w)) | (fin & ~torch.isfinite(g))
    if bad.any():
        return False, math.inf, f"{int(bad.sum())} NaN/inf mismatches"
    d = (g - w).abs()[fin]
    if d.numel() == 0:
        return True, 0.0, ""
    lim = atol + rtol * w.abs()[fin]
    over = int((d > lim).sum().item())
    err = float(d.max().item())
    ref = float(w[fin].norm().item())
    l2 = float(d.norm().item()) / ref if ref > 0 else (0.0 if err == 0 else math.inf)
    if over:
        return False, err, f"{over} of {d.numel()} elements outside atol {atol} + rtol {rtol}"
    if l2 > rel_l2:
        return False, err, f"relative L2 error {l2:.3g} > {rel_l2}"
    return True, err, ""


class Plan:
    """A solution's launches bound to the tensors of one size set."""

    def __init__(self, torch, mod, block, spec, sizes, tensors, dev, num_sms):
        self.torch, self.block, self.spec = torch, block, spec
        self.env = expr_env(spec, sizes, num_sms)
        self.tensors = tensors
        self.floats = {k: v for k, v in scalar_values(spec).items() if isinstance(v, float)}
        self.scratch = {}
        for name, sc in (block.get("scratch") or {}).items():
            self.scratch[name] = torch.zeros(evaluate(sc["count"], self.env),
                                             dtype=torch_dtype(torch, sc["dtype"]), device=dev)
        self.calls = []
        for ln in block["launches"]:
            rep = ln.get("repeat") or {}
            for it in range(evaluate(rep.get("count", 1), self.env)):
                env = dict(self.env)
                if rep:
                    env[rep["var"]] = it
                self.calls.append(self._bind(getattr(mod, ln["kernel"]), ln, env))

    def _arg(self, a, env):
        if isinstance(a, str) and a in self.tensors:
            return self.tensors[a]
        if isinstance(a, str) and a in self.scratch:
            return self.scratch[a]
        if isinstance(a, str) and a in self.floats:
            return self.floats[a]
        return evaluate(a, env)

    def _bind(self, kernel, ln, env):
        grid = tuple(evaluate(g, env) for g in ln["grid"])
        args = [self._arg(a, env) for a in ln.get("args", [])]
        kw = {k: (v if isinstance(v, bool) else evaluate(v, env)) for k, v in (ln.get("constexprs") or {}).items()}
        for opt in ("num_warps", "num_stages", "num_ctas"):
            if opt in ln:
                kw[opt] = int(ln[opt])
        return kernel, grid, args, kw

    def zero_scratch(self):
        for t in self.scratch.values():
            t.zero_()

    def run(self):
        for kernel, grid, args, kw in self.calls:
            kernel[grid](*args, **kw)


def poison(torch, t):
    if t.is_floating_point() or t.is_complex():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.view(torch.uint8).fill_(0xA5)
    else:
        t.view(torch.uint8).fill_(0xA5)


def load_module(path):
    name = "sol_" + re.sub(r"\W", "_", os.path.relpath(path, ROOT))
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def setup(spec, sizes, seed, dev):
    import torch
    env = expr_env(spec, sizes, 0)
    inputs = [make_tensor(torch, spec, t, env, seed, dev) for t in spec["inputs"]]
    params = {t["name"]: make_tensor(torch, spec, t, env, seed, dev) for t in (spec.get("parameters") or [])}
    outs = {}
    for o in spec["outputs"]:
        outs[o["name"]] = torch.empty([evaluate(e, env) for e in o["shape"]],
                                      dtype=torch_dtype(torch, o["dtype"]), device=dev)
    tensors = {t["name"]: x for t, x in zip(spec["inputs"], inputs)}
    tensors.update(params)
    tensors.update(outs)
    return inputs, params, outs, tensors


def check_correct(d):
    """Worker: every size set, kernels vs the torch reference. Returns a result dict."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    spec = yaml.safe_load(open(os.path.join(d, "problem.yaml")))
    res = {"id": spec["id"], "ok": False, "max_err": 0.0, "sizes": [], "error": ""}
    try:
        num_sms = torch.cuda.get_device_properties(0).multi_processor_count
        block = launch_block(os.path.join(d, "solution.py"))
        mod = load_module(os.path.join(d, "solution.py"))
        ok_all = True
        for label, sizes in size_sets(spec):
            inputs, params, outs, tensors = setup(spec, sizes, 1234 + len(res["sizes"]), dev)
            pristine = [x.clone() for x in inputs] + [x.clone() for x in params.values()]
            plan = Plan(torch, mod, block, spec, sizes, tensors, dev, num_sms)
            for t in outs.values():
                poison(torch, t)
            plan.run()
            torch.cuda.synchronize()
            want = reference(torch, spec, sizes, inputs, params, dev)
            entry = {"size": label, "ok": True, "max_err": 0.0, "why": ""}
            for x, y in zip(pristine, inputs + list(params.values())):
                if not torch.equal(x, y):
                    entry.update(ok=False, why="the kernel modified an input")
            for o, w in zip(spec["outputs"], want):
                ok, err, why = compare(torch, spec, o, outs[o["name"]], w)
                entry["max_err"] = max(entry["max_err"], err)
                if not ok:
                    entry.update(ok=False, why=f"{o['name']}: {why}")
            res["sizes"].append(entry)
            res["max_err"] = max(res["max_err"], entry["max_err"])
            ok_all &= entry["ok"]
            del plan, inputs, params, outs, tensors, want, pristine
            torch.cuda.empty_cache()
        res["ok"] = ok_all
        if not ok_all:
            res["error"] = "; ".join(f"{e['size']}: {e['why']}" for e in res["sizes"] if not e["ok"])
    except Exception as e:  # a compile error, a launch error, a fault
        res["error"] = f"{type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}"
        res["trace"] = traceback.format_exc()[-3000:]
    return res


def time_problem(d, ref_time, warmup, rep):
    import torch
    import triton
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = "cuda"
    spec = yaml.safe_load(open(os.path.join(d, "problem.yaml")))
    num_sms = torch.cuda.get_device_properties(0).multi_processor_count
    block = launch_block(os.path.join(d, "solution.py"))
    mod = load_module(os.path.join(d, "solution.py"))
    sizes = spec["sizes"]["bench"]
    inputs, params, outs, tensors = setup(spec, sizes, 99, dev)
    plan = Plan(torch, mod, block, spec, sizes, tensors, dev, num_sms)
    plan.run()  # compile (and autotune) outside the timing
    torch.cuda.synchronize()
    ms = triton.testing.do_bench(plan.run, warmup=warmup, rep=rep, return_mode="median")
    ref_ms = None
    if ref_time:
        scope = {}
        exec(compile(spec["torch"], f"<{spec['id']} torch:>", "exec"), scope)
        cls = scope["Model"]
        args = {**sizes, **scalar_values(spec)}
        sig = inspect.signature(cls.__init__)
        with torch.device(dev):
            model = cls(**{k: v for k, v in args.items() if k in sig.parameters})
            model.load_state_dict(params, strict=True)
            model = model.to(dev).eval()

            def ref_run():
                with torch.no_grad(), torch.device(dev):
                    model(*inputs)

            ref_ms = triton.testing.do_bench(ref_run, warmup=warmup, rep=rep, return_mode="median")
    return ms, ref_ms


# ---------------------------------------------------------------------------------------------
# Driver


def write_markdown(path, summary):
    results, device = summary["results"], summary["device"]
    lines = [f"# Bundled Triton solutions on {device}", "",
             f"Measured {summary['date']} by `scripts/triton_solutions_check.py` (torch {summary['torch']}, "
             f"Triton {summary['triton']}). Each `solution.py` runs through Triton's own launcher "
             "(`kernel[grid](*args, **constexprs, num_warps=...)`, its launches in order) and is compared "
             "with the problem's `torch:` module (TF32 off) at every test size and the bench size under "
             "kernrl's rule (allclose with the relative L2 bound, or bit-exact). `Triton ms` is the median of "
             "`triton.testing.do_bench` over all of a solution's launches at the bench size, the L2 cache "
             "flushed between runs; `torch ms` is the same measure of the eager `torch:` module in Python "
             "(not kernrl's libtorch baseline), for orientation.", "",
             "| problem | result | max abs error | Triton ms | torch ms | torch / Triton | note |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        ms = f"{r['ms']:.4f}" if r.get("ms") is not None else "-"
        rms = f"{r['ref_ms']:.4f}" if r.get("ref_ms") is not None else "-"
        sp = f"{r['ref_ms'] / r['ms']:.2f}x" if r.get("ms") and r.get("ref_ms") else "-"
        note = (r.get("error") or "").replace("|", "/")[:160]
        lines.append(f"| {r['id']} | {'ok' if r['ok'] else 'FAIL'} | {r['max_err']:.3g} | {ms} | {rms} | {sp} | {note} |")
    passed = sum(r["ok"] for r in results)
    lines += ["", f"{passed} of {len(results)} solutions correct at every size."]
    open(path, "w").write("\n".join(lines) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--filter", default="*", help="problem ids (fnmatch), e.g. 'L1_*'")
    ap.add_argument("--jobs", type=int, default=8, help="worker processes for the correctness checks")
    ap.add_argument("--static", action="store_true", help="no GPU: parse and resolve every launch block")
    ap.add_argument("--no-time", action="store_true", help="skip the timing pass")
    ap.add_argument("--no-ref-time", action="store_true", help="do not time the torch reference")
    ap.add_argument("--warmup", type=int, default=10, help="do_bench warmup (ms)")
    ap.add_argument("--rep", type=int, default=50, help="do_bench repetition time (ms)")
    ap.add_argument("--deadline", type=float, default=0, help="seconds: stop checking / timing after this and write what there is")
    ap.add_argument("--json", help="write the results as JSON here")
    ap.add_argument("--markdown", help="write the results table (markdown) here")
    ap.add_argument("--render", metavar="JSON", help="no GPU: write the markdown table of an earlier run's JSON")
    a = ap.parse_args()
    if a.render:
        write_markdown(a.markdown or "/dev/stdout", json.load(open(a.render)))
        return 0
    dirs = find_problems(a.filter)
    if a.static:
        bad = 0
        for d in dirs:
            try:
                n = static_check(d)
                print(f"ok    {os.path.relpath(d, ROOT)} ({n} launches)")
            except Exception as e:
                bad += 1
                print(f"FAIL  {os.path.relpath(d, ROOT)}: {type(e).__name__}: {e}")
        print(f"{len(dirs) - bad} of {len(dirs)} launch blocks resolve")
        return 1 if bad else 0

    import multiprocessing as mp
    import torch
    import triton
    device = torch.cuda.get_device_name(0)
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(f"# {device}, torch {torch.__version__}, triton {triton.__version__}, {len(dirs)} solutions", flush=True)
    t0 = time.time()
    deadline = t0 + a.deadline if a.deadline else None
    results = []
    pool = mp.get_context("spawn").Pool(processes=max(1, a.jobs), maxtasksperchild=3)
    it = pool.imap(check_correct, dirs, chunksize=1)
    for d in dirs:
        try:
            left = None if deadline is None else max(1.0, deadline - time.time())
            r = it.next(timeout=left)
        except mp.TimeoutError:
            r = {"id": os.path.relpath(d, ROOT), "ok": False, "max_err": 0.0, "sizes": [],
                 "error": "not checked: the run's deadline passed"}
        results.append(r)
        print(f"{'ok  ' if r['ok'] else 'FAIL'}  {r['id']:<52} max_err {r['max_err']:.3g}  {r['error']}", flush=True)
        if not r["ok"] and r.get("trace"):
            print("      " + r["trace"].strip().replace("\n", "\n      ")[-1500:], flush=True)
    pool.terminate()
    print(f"# correctness: {time.time() - t0:.1f} s", flush=True)
    for d, r in zip(dirs, results):
        r["ms"] = r["ref_ms"] = None
        if not r["ok"] or a.no_time or (deadline is not None and time.time() > deadline):
            continue
        try:
            r["ms"], r["ref_ms"] = time_problem(d, not a.no_ref_time, a.warmup, a.rep)
        except Exception as e:
            r["error"] = f"timing: {type(e).__name__}: {str(e).strip()[:200]}"
        rms = f"(torch {r['ref_ms']:.4f} ms)" if r["ref_ms"] is not None else ""
        print(f"time  {r['id']:<52} {r['ms'] if r['ms'] is None else round(r['ms'], 4)} ms {rms} {r['error']}", flush=True)
    print(f"# {sum(r['ok'] for r in results)} of {len(results)} correct; total {time.time() - t0:.1f} s", flush=True)
    summary = {"device": device, "date": stamp, "torch": torch.__version__, "triton": triton.__version__,
               "results": [{k: v for k, v in r.items() if k != "trace"} for r in results]}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(summary, f, indent=1)
    if a.markdown:
        write_markdown(a.markdown, summary)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
