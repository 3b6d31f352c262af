"""Writes one converted KernelBench problem: problem.yaml, the TorchScript per size set, and the
traced input generators where an input is not one plain draw."""

import inspect
import json
import re

import torch

import kb_convert
import kb_sizes
from kb_source import ProblemError, Source

FILE_NAME = re.compile(r"^(\d+)_([A-Za-z0-9_\-]+)\.py$")


def problem_id(level, path):
    m = FILE_NAME.match(path.name)
    if not m:
        raise ProblemError(f"{path.name}: not a <number>_<Name>.py file name")
    return int(m.group(1)), m.group(2), f"L{level}_{m.group(1)}_{m.group(2)}"


def set_name(i):
    return "bench" if i == 0 else f"test{i - 1}"


def forward_names(model, count):
    """forward()'s parameter names, one per argument get_inputs() gives (input<k> where it takes
    *args)."""
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[:count] if len(names) >= count else [f"input{k}" for k in range(count)]


def forward_numbers(sets, names, taken):
    """The Python numbers get_inputs() passes to forward (fixed in the TorchScript reference), as
    scalars of the problem: [(name, dtype, value)], and reference.forward (every argument's name in
    order), or ([], None) where forward takes tensors only or a number differs between size sets."""
    layout = sets[0].layout
    if all(v is None for v in layout):
        return [], None
    if any(s.layout != layout for s in sets) or any(isinstance(v, bool) for v in layout):
        return [], None
    scalars, order = [], []
    for name, v in zip(names, layout):
        if v is not None:
            while name in taken:
                name += "_value"
            taken.add(name)
            scalars.append((name, "float64" if isinstance(v, float) else "int64", v))
        order.append(name)
    return scalars, order


def convert(path, level, out_root):
    """Converts one file; returns the entry the suite lists. Raises ProblemError."""
    number, name, pid = problem_id(level, path)
    src = Source(path)
    bench = kb_convert.SizeSet(src, {}, run=False)
    names = _weight_names(bench.model)

    def try_set(v):
        s = kb_convert.SizeSet(src, v, run=True)
        if _weight_names(s.model) != names:
            raise ValueError("these sizes change the module's parameters (their names)")
        return s

    tests, errors = kb_sizes.choose_tests(src.sizes, try_set, src.groups)
    if len(tests) < 2:
        why = "; ".join(errors[-2:]) or "no size constant above 8 to shrink"
        raise ProblemError(f"no two smaller size sets run ({why})")
    sets = [bench] + tests
    kb_convert.check_deterministic(tests[0])
    how, blobs = kb_convert.compile_reference(sets)
    generators = kb_convert.input_generators(sets)
    spec, tol, tol_checked = problem_yaml(pid, level, number, name, src, sets, how, generators is not None)
    folder = out_root / "problems" / f"L{level}" / f"{number}_{name}"
    (folder / "torchscript").mkdir(parents=True, exist_ok=True)
    for i, blob in enumerate(blobs):
        target = folder / "torchscript" / f"{set_name(i)}.pt"
        if isinstance(blob, bytes):
            target.write_bytes(blob)
        else:
            torch.jit.save(blob, str(target))
    if generators:
        (folder / "inputs").mkdir(exist_ok=True)
        for i, blob in enumerate(generators):
            (folder / "inputs" / f"{set_name(i)}.pt").write_bytes(blob)
    (folder / "problem.yaml").write_text(spec)
    tensors = [x for x, _ in bench.inputs] + list(bench.outputs) + list(bench.model.parameters())
    mb = sum(t.numel() * t.element_size() for t in tensors) / 1e6
    return {"id": pid, "file": f"level{level}/{path.name}", "reference": how,
            "bench_mb": round(mb, 1), "test_sizes": [t.sizes for t in tests], "tolerance": tol,
            "tolerance_checked": tol_checked}


def _weight_names(model):
    return [n for n, _ in model.named_parameters()] + [n for n, _ in model.named_buffers()]


def _tensor(name, dtype, shape, init):
    return {"name": name, "dtype": dtype, "shape": shape, "init": init}


def problem_yaml(pid, level, number, name, src, sets, how, traced_inputs):
    bench = sets[0]
    all_names = forward_names(bench.model, len(bench.layout))
    names = [n for n, v in zip(all_names, bench.layout) if v is None]
    # A module constant that one value at every size set and a tensor share a name
    # (`scaling_factor = 2` beside `self.scaling_factor = nn.Parameter(...)`): the constant is not
    # a size; the tensor keeps the name (dimensions of that value are written as numbers).
    all_sets = [{**src.sizes, **s.sizes} for s in sets]
    tensor_names = set(names) | set(_weight_names(bench.model))
    for n in list(all_sets[0]):
        if n in tensor_names and len({s.get(n) for s in all_sets}) == 1:
            for s in all_sets:
                s.pop(n, None)
    shapes = kb_sizes.Shapes(all_sets)
    inputs = []
    for k, (x, init) in enumerate(bench.inputs):
        nm = names[k]
        per_set = [list(s.inputs[k][0].shape) for s in sets]
        init = init if init is not None and not traced_inputs else "custom"
        inputs.append(_tensor(nm, kb_convert.dtype_name(x, f"input '{nm}'"), shapes.shape(nm, per_set), init))
    params = []
    weights = [dict(list(s.model.named_parameters()) + list(s.model.named_buffers())) for s in sets]
    for pname, t in weights[0].items():
        per_set = [list(w[pname].shape) for w in weights]
        params.append(_tensor(pname, kb_convert.dtype_name(t, f"parameter '{pname}'"),
                              shapes.shape(pname, per_set), "custom"))
    taken = {t["name"] for t in inputs + params}
    outs = bench.outputs
    base = "out" if "out" not in taken else "output"
    outputs = []
    for k, o in enumerate(outs):
        oname = base if len(outs) == 1 else f"{base}{k}"
        per_set = [list(s.outputs[k].shape) for s in sets]
        outputs.append({"name": oname, "dtype": kb_convert.dtype_name(o, f"output {k}"),
                        "shape": shapes.shape(oname, per_set)})
    _check_unique(shapes.sets[0], inputs + params + outputs)
    flops = _flops(sets, shapes)
    tol, tol_note, tol_checked = kb_convert.calibrate_tolerance(
        sets, shapes.sets[0].get("work_kflops", 0) * 1000 or None)
    numbers, order = forward_numbers(sets, all_names, set(shapes.sets[0]) | {"work_kflops"}
                                     | {t["name"] for t in inputs + params + outputs})
    reference = {"torchscript": "torchscript"}
    if order:
        reference["forward"] = order
    if how == "trace":
        reference["weights"] = "model"
    if traced_inputs:
        reference["inputs"] = "inputs"
    j = json.dumps
    lines = [
        f"id: {j(pid)}",
        f"level: {level}",
        f"name: {j(name)}",
        "description: |",
        *_indent(_description(src, level, number, [t["name"] for t in params], shapes.extra, tol_note)),
        f"reference: {j(reference)}",
        "sizes:",
        f"  bench: {j(shapes.sets[0])}",
        "  test:",
        *[f"    - {j(s)}" for s in shapes.sets[1:]],
        "inputs:", *[f"  - {j(t)}" for t in inputs],
        "parameters:" + ("" if params else " []"), *[f"  - {j(t)}" for t in params],
        *(["scalars:"] + [f"  {n}: {j({'dtype': d, 'value': v})}" for n, d, v in numbers] if numbers else []),
        "outputs:", *[f"  - {j(t)}" for t in outputs],
        f"modules: {j(_modules(bench.model))}",
        f"tolerance: {j(tol)}",
        "compare: allclose",
        f"flops: {j(flops)}",
        "bytes: auto",
        "torch: |",
        *_indent(src.text.rstrip("\n").replace("\t", "    ")),
    ]
    return "\n".join(lines) + "\n", tol, tol_checked


def _modules(model):
    """The module's submodules by path (nn.Module's registration order, a module held twice under
    each of its paths): what a generation's forward may loop over (`for lin in self.layers`,
    `isinstance(m, nn.ReLU)`). Each is its class and the torch.nn classes it derives from
    (`["ReLU6", "Hardtanh"]`); a class defined outside torch.nn is written `module:Name`, so that it
    never passes for torch's class of that name."""
    def classes(cls):
        out = []
        for c in cls.__mro__:
            if c in (torch.nn.Module, object) or c.__name__.startswith("_"):
                continue
            torch_nn = c.__module__.startswith("torch.nn.") and getattr(torch.nn, c.__name__, None) is c
            if torch_nn:
                out.append(c.__name__)
            elif c is cls:
                out.append(f"{c.__module__}:{c.__qualname__}")
        return out or ["Module"]  # an nn.Module itself

    return {name: classes(type(m)) for name, m in model.named_modules(remove_duplicate=False) if name}


def _check_unique(sizes, tensors):
    seen = set(sizes)
    for t in tensors:
        if t["name"] in seen:
            raise ProblemError(f"the name '{t['name']}' is both a size or input and another tensor")
        seen.add(t["name"])


def _indent(text):
    return [("  " + line).rstrip() for line in text.split("\n")]


def _description(src, level, number, params, extra, tol_note=""):
    doc = src.docstring.strip() or "See the module below."
    lines = [doc, "",
             f"KernelBench level {level} problem {number} ({src.path.name}): the module below is the",
             "reference. The bench size is KernelBench's own; the test sizes shrink its size",
             "constants."]
    if params:
        lines.append("Its parameters and buffers, with KernelBench's values (seed 42), are given to kernels")
        lines.append(f"by module path ({', '.join(params[:3])}{', ...' if len(params) > 3 else ''}).")
    dims = [e for e in extra if e != "work_kflops"]
    if dims:
        lines.append("Sizes that are not constants of the file, each a tensor dimension: " + ", ".join(dims) + ".")
    if tol_note:
        lines.append(tol_note[0].upper() + tol_note[1:] + ".")
    return "\n".join(lines)


def _flops(sets, shapes):
    """Floating-point operations counted by torch's FlopCounterMode (torch 2.1 and later) on the
    meta device, as a size `work_kflops` (thousands: sizes stay under 2^40); "0" where torch cannot count them."""
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return "0"
    counts = []
    for s in sets:
        try:
            model = kb_convert.Wrapped(kb_convert._meta_copy(s.model), s.layout)
            args = [x.to("meta") for x, _ in s.inputs]
            with torch.no_grad(), FlopCounterMode(display=False) as fc:
                model(*args)
            counts.append(int(fc.get_total_flops()))
        except Exception:  # noqa: BLE001 - an operation torch cannot count on meta tensors
            return "0"
    if not counts or counts[0] <= 0:
        return "0"
    for st, c in zip(shapes.sets, counts):
        st["work_kflops"] = max(1, round(c / 1000))
    return "1000 * work_kflops"
