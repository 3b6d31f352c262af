"""kernrl's Triton compiler helper. It runs only inside kernrl-triton's OS sandbox (src/triton):
no network, no GPU, no files but the Python installation and a private temporary directory.

Protocol (docs/protocol.md, "kernrl-triton"): with --discover it prints one JSON line about the
Triton it finds and exits. Otherwise it imports Triton, prints {"ready": true}, reads ONE request
line (JSON) on stdin, compiles, prints one answer line and exits: a pool of these processes waits
with Triton imported, so a compile does not pay for the import.
A request with "mode": "wrapper_plan" runs the whole file instead, with a shape-only torch, to
find the launches a host wrapper makes (wrapper_plan.py).

The kernel file is filtered before it runs: only imports of triton/math, functions (with their
triton decorators) and simple module-level constants are kept; any other top-level code (torch
imports, host wrappers, Model classes, `__main__` blocks) is dropped unexecuted.
"""
import ast
import base64
import json
import os
import re
import sys
import time
import traceback

MAX_AUTOTUNE_CONFIGS = 16
ALLOWED_IMPORT_ROOTS = {"triton", "math"}
TRITON_DECORATORS = {"jit", "autotune", "heuristics"}


ANSWER = sys.stdout  # where answers go; the kernel file's own output goes to stderr
COMPILER = {}  # Triton's entry points, taken before the kernel file runs
COMPILED = {}  # this request's compiled kernels, by everything that decides them
TIMING = {"compile_ms": 0.0, "compiles": 0}  # this request's calls of triton.compile


def out(obj):
    ANSWER.write(json.dumps(obj) + "\n")
    ANSWER.flush()


def keep_stdout_for_answers():
    """From here on fd 1 is stderr: whatever the kernel file prints cannot pose as an answer."""
    global ANSWER
    ANSWER = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr


class KernelFileError(Exception):
    def __init__(self, message, line=0):
        super().__init__(message)
        self.line = line


def decorator_name(d):
    """`triton.jit`, `jit`, `triton.autotune(...)` -> the last attribute name."""
    if isinstance(d, ast.Call):
        d = d.func
    if isinstance(d, ast.Attribute):
        return d.attr
    if isinstance(d, ast.Name):
        return d.id
    return ""


def simple_value(node):
    """A module-level value kept by the filter: literals, names, arithmetic, tuples/lists of those,
    and calls of `constexpr(...)` / `Config(...)` (tl.constexpr(128), triton.Config(...))."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if name not in ("constexpr", "Config"):
                return False
        elif isinstance(n, (ast.Lambda, ast.ListComp, ast.DictComp, ast.SetComp,
                            ast.GeneratorExp, ast.Await, ast.Yield, ast.YieldFrom,
                            ast.NamedExpr, ast.Subscript)):
            return False
    return True


def drop_annotations(fn):
    args = fn.args
    for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg]:
        if a is not None:
            a.annotation = None
    fn.returns = None


def kept_statement(st):
    """Whether a top-level statement of the kernel file is compiled."""
    if isinstance(st, ast.Import):
        return all(a.name.split(".")[0] in ALLOWED_IMPORT_ROOTS for a in st.names)
    if isinstance(st, ast.ImportFrom):
        return (st.module or "").split(".")[0] in ALLOWED_IMPORT_ROOTS and st.level == 0
    if isinstance(st, ast.FunctionDef):
        keep = all(decorator_name(d) in TRITON_DECORATORS for d in st.decorator_list)
        if keep and not st.decorator_list:
            drop_annotations(st)  # a host function's `x: torch.Tensor` needs no torch here
        return keep
    if isinstance(st, (ast.Assign, ast.AnnAssign)):
        targets = st.targets if isinstance(st, ast.Assign) else [st.target]
        return (st.value is not None and all(isinstance(t, ast.Name) for t in targets)
                and simple_value(st.value))
    if isinstance(st, ast.Try):  # try: from triton.language.extra import libdevice / except ...
        parts = st.body + st.orelse + st.finalbody + [x for h in st.handlers for x in h.body]
        return (all(kept_statement(x) for x in parts) and
                all(h.type is None or isinstance(h.type, (ast.Name, ast.Tuple, ast.Attribute))
                    for h in st.handlers))
    return False


def filter_module(tree):
    """The statements of the kernel file that are compiled; the rest is dropped unexecuted."""
    kept, dropped = [], []
    for st in tree.body:
        (kept if kept_statement(st) else dropped).append(st)
    tree.body = kept
    return tree, [getattr(s, "lineno", 0) for s in dropped]


def load_kernels(source, filename, whole=False):
    """The kernel file's namespace: its kernels (or, with `whole`, all of it: a wrapper plan)."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        raise KernelFileError("Python syntax error: %s" % e.msg, e.lineno or 0)
    if not whole:
        tree, _ = filter_module(tree)
    code = compile(tree, filename, "exec")
    # Triton's JIT reads a function's source through linecache: give it the file's text.
    import linecache
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    module = type(sys)("kernrl_kernels")
    module.__file__ = filename
    sys.modules["kernrl_kernels"] = module
    ns = module.__dict__
    try:
        exec(code, ns)
    except Exception as e:  # the kernel file's own failure
        raise KernelFileError("the kernel file failed while loading: %s: %s" %
                              (type(e).__name__, e), error_line(e, filename))
    return ns


def error_line(exc, filename):
    tb = traceback.extract_tb(exc.__traceback__)
    for fr in reversed(tb):
        if fr.filename == filename:
            return fr.lineno or 0
    return getattr(exc, "lineno", 0) or 0


def unwrap(obj):
    """JITFunction under Autotuner / Heuristics wrappers: (jit, autotuner or None, heuristics)."""
    autotuner, heuristics = None, []
    seen = 0
    while not isinstance(obj, COMPILER["JITFunction"]):
        seen += 1
        if seen > 8 or not hasattr(obj, "fn"):
            return None, None, []
        if hasattr(obj, "configs") and autotuner is None:
            autotuner = obj
        if hasattr(obj, "values") and isinstance(getattr(obj, "values"), dict):
            heuristics.append(obj.values)
        obj = obj.fn
    return obj, autotuner, heuristics


def param_names(fn):
    """(all parameter names, the constexpr ones)."""
    names = list(fn.arg_names)
    const = [p.name for p in fn.params if p.is_constexpr]
    return names, const


def compile_one(fn, name, args, constexprs, options, arch):
    names, const_names = param_names(fn)
    runtime = [n for n in names if n not in const_names]
    if len(args) != len(runtime):
        raise KernelFileError(
            "kernel %s takes %d non-constexpr parameters (%s) but the launch passes %d arguments"
            % (name, len(runtime), ", ".join(runtime), len(args)))
    import inspect
    missing = []
    signature, attrs, constants = {}, {}, {}
    for n in names:
        if n in const_names:
            if n in constexprs:
                constants[n] = constexprs[n]
            else:
                default = getattr(fn.params[names.index(n)], "default", inspect.Parameter.empty)
                if default is inspect.Parameter.empty:
                    missing.append(n)
                else:
                    constants[n] = default
            signature[n] = "constexpr"
            continue
        a = args[runtime.index(n)]
        signature[n] = a["type"]
        if a.get("divisible_by_16"):
            attrs[(names.index(n),)] = [["tt.divisibility", 16]]
    if missing:
        raise KernelFileError("kernel %s: no value for the constexpr parameter(s) %s: give them in "
                              "the launch's constexprs" % (name, ", ".join(missing)))
    unknown = [k for k in constexprs if k not in const_names]
    if unknown:
        raise KernelFileError("kernel %s has no tl.constexpr parameter named %s" %
                              (name, ", ".join(unknown)))
    # Kernels identical to one compiled earlier in this request (other values, same
    # specialisation) are compiled once.
    ckey = repr((id(fn), sorted(signature.items()), sorted(attrs.items()),
                 sorted(constants.items()), sorted(options.items())))
    if ckey in COMPILED:
        return dict(COMPILED[ckey], compile_key=ckey)
    src = COMPILER["ASTSource"](fn, signature, constexprs=constants, attrs=attrs)
    target = COMPILER["GPUTarget"]("cuda", arch, 32)
    t0 = time.monotonic()
    k = COMPILER["compile"](src, target=target, options=options)
    TIMING["compile_ms"] += (time.monotonic() - t0) * 1000
    TIMING["compiles"] += 1
    meta = json_metadata(k)
    ptx = k.asm.get("ptx", "")
    m = re.search(r"\.entry\s+(\w+)\s*\(([^)]*)\)", ptx)
    params = re.findall(r"\.param\s+\.(\w+)", m.group(2)) if m else []
    cubin = k.asm["cubin"]
    COMPILED[ckey] = {
        "name": meta.get("name", name),
        "cubin_b64": base64.b64encode(cubin).decode(),
        "metadata": meta,
        "ptx_params": params,
        "runtime_params": runtime,
    }
    return dict(COMPILED[ckey], compile_key=ckey)


def pinned_configs(configs, constexprs, name, line):
    """The autotune configs that agree with the constexprs the launch gives: a value given pins it
    (Triton refuses a launch that sets an autotuned value; a host wrapper's plan pins the config its
    grid was derived for)."""
    kept = [c for c in configs if all(constexprs.get(k, v) == v for k, v in c.kwargs.items())]
    if not kept:
        raise KernelFileError("kernel %s: no autotune config has the constexpr values the launch "
                              "gives (%s)" % (name, ", ".join("%s=%r" % kv for kv in
                                                               sorted(constexprs.items()))), line)
    return kept


def heuristic_values(heuristics, arg_values):
    values = {}
    for h in heuristics:
        for k, f in h.items():
            v = f(dict(arg_values, **values))
            values[k] = v if isinstance(v, (bool, int, float)) else int(v)
    return values


def compile_request(req, ns):
    """Compiles every kernel of the request: one list of variants per kernel (autotune configs)."""
    results = []
    for kreq in req["kernels"]:
        name = kreq["kernel"]
        obj = ns.get(name)
        if obj is None:
            raise KernelFileError("the launch block names kernel %s, which is not a function of "
                                  "this file" % name, kreq.get("line", 0))
        fn, autotuner, heuristics = unwrap(obj)
        if fn is None:
            raise KernelFileError("%s is not a @triton.jit function" % name, kreq.get("line", 0))
        names, const_names = param_names(fn)
        constexprs = dict(kreq.get("constexprs", {}))
        base = {k: v for k, v in kreq.get("options", {}).items()}
        runtime = [n for n in names if n not in const_names]
        arg_values = {}
        for n, a in zip(runtime, kreq["args"]):
            arg_values[n] = a.get("value")
        configs = [None]
        if autotuner is not None:
            configs = list(autotuner.configs)
            if len(configs) > MAX_AUTOTUNE_CONFIGS:
                raise KernelFileError("kernel %s has %d autotune configs; kernrl takes at most %d" %
                                      (name, len(configs), MAX_AUTOTUNE_CONFIGS), kreq.get("line", 0))
            configs = pinned_configs(configs, constexprs, name, kreq.get("line", 0))
        variants, failed = [], []
        for cfg in configs:
            cx = dict(constexprs)
            opts = dict(base)
            if cfg is not None:
                cx.update(cfg.kwargs)
                for key in ("num_warps", "num_stages", "num_ctas"):
                    v = getattr(cfg, key, None)
                    if v is not None:
                        opts[key] = v
            if heuristics:
                try:
                    cx.update(heuristic_values(heuristics, dict(arg_values, **cx)))
                except Exception as e:
                    raise KernelFileError("a @triton.heuristics function of %s failed: %s: %s" %
                                          (name, type(e).__name__, e), kreq.get("line", 0))
            try:
                v = compile_one(fn, name, kreq["args"], cx, opts, req["arch"])
            except Exception as e:
                # An autotune config that does not compile is left out (Triton's autotuner
                # skips a config that runs out of resources); the kernel fails only when none
                # compiles.
                if cfg is None or isinstance(e, KernelFileError):
                    raise
                failed.append(e)
                variants.append({"error": ("%s: %s" % (type(e).__name__, e))[:500],
                                 "compile_key": "failed-%d" % len(variants),
                                 "config": {"constexprs": cx, "options": opts}})
                continue
            v["config"] = {"constexprs": {k: cx[k] for k in cx}, "options": opts}
            variants.append(v)
        if failed and len(failed) == len(variants):
            raise failed[0]
        keys = [v.pop("compile_key") for v in variants]
        same = [i for i, r in enumerate(results) if r.get("compile_keys") == keys]
        if same:  # the same kernels as an earlier request (other values, same specialisation)
            results.append({"key": kreq["key"], "same_as": same[0]})
        else:
            results.append({"key": kreq["key"], "variants": variants, "compile_keys": keys})
    for r in results:
        r.pop("compile_keys", None)
    return results


def load_beside(name):
    """A module installed beside this script, by its path: the sandbox lets Python read the file
    but not list the folder, so the import system's search would not find it."""
    import importlib.util
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def json_metadata(compiled):
    """A compiled kernel's metadata as JSON values (what JSON cannot hold as its string)."""
    md = compiled.metadata
    md = md._asdict() if hasattr(md, "_asdict") else dict(md)
    meta = {}
    for key, v in md.items():
        try:
            json.dumps(v)
            meta[key] = v
        except TypeError:
            meta[key] = str(v)
    return meta


def load_wrapper_modules():
    """wrapper_plan.py and its shape-only torch, loaded before any request (and any confinement
    beyond the sandbox's) as Triton is."""
    for name in ("shape_torch", "shape_nn", "wrapper_plan"):
        if name not in sys.modules:
            load_beside(name)
    return sys.modules["wrapper_plan"]


def wrapper_plan_answer(req):
    """The launches of a host wrapper, found by running it on shape-only tensors."""
    return load_wrapper_modules().derive(req, lambda src, fn: load_kernels(src, fn, whole=True),
                                         COMPILER["JITFunction"], unwrap)


def discover():
    info = {"python": sys.version.split()[0], "executable": sys.executable}
    try:
        import triton
        info["triton"] = triton.__version__
        tdir = os.path.dirname(triton.__file__)
        info["triton_dir"] = tdir
        for cand in ("backends/nvidia/bin/ptxas", "third_party/cuda/bin/ptxas"):
            p = os.path.join(tdir, cand)
            if os.path.isfile(p):
                info["ptxas"] = p
                break
    except Exception as e:
        info["error"] = "%s: %s" % (type(e).__name__, e)
    out(info)


def import_triton():
    """Imports Triton and takes its entry points (before any kernel file runs); the ready line."""
    t0 = time.monotonic()
    import triton  # noqa: F401  (the warm import)
    import triton.compiler  # noqa: F401
    import triton.language  # noqa: F401
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    COMPILER.update(compile=triton.compile, ASTSource=ASTSource, GPUTarget=GPUTarget,
                    JITFunction=triton.runtime.JITFunction, version=triton.__version__)
    try:  # before any kernel file runs and before a forked compile confines itself further
        load_wrapper_modules()
    except Exception:  # missing modules fail a wrapper request only, when it comes
        pass
    return {"ready": True, "triton": triton.__version__,
            "import_ms": round((time.monotonic() - t0) * 1000, 1)}


def answer(line):
    """The answer to one request line."""
    try:
        t0 = time.monotonic()
        req = json.loads(line)
        if req.get("mode") == "wrapper_plan":  # launches from a host wrapper (wrapper_plan.py)
            return wrapper_plan_answer(req)
        ns = load_kernels(req["source"], req.get("filename", "kernel.py"))
        load_ms = (time.monotonic() - t0) * 1000
        kernels = compile_request(req, ns)
        return {"ok": True, "triton": COMPILER["version"], "kernels": kernels,
                "timing": {"load_ms": round(load_ms, 1),
                           "compile_ms": round(TIMING["compile_ms"], 1),
                           "compiles": TIMING["compiles"]}}
    except KernelFileError as e:
        return {"ok": False, "error": str(e), "line": e.line}
    except Exception as e:
        msg = "%s: %s" % (type(e).__name__, e)
        return {"ok": False, "error": msg[:4000], "line": error_line(e, "kernel.py"),
                "log": traceback.format_exc()[-8000:]}


def main():
    if "--discover" in sys.argv:
        discover()
        return 0
    try:
        ready = import_triton()
    except Exception as e:
        out({"ok": False, "error": "cannot import triton: %s: %s" % (type(e).__name__, e)})
        return 1
    out(ready)
    keep_stdout_for_answers()
    line = sys.stdin.readline()
    if line:
        out(answer(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
