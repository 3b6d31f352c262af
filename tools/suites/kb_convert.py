"""One KernelBench problem file into one kernrl problem folder (problem.yaml + TorchScript).

The reference is the problem's own `Model`, compiled to TorchScript by this host's torch
(`torch.jit.script`, else `torch.jit.trace`) and saved once per size set with that size set's
weights, built the way KernelBench builds them (seed 42, `Model(*get_init_inputs())` on the CPU),
so a `ModelNew` that creates the same layers in the same order holds the same values. kernrl's
worker loads the files with `torch::jit::load` and runs them as the reference.
"""

import io
import math
import os

import torch

import kb_sizes
from kb_source import ProblemError, Source, build_model, native_init, recording_factories, seed_all

# KernelBench's get_tolerance_for_precision (atol = rtol), by output dtype.
KB_TOLERANCE = {torch.float32: 1e-4, torch.float64: 1e-4, torch.float16: 1e-2, torch.bfloat16: 1e-2}
DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
          torch.bfloat16: "bfloat16", torch.int8: "int8", torch.uint8: "uint8", torch.int16: "int16",
          torch.int32: "int32", torch.int64: "int64", torch.bool: "bool", torch.complex64: "complex64"}


def dtype_name(t, what):
    if t.dtype not in DTYPES:
        raise ProblemError(f"{what} has dtype {t.dtype}, which kernrl has no type for")
    return DTYPES[t.dtype]


class Wrapped(torch.nn.Module):
    """The module with get_inputs()'s non-tensor values fixed: forward takes the tensors only."""

    def __init__(self, model, layout):
        super().__init__()
        self.model = model
        self.layout = layout  # per forward argument: None (the next tensor) or the fixed value

    def forward(self, *tensors):
        it = iter(tensors)
        return self.model(*[next(it) if v is None else v for v in self.layout])


class Generator(torch.nn.Module):
    """get_inputs() as a module, traced where an input is not one plain draw (x.softmax(), tril)."""

    def __init__(self, get_inputs):
        super().__init__()
        self.get_inputs = get_inputs

    def forward(self, _unused):
        return tuple(x for x in self.get_inputs() if isinstance(x, torch.Tensor))


def outputs_of(result):
    outs = list(result) if isinstance(result, (tuple, list)) else [result]
    for o in outs:
        if not isinstance(o, torch.Tensor):
            raise ProblemError(f"forward returns a {type(o).__name__}, not tensors")
    return outs


def describe_inputs(ns, device=None):
    """get_inputs() drawn (on `device`, e.g. meta): the tensors, each with its native init or
    None, and the forward layout (None for a tensor, else the fixed value)."""
    with recording_factories(device) as made:
        seed_all()
        xs = list(ns["get_inputs"]())
    tensors, layout = [], []
    for x in xs:
        if isinstance(x, torch.Tensor):
            entry = made.get(id(x))
            tensors.append((x, native_init(entry) if entry else None))
            layout.append(None)
        elif isinstance(x, (int, float, bool)) or x is None:
            layout.append(x)
        else:
            raise ProblemError(f"get_inputs() returns a {type(x).__name__}")
    return tensors, layout


class SizeSet:
    """One size set: the sizes, the module run at them, the inputs and (for test sets) outputs."""

    def __init__(self, src, sizes, run):
        self.sizes = sizes
        self.ns = src.load(sizes)
        if run:  # a test set: small enough to run here, checked before anything is allocated
            meta, _ = describe_inputs(self.ns, "meta")
            kb_sizes.check_elements([x for x, _ in meta], "inputs")
        self.model, _ = build_model(self.ns)
        self.inputs, self.layout = describe_inputs(self.ns, None if run else "meta")
        self.wrapped = Wrapped(self.model, self.layout)
        args = [x for x, _ in self.inputs]
        if run:
            self.outputs = self.run_eager(args)
        else:
            self.outputs = self.bench_outputs(args)

    def bench_outputs(self, args):
        """The outputs' shapes and dtypes at the bench size, from the meta device; where this
        torch has no meta kernel for an operation, the module is run for real if its inputs are
        small enough (KernelBench's bench inputs often are not)."""
        meta = Wrapped(_meta_copy(self.model), self.layout)
        try:
            with torch.no_grad():
                return outputs_of(meta(*args))
        except (NotImplementedError, RuntimeError) as e:
            n = sum(math.prod(a.shape) for a in args)
            if n > kb_sizes.MAX_REAL_BENCH:
                raise ProblemError(f"torch {torch.__version__} cannot run the module on the meta device "
                                   f"({str(e).splitlines()[0][:120]}) and the bench inputs are too large to run here") from None
            self.ns_inputs = describe_inputs(self.ns, None)[0]
            with torch.no_grad():
                seed_all()
                return [o.to("meta") for o in outputs_of(self.wrapped(*[x for x, _ in self.ns_inputs]))]

    def run_eager(self, args, seed=None):
        seed_all() if seed is None else torch.manual_seed(seed)
        with torch.no_grad():
            return [o.detach().clone() for o in outputs_of(self.wrapped(*[a.clone() for a in args]))]

    def fresh_inputs(self, seed):
        torch.manual_seed(seed)
        return [x for x in self.ns["get_inputs"]() if isinstance(x, torch.Tensor)]


def _meta_copy(model):
    """The module with every parameter and buffer on the meta device, without copying the real
    weights (a deepcopy whose memo already holds meta stand-ins for them)."""
    import copy

    memo = {}
    for p in model.parameters():
        memo[id(p)] = torch.nn.Parameter(torch.empty_like(p, device="meta"), requires_grad=p.requires_grad)
    for b in model.buffers():
        memo[id(b)] = torch.empty_like(b, device="meta")
    return copy.deepcopy(model, memo)


def close(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if not a.is_floating_point() and not a.is_complex():
        return torch.equal(a, b)
    return torch.allclose(a, b, atol=1e-6, rtol=1e-5, equal_nan=True)


def compile_reference(sets):
    """TorchScript for the problem, checked against the eager module at every test size set.
    Returns (how, per size set the module: the bench set's as a ScriptModule, saved once to its
    file, so that its weights are not held twice; the test sets' as saved bytes)."""
    tests = [s for s in sets[1:]]
    errors = []
    for how in ("script", "trace"):
        try:
            blobs = [None] + [_compile_at(how, s) for s in tests]
            for s, blob in zip(tests, blobs[1:]):
                _check_same(s, _load(blob))
            blobs[0] = _generic_for(how, sets[0], tests, blobs[1])
            return how, blobs
        except ProblemError as e:
            errors.append(f"{how}: {e}")
        except Exception as e:  # noqa: BLE001 - TorchScript's many error types, reported as text
            errors.append(f"{how}: {type(e).__name__}: {str(e).strip().splitlines()[0][:200]}")
    raise ProblemError("no TorchScript route: " + "; ".join(errors))


def _compile_at(how, s):
    if how == "script":
        if any(v is not None for v in s.layout):
            raise ProblemError("get_inputs() passes non-tensors, which scripting cannot fix")
        mod = torch.jit.script(s.model)
    else:
        with torch.no_grad():
            seed_all()
            mod = torch.jit.trace(s.wrapped, tuple(x.clone() for x, _ in s.inputs), check_trace=False)
    return _save(mod)


def _save(mod):
    buf = io.BytesIO()
    torch.jit.save(mod, buf)
    return buf.getvalue()


def _load(blob):
    return torch.jit.load(io.BytesIO(blob))


def _check_same(s, mod, args=None):
    for k, seed in enumerate((None, 1234)):
        xs = [x for x, _ in s.inputs] if k == 0 else s.fresh_inputs(seed)
        want = s.run_eager(xs, seed)
        seed_all() if seed is None else torch.manual_seed(seed)
        with torch.no_grad():
            got = outputs_of(mod(*[x.clone() for x in xs]))
        if len(got) != len(want) or not all(close(g, w) for g, w in zip(got, want)):
            raise ProblemError(f"TorchScript and eager outputs differ at {kb_sizes.show(s.sizes)}")


def _swap_weights(mod, model, prefix):
    for name, v in list(model.named_parameters()) + list(model.named_buffers()):
        *path, leaf = (prefix + name).split(".")
        m = mod
        for p in path:
            m = getattr(m, p)
        setattr(m, leaf, v)


def _generic_for(how, bench, tests, blob):
    """The bench size set's module: compiled from the bench module where that needs no run
    (script), else the first test set's trace with the bench weights, once it has given the
    eager outputs at another test size set with that set's weights (a trace fixed to its sizes
    would not)."""
    if how == "script":
        return torch.jit.script(bench.model)
    prefix = "model."
    for s in tests[1:]:
        mod = _load(blob)
        _swap_weights(mod, s.model, prefix)
        try:
            _check_same(s, mod)
        except ProblemError:
            raise ProblemError("the trace holds its sizes (it does not run at other sizes)") from None
        except Exception as e:  # noqa: BLE001
            raise ProblemError(f"the trace holds its sizes ({type(e).__name__})") from None
    mod = _load(blob)
    _swap_weights(mod, bench.model, prefix)
    return mod


def trace_input_limit():
    """The most input bytes get_inputs() may draw to be traced (the trace runs it once for real):
    a quarter of this host's memory, at least 2 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 0
    return max(1 << 31, total // 4)


def input_generators(sets):
    """Per size set the traced get_inputs(), where some input is not one plain draw, or is a draw
    whose bounds differ between size sets (`torch.randint(0, num_classes, ...)`: problem.yaml's
    init is one for all sizes); else None."""
    plain = all(init is not None for s in sets for _, init in s.inputs)
    if plain and all(s.inputs[k][1] == sets[0].inputs[k][1] for s in sets for k in range(len(s.inputs))):
        return None
    blobs = []
    limit = trace_input_limit()
    for s in sets:
        n = sum(math.prod(x.shape) * x.element_size() for x, _ in s.inputs)
        if n > limit:
            raise ProblemError(f"an input is not a plain draw and the bench inputs ({n >> 20} MiB) are too "
                               f"large to trace on this host (at most {limit >> 20} MiB: a quarter of its "
                               "memory)")
        with torch.no_grad():
            mod = torch.jit.trace(Generator(s.ns["get_inputs"]), (torch.zeros(1),), check_trace=False)
        blobs.append(_save(mod))
    return blobs


def check_deterministic(s):
    xs = [x for x, _ in s.inputs]
    a, b = s.run_eager(xs, 1), s.run_eager(xs, 2)
    if not all(close(x, y) for x, y in zip(a, b)):
        raise ProblemError("the output is random (it depends on torch's generator, e.g. dropout)")


def tolerance_for(outputs):
    tol = max((KB_TOLERANCE.get(o.dtype, 0) for o in outputs), default=0)
    return {"atol": tol or 1e-4, "rtol": tol or 1e-4}


# kernrl's policy for float32 problems (docs/grading.md, "How fp32 tolerances are set"): the exact
# result (float64) must pass with a margin, using at most this share of the tolerance.
EXACT_SHARE = 0.3
# The bench size is measured on a GPU when its counted work is at most this (float64 is slow) and
# its inputs and outputs, in float32 and float64 together, take at most BENCH_BYTES_LIMIT (the GPU
# is shared with the other conversions and whatever runs beside the build).
BENCH_FLOPS_LIMIT = 5e12
BENCH_BYTES_LIMIT = 8 << 30


def _round_up(v):
    """v rounded up to one significant digit (3.2e-4 -> 4e-4)."""
    e = math.floor(math.log10(v))
    return math.ceil(v / 10**e - 1e-9) * 10**e


def _float64_run(model, layout, args, device):
    """The module in float64 on `device`: its outputs, on that device."""
    import copy

    m = copy.deepcopy(model).double().to(device)
    xs = [a.double().to(device) if a.is_floating_point() else a.to(device) for a in args]
    seed_all()
    with torch.no_grad():
        return outputs_of(Wrapped(m, layout)(*xs))


def _float32_run(model, layout, args, device):
    import copy

    m = model if device == "cpu" else copy.deepcopy(model).to(device)
    seed_all()
    with torch.no_grad():
        return outputs_of(Wrapped(m, layout)(*[a.to(device) for a in args]))


def _needed_atol(got32, want64, rtol):
    """The atol under which every element of got32 is within EXACT_SHARE of the tolerance of the
    float64 result (0 where it already is at any atol)."""
    need = 0.0
    for g, w in zip(got32, want64):
        if not w.is_floating_point() or w.numel() == 0:
            continue
        g, w = g.double().flatten(), w.flatten()
        ok = torch.isfinite(w) & torch.isfinite(g)
        if not bool(ok.any()):
            continue
        d = (g[ok] - w[ok]).abs() / EXACT_SHARE - rtol * w[ok].abs()
        need = max(need, float(d.max()))
    return need


def calibrate_tolerance(sets, bench_flops=None):
    """KernelBench's tolerance, with atol raised where the module's own float32 result is further
    from its float64 result than kernrl's policy allows (an exact kernel would then fail against
    the float32 reference on some draws: a sum of many terms whose result can be near zero).
    Measured at every test size set (on this host's CPU) and at the bench size where a GPU is
    available and its work and tensors fit (BENCH_FLOPS_LIMIT, BENCH_BYTES_LIMIT). Returns
    (tolerance, note, checked): the note says why atol was raised, for the problem's description;
    checked lists the size sets measured and those not, with why (suite.json)."""
    outs = sets[0].outputs
    tol = tolerance_for(outs)
    if not any(o.dtype == torch.float32 for o in outs):
        return tol, "", {"at": [], "not_at": ["no float32 output"]}
    need, where, skipped = 0.0, [], []
    for i, s in enumerate(sets[1:], 1):
        args = [x for x, _ in s.inputs]
        try:
            n = _needed_atol(s.outputs, _float64_run(s.model, s.layout, args, "cpu"), tol["rtol"])
        except Exception as e:  # noqa: BLE001 - an operation without float64 support
            skipped.append(f"test size {i}: {type(e).__name__}")
            continue
        need = max(need, n)
        where.append(f"test size {i}")
    bench = sets[0]
    bench_bytes = 12 * sum(math.prod(t.shape) for t in [x for x, _ in bench.inputs] + list(bench.outputs))
    # Work torch cannot count (reductions, scans, elementwise: flops None) is bounded by the bytes.
    if (torch.cuda.is_available() and (bench_flops is None or bench_flops <= BENCH_FLOPS_LIMIT)
            and bench_bytes <= BENCH_BYTES_LIMIT):
        torch.backends.cuda.matmul.allow_tf32 = False  # as kernrl's worker runs the reference
        torch.backends.cudnn.allow_tf32 = False
        try:
            with recording_factories("cuda"):
                seed_all()
                xs = [x for x in bench.ns["get_inputs"]() if isinstance(x, torch.Tensor)]
            got = _float32_run(bench.model, bench.layout, xs, "cuda")
            want = _float64_run(bench.model, bench.layout, xs, "cuda")
            need = max(need, _needed_atol(got, want, tol["rtol"]))
            where.append("the bench size")
        except Exception as e:  # noqa: BLE001 - out of GPU memory, no float64 kernel
            skipped.append(f"bench size: {type(e).__name__}")
        finally:
            torch.cuda.empty_cache()
    else:
        skipped.append("bench size: " + ("no GPU here" if not torch.cuda.is_available() else "too large to run in float64 here"))
    note = ""
    tol_checked = {"at": where, "not_at": skipped}
    if need > tol["atol"]:
        tol = {"atol": _round_up(need), "rtol": tol["rtol"]}
        note = (f"the tolerance's atol is {tol['atol']:g}, not KernelBench's {tolerance_for(outs)['atol']:g}: the module's own "
                f"float32 result is far enough from its float64 result (measured at {', '.join(where)}) that an "
                f"exact kernel needs it to use at most {EXACT_SHARE:g} of the tolerance, as kernrl requires of "
                "float32 problems")
    return tol, note, tol_checked
