"""Launch plans from a Python answer's host wrapper (docs/kernel-format.md, "Host wrappers").

Runs only inside kernrl-triton's OS sandbox, called by kernrl_triton.py for a request with
`"mode": "wrapper_plan"`. The whole answer runs with the shape-only `torch` of shape_torch.py in
sys.modules; then, for every size set, `ModelNew` (else `Model`) is built with the problem's sizes
and scalars and its `forward` called on stand-in inputs, and every `kernel[grid](...)` it makes is
recorded: the kernel's name, the grid, each argument (a tensor by the problem's name, an integer
with the expression over the sizes it came from, a float), constexprs and options. The answer says
per size set what forward launched; kernrl (src/triton_compile/wrapper_plan.cpp) merges the size
sets into a launch block. What cannot be a launch plan is a Refusal naming the line and why.
"""
import inspect
import sys
import traceback

import shape_nn
import shape_torch as st
from shape_torch import Refusal, SymInt, Tensor, refuse

OPTIONS = ("num_warps", "num_stages", "num_ctas")


class Launch:
    def __init__(self, kernel, line, grid, args, constexprs, options):
        self.kernel, self.line, self.grid = kernel, line, grid
        self.args, self.constexprs, self.options = args, constexprs, options


class Recorder:
    def __init__(self, ns, unwrap):
        self.ns, self.unwrap, self.launches, self.notes = ns, unwrap, [], []
        self.pin, self.pinned = set(), set()  # kernels whose grid depends on the autotune config

    def kernel_name(self, obj, fn):
        for k, v in self.ns.items():
            if v is obj:
                return k
        refuse("forward launches %s, which is not a kernel defined at the top level of the file: "
               "define each @triton.jit kernel at the module's top level" %
               getattr(fn, "__name__", "a kernel"))

    def launcher(self, obj, grid):
        def launch(*args, **kwargs):
            self.record(obj, grid, args, kwargs)
        return launch

    def record(self, obj, grid, args, kwargs):
        line = st.answer_line()
        fn, autotuner, heuristics = self.unwrap(obj)
        if fn is None:
            refuse("forward launches an object that is not a @triton.jit kernel")
        name = self.kernel_name(obj, fn)
        names = list(fn.arg_names)
        const = {p.name for p in fn.params if p.is_constexpr}
        bound, options = {}, {}
        if len(args) > len(names):
            refuse("kernel %s takes %d parameters but forward passes %d" %
                   (name, len(names), len(args)))
        for n, v in zip(names, args):
            bound[n] = v
        for k, v in kwargs.items():
            if k in names:
                bound[k] = v
            elif k in OPTIONS:
                options[k] = v
            else:
                refuse("kernel %s is launched with %s=..., which is neither a parameter of the kernel "
                       "nor an option kernrl sets (num_warps, num_stages, num_ctas)" % (name, k))
        for p in fn.params:
            default = getattr(p, "default", inspect.Parameter.empty)
            if p.name not in bound and default is not inspect.Parameter.empty \
                    and p.name not in const:
                bound[p.name] = default
        missing = [n for n in names if n not in bound and n not in const]
        if missing:
            refuse("kernel %s is launched without %s" % (name, ", ".join(missing)))
        grid_v, pinned = self.grid_value(grid, bound, autotuner, heuristics, name)
        run_args = [self.arg(name, n, bound[n]) for n in names if n not in const]
        constexprs = {n: self.constexpr(name, n, bound[n]) for n in names
                      if n in const and n in bound}
        for k, v in pinned.items():
            constexprs.setdefault(k, self.constexpr(name, k, v))
        opts = {k: self.integer(name, k, v) for k, v in options.items()}
        self.launches.append(Launch(name, line, grid_v, run_args, constexprs, opts))

    def grid_value(self, grid, bound, autotuner, heuristics, name):
        """The grid, and the autotune config's constexprs it needs pinned ({} when none)."""
        if not callable(grid):
            return self.grid_tuple(grid, name), {}
        configs = list(autotuner.configs) if autotuner is not None else [None]
        grids = []
        for cfg in configs:
            meta = dict(bound)
            if cfg is not None:
                meta.update(cfg.kwargs)
            for h in heuristics:
                for k, f in h.items():
                    meta[k] = f(dict(meta))
            grids.append(self.grid_tuple(grid(meta), name))
        if name not in self.pin and all([int(v) for v in g] == [int(v) for v in grids[0]]
                                         for g in grids):
            return grids[0], {}
        self.pinned.add(name)
        # The grid depends on the config: the launch keeps the first config's constexprs, so that
        # only configs with the grid it was derived for are compiled and tried.
        pinned = dict(configs[0].kwargs)
        self.notes.append("the grid of %s depends on the autotuned config: it is launched with "
                          "the first config's %s (configs with other values are not tried)" %
                          (name, ", ".join("%s=%r" % kv for kv in sorted(pinned.items()))))
        return grids[0], pinned

    def grid_tuple(self, g, name):
        g = tuple(g) if isinstance(g, (tuple, list)) else (g,)
        if not 1 <= len(g) <= 3:
            refuse("the grid of %s has %d dimensions; a grid has 1 to 3" % (name, len(g)))
        return tuple(self.integer(name, "the grid", v) for v in g)

    def integer(self, kernel, what, v):
        if isinstance(v, bool) or not isinstance(v, int) or isinstance(v, st.PtrInt):
            if isinstance(v, Tensor):
                st.refuse("%s of %s is a tensor's value, which is not known before the kernels "
                          "run" % (what, kernel))
            refuse("%s of %s must be an integer, not %r" % (what, kernel, v))
        return v

    def arg(self, kernel, param, v):
        if isinstance(v, Tensor):
            return {"tensor": v}
        if isinstance(v, st.PtrInt):
            refuse("kernel %s gets %s as data_ptr(): pass the tensor itself" % (kernel, param))
        if isinstance(v, bool):
            return {"int": int(v), "expr": str(int(v))}
        if isinstance(v, int):
            return {"int": int(v), "expr": st.expr_of(v)}
        if isinstance(v, float):
            return {"float": v}
        if v is None:
            refuse("kernel %s gets None for %s: kernrl passes a tensor or a number for every "
                   "parameter that is not a tl.constexpr" % (kernel, param))
        refuse("kernel %s gets %r for %s: kernrl passes tensors, integers and floats" %
               (kernel, v, param))

    def constexpr(self, kernel, param, v):
        if isinstance(v, bool):
            return {"bool": v}
        if isinstance(v, int) and not isinstance(v, st.PtrInt):
            return {"int": int(v), "expr": st.expr_of(v)}
        if isinstance(v, float):
            return {"float": v}
        refuse("the constexpr %s of %s is %r: a launch plan's constexprs are integers, floats and "
               "true/false" % (param, kernel, v))


def patch_launches(ns, recorder, jit_class, unwrap):
    """kernel[grid](...) records the launch instead of compiling and running it."""
    def getitem(self, grid):
        return recorder.launcher(self, grid)
    classes = {jit_class}
    for v in ns.values():
        if unwrap(v)[0] is not None:
            classes.add(type(v))
    for c in classes:
        c.__getitem__ = getitem


def install_torch(num_sms):
    st.STATE["num_sms"] = num_sms
    nn = shape_nn.make_nn()
    torch = shape_nn.make_torch(nn)
    import triton
    triton.cdiv = st.cdiv  # the same function, keeping the expression
    for k in [m for m in sys.modules if m == "torch" or m.startswith("torch.")]:
        del sys.modules[k]
    sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.functional": nn.functional,
                        "torch.nn.init": nn.init, "torch.cuda": torch.cuda})
    return torch


def model_class(ns):
    for name in ("ModelNew", "Model"):
        c = ns.get(name)
        if isinstance(c, type) and hasattr(c, "forward"):
            return name, c
    raise Refusal("no kernrl launch block, and no ModelNew (or Model) class whose forward launches "
                  "the kernels: add a launch block (a module docstring that starts with kernrl) or "
                  "a ModelNew whose forward calls kernel[grid](...)")


def init_kwargs(cls, name, values):
    sig = inspect.signature(cls.__init__)
    kw = {}
    for p in list(sig.parameters.values())[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if p.name in values:
            kw[p.name] = values[p.name]
        elif p.default is p.empty:
            raise Refusal("%s.__init__ takes %s, which is no size or scalar of the problem (%s)" %
                          (name, p.name, ", ".join(values)), cls.__init__.__code__.co_firstlineno)
    return kw


def name_parameters(model, problem_params):
    """Gives each parameter and buffer of the model the problem's name it matches."""
    names = {p["name"] for p in problem_params}
    for path, t, _ in model.named_tensors():
        flat = path.replace(".", "_")
        last = path.split(".")[-1]
        cand = [n for n in (path, flat) if n in names]
        if not cand and last in names and sum(1 for q, _, _ in model.named_tensors()
                                              if q.split(".")[-1] == last) == 1:
            cand = [last]
        t._storage.module_path = path
        if cand and t._storage.kind not in ("input",):
            t._storage.kind, t._storage.name = "parameter", cand[0]


def tensor_ref(t, launch, problem, set_index, outputs_by_storage, scratch):
    s = t._storage
    if s.kind in ("input", "parameter"):
        return {"tensor": s.name}
    if id(s) in outputs_by_storage:
        return {"tensor": outputs_by_storage[id(s)]}
    if s.module_path:
        raise Refusal("kernel %s gets self.%s, which matches no parameter or buffer of the problem "
                      "(%s): name it as the problem does" %
                      (launch.kernel, s.module_path,
                       ", ".join(p["name"] for p in problem["parameters"]) or "it has none"),
                      launch.line)
    if s.kind in ("random", "computed"):
        raise Refusal("kernel %s gets a tensor made at line %d by a torch operation (random "
                      "values or a computation): %s" % (launch.kernel, s.line, st.WRITE_KERNELS),
                      launch.line)
    if s.kind == "full":
        raise Refusal("kernel %s gets the buffer allocated at line %d filled with %r: kernrl "
                      "zeroes scratch buffers before each run and fills nothing else: allocate it "
                      "with torch.empty or torch.zeros and set its values in a kernel" %
                      (launch.kernel, s.line, s.fill), launch.line)
    if id(s) not in scratch:
        n = "scratch_l%d" % s.line
        taken = {v["name"] for v in scratch.values()}
        k = 2
        while n in taken:
            n, k = "scratch_l%d_%d" % (s.line, k), k + 1
        scratch[id(s)] = {"name": n, "dtype": s.dtype.name, "line": s.line,
                          "count": int(s.numel), "expr": st.expr_of(s.numel), "fill": s.kind}
    return {"tensor": scratch[id(s)]["name"]}


def check_outputs(result, problem, shapes, launches, line):
    outs = problem["outputs"]
    res = list(result) if isinstance(result, (tuple, list)) else [result]
    if len(res) != len(outs):
        raise Refusal("forward returns %d value(s) but the problem has %d output(s) (%s)" %
                      (len(res), len(outs), ", ".join(o["name"] for o in outs)), line)
    written = {id(a["tensor"]._storage) for l in launches for a in l.args if "tensor" in a}
    by_storage, notes, zeroed = {}, [], []
    for t, o in zip(res, outs):
        if not isinstance(t, Tensor):
            raise Refusal("forward returns %r where the problem's output %s is a tensor" %
                          (t, o["name"]), line)
        s = t._storage
        if s.kind in ("input", "parameter"):
            raise Refusal("forward returns %s %s, which a kernel writes in place: kernrl's inputs "
                          "must stay unchanged: allocate the output (torch.empty_like) and write it"
                          % ("the input" if s.kind == "input" else "the parameter", s.name), line)
        if s.kind in ("random", "computed") or id(s) not in written:
            raise Refusal("forward returns a tensor that no kernel launch writes (made at line %d%s)"
                          ": the output must be a buffer forward allocates and a kernel writes" %
                          (s.line, " by a torch operation" if s.kind == "computed" else ""), line)
        want = 1
        for d in shapes[o["name"]]:
            want *= d
        if int(s.numel) != want or s.dtype.name != o["dtype"] or not t.is_contiguous():
            raise Refusal("forward returns a %s tensor of %d elements for the output %s, which is "
                          "%s with %d elements" % (s.dtype.name, int(s.numel), o["name"],
                                                   o["dtype"], want), line)
        if s.kind == "full":
            raise Refusal("the output %s is allocated filled with %r at line %d: kernrl poisons "
                          "outputs before each run, so a kernel must write every element" %
                          (o["name"], s.fill, s.line), line)
        if s.kind == "zeros":
            zeroed.append(o["name"])
            notes.append("the output %s is allocated with zeros at line %d: the plan fills it with "
                         "zeros first (launch kernrl_zero_fill), as torch.zeros does" %
                         (o["name"], s.line))
        by_storage[id(s)] = o["name"]
    return by_storage, notes, zeroed


def run_size_set(cls, cname, problem, size_set, num_sms, recorder):
    values = {k: SymInt(v, k) for k, v in size_set["sizes"].items()}
    for s in problem["scalars"]:
        if s["name"] not in values:
            values[s["name"]] = (SymInt(int(s["value"]), s["name"]) if s["integer"]
                                 else float(s["value"]))
    st.STATE["phase"] = "init"
    model = cls(**init_kwargs(cls, cname, values))
    name_parameters(model, problem["parameters"])
    shapes = size_set["shapes"]
    inputs = []
    for t in problem["inputs"]:
        dims = tuple(SymInt(v, e if e.isidentifier() or e.isdigit() else "(%s)" % e)
                     for v, e in zip(shapes[t["name"]], t["shape"]))
        inputs.append(st.input_tensor(t["name"], dims, t["dtype"]))
    for path, t, _ in model.named_tensors():
        s = t._storage
        if s.kind == "parameter":
            want = shapes.get(s.name)
            if want is not None and [int(d) for d in t.shape] != list(want):
                raise Refusal("self.%s is %s but the problem's %s is %s" %
                              (path, [int(d) for d in t.shape], s.name, list(want)),
                              s.line)
    fwd = cls.forward
    nparams = [p for p in list(inspect.signature(fwd).parameters.values())[1:]
               if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(nparams) != len(inputs) and not any(
            p.kind == p.VAR_POSITIONAL for p in inspect.signature(fwd).parameters.values()):
        raise Refusal("%s.forward takes %d tensors but the problem's inputs are %d (%s)" %
                      (cname, len(nparams), len(inputs),
                       ", ".join(t["name"] for t in problem["inputs"])), fwd.__code__.co_firstlineno)
    recorder.launches, recorder.notes = [], []
    st.STATE["phase"] = "forward"
    result = model(*inputs)
    st.STATE["phase"] = "init"
    line = fwd.__code__.co_firstlineno
    if not recorder.launches:
        raise Refusal("%s.forward launched no Triton kernel (kernel[grid](...))" % cname, line)
    by_storage, notes, zeroed = check_outputs(result, problem, shapes, recorder.launches, line)
    notes = recorder.notes + notes
    scratch, launches = {}, []
    for l in recorder.launches:
        args = [tensor_ref(a["tensor"], l, problem, 0, by_storage, scratch) if "tensor" in a else a
                for a in l.args]
        launches.append({"kernel": l.kernel, "line": l.line,
                         "grid": [{"int": int(g), "expr": st.expr_of(g)} for g in l.grid],
                         "args": args, "constexprs": l.constexprs,
                         "options": {k: {"int": int(v), "expr": st.expr_of(v)}
                                     for k, v in l.options.items()}})
    return {"sizes": size_set["sizes"], "launches": launches, "scratch": list(scratch.values()),
            "notes": notes, "zero_outputs": zeroed}


def derive(req, ns_loader, jit_class, unwrap):
    """The answer to a wrapper_plan request: {"ok", "class", "forward_line", "sets": [...]}."""
    filename = req.get("filename", "kernel.py")
    st.STATE["filename"] = filename
    try:
        install_torch(int(req.get("num_sms", 132)))
        ns = ns_loader(req["source"], filename)
        recorder = Recorder(ns, unwrap)
        patch_launches(ns, recorder, jit_class, unwrap)
        cname, cls = model_class(ns)
        sets = [run_size_set(cls, cname, req["problem"], s, req.get("num_sms", 132), recorder)
                for s in req["size_sets"]]
        if recorder.pinned - recorder.pin:  # pinned at some size set: pinned at every one
            recorder.pin = set(recorder.pinned)
            sets = [run_size_set(cls, cname, req["problem"], s, req.get("num_sms", 132),
                                 recorder) for s in req["size_sets"]]
        return {"ok": True, "class": cname, "forward_line": cls.forward.__code__.co_firstlineno,
                "sets": sets}
    except Refusal as e:
        return {"ok": False, "refused": True, "error": str(e), "line": e.line}
    except RecursionError as e:
        return {"ok": False, "refused": True, "error": "the host wrapper recursed too deeply: %s"
                % e, "line": 0}
    except Exception as e:
        line = getattr(e, "line", 0) or 0
        for fr in reversed(traceback.extract_tb(e.__traceback__)):
            if fr.filename == filename and not line:
                line = fr.lineno or 0
        what = str(e) if type(e).__name__ == "KernelFileError" else "%s: %s" % (
            type(e).__name__, e)
        hint = ""
        if "torch" in what and ("No module" in what or "has no attribute" in what):
            hint = (" (kernrl runs the wrapper with a shape-only torch: torch, torch.nn, "
                    "torch.nn.functional, torch.nn.init and torch.cuda)")
        return {"ok": False, "refused": True, "line": line,
                "error": "the host wrapper failed while kernrl ran it on shape-only tensors: "
                         "%s%s" % (what[:2000], hint)}
