"""Reading a KernelBench problem file: its size constants, and the module run with other values.

A KernelBench problem (KernelBench/level<N>/<number>_<Name>.py) defines `Model`, `get_inputs()`,
`get_init_inputs()` and module-level constants (`batch_size = 128`, `input_shape = (4096,)`,
`height = width = 128`). The constants that are integer literals are the problem's sizes: the
suite builder runs the file again with other values for them (ast rewrite, then exec), so that
everything derived from them (`bias_shape = (out_channels, 1, 1)`) follows.
"""

import ast
import contextlib
import random

import torch

KERNELBENCH_SEED = 42  # KernelBench's eval seeds inputs and weights with seed_num=42


class ProblemError(Exception):
    """A problem that cannot be converted; the message is the reason the suite lists."""


_FOLD = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
         ast.FloorDiv: lambda a, b: a // b if b else None, ast.Pow: lambda a, b: a**b if 0 <= b < 64 else None,
         ast.LShift: lambda a, b: a << b if 0 <= b < 64 else None}


def _int_value(node):
    """The value of an integer literal or of arithmetic on integer literals (`2048 * 2`), else None."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _int_value(node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLD:
        a, b = _int_value(node.left), _int_value(node.right)
        return None if a is None or b is None else _FOLD[type(node.op)](a, b)
    return None


def size_constants(tree):
    """The integer constants of top-level assignments, by size name, in source order.

    `n = 5` and `n = 2048 * 2` are `n`; `height = width = 128` is `height` (and `width` reads the
    same value); `input_shape = (4096, 7)` is `input_shape_0`, `input_shape_1`. Returns
    (names -> value, names -> (the node holding it, the field or (field, index)))."""
    values, places = {}, {}

    def add(name, node, holder, key):
        v = _int_value(node)
        if v is not None and v < 0:
            return  # `dim = -1`: an index, not a size (kernrl's sizes are 0 to 2^40)
        if v is not None:
            values[name], places[name] = v, (holder, key)
            return
        seq = node
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult) and isinstance(node.left, (ast.List, ast.Tuple)):
            seq = node.left  # [1024] * 16: the element is a size (the count is not: it changes the layers)
        if isinstance(seq, (ast.Tuple, ast.List)):
            for i, elt in enumerate(seq.elts):
                if (_int_value(elt) or 0) > 0:
                    values[f"{name}_{i}"], places[f"{name}_{i}"] = _int_value(elt), (seq, i)

    for stmt in tree.body:
        if not isinstance(stmt, ast.Assign):
            continue
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            add(target.id, stmt.value, stmt, "value")
        elif isinstance(target, ast.Tuple) and isinstance(stmt.value, ast.Tuple) and len(target.elts) == len(stmt.value.elts):
            # depth, height, width = 16, 32, 32
            for i, (t, v) in enumerate(zip(target.elts, stmt.value.elts)):
                if isinstance(t, ast.Name) and (_int_value(v) or 0) > 0:
                    values[t.id], places[t.id] = _int_value(v), (stmt.value, i)
    return values, places


def _get(place):
    node, key = place
    return node.elts[key] if isinstance(key, int) else getattr(node, key)


def _put(place, new):
    node, key = place
    if isinstance(key, int):
        node.elts[key] = new
    else:
        setattr(node, key, new)


def group_sizes(tree, sizes):
    """Pairs (whole, heads) of size constants where the module splits an embedding into heads:
    `assert n_embd % n_head == 0` or `n_embd // self.n_head` (a divisor named like a head count:
    n_head, num_heads, nhead, heads), `nn.MultiheadAttention(embed_dim, num_heads)`,
    `nn.TransformerEncoderLayer(d_model, nhead)` (positional or keyword arguments). __init__'s
    parameters are the constants `get_init_inputs()` passes at their place, and `self.x = param`
    follows them."""
    init_args = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == "get_init_inputs":
            for r in ast.walk(stmt):
                if isinstance(r, ast.Return) and isinstance(r.value, (ast.List, ast.Tuple)):
                    init_args = [e.id if isinstance(e, ast.Name) else None for e in r.value.elts]
    model = next((s for s in tree.body if isinstance(s, ast.ClassDef) and s.name == "Model"), None)
    if model is None:
        return []
    init = next((f for f in model.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
    names = {}  # a name in the module's code -> the size constant it is
    if init is not None:
        for param, arg in zip([a.arg for a in init.args.args[1:]], init_args):
            if arg in sizes:
                names[param] = arg
        for st in ast.walk(init):
            if (isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Attribute)
                    and isinstance(st.value, ast.Name) and st.value.id in names):
                names["self." + st.targets[0].attr] = names[st.value.id]

    def size_of(node):
        if isinstance(node, ast.Name):
            return names.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            return names.get("self." + node.attr)
        return None

    def argument(call, position, keyword):
        for k in call.keywords:
            if k.arg == keyword:
                return k.value
        return call.args[position] if len(call.args) > position else None

    layers = {"MultiheadAttention": ("embed_dim", "num_heads"), "TransformerEncoderLayer": ("d_model", "nhead"),
              "TransformerDecoderLayer": ("d_model", "nhead"), "Transformer": ("d_model", "nhead")}
    pairs = []
    for node in ast.walk(model):
        whole = heads = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mod, ast.FloorDiv)):
            whole, heads = size_of(node.left), size_of(node.right)
            if heads is not None and "head" not in heads.lower():
                whole = heads = None
        elif isinstance(node, ast.Call):
            f = node.func
            fname = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
            if fname in layers:
                a, b = (argument(node, i, k) for i, k in enumerate(layers[fname]))
                whole, heads = (size_of(a) if a is not None else None), (size_of(b) if b is not None else None)
        if whole and heads and whole != heads and (whole, heads) not in pairs:
            pairs.append((whole, heads))
    return [(w, h) for w, h in pairs if sizes.get(h, 0) >= 2 and sizes[w] % sizes[h] == 0]


class Source:
    """One problem file, parsed once; `load(sizes)` runs it with some constants replaced."""

    def __init__(self, path):
        self.path = path
        self.text = path.read_text()
        try:
            self.tree = ast.parse(self.text, str(path))
        except SyntaxError as e:
            raise ProblemError(f"{path.name}:{e.lineno}: does not parse: {e.msg}") from None
        self.sizes, self._places = size_constants(self.tree)
        self.groups = group_sizes(self.tree, self.sizes)
        defined = {
            getattr(s, "name", None) for s in self.tree.body if isinstance(s, (ast.ClassDef, ast.FunctionDef))
        }
        for need in ("Model", "get_inputs", "get_init_inputs"):
            if need not in defined:
                raise ProblemError(f"{path.name}: defines no {need}")
        self.docstring = ""
        for s in self.tree.body:
            if isinstance(s, ast.ClassDef) and s.name == "Model":
                # The class's docstring, else __init__'s or forward's (KernelBench uses all three).
                methods = [f for f in s.body if isinstance(f, ast.FunctionDef) and f.name in ("__init__", "forward")]
                docs = [ast.get_docstring(n) for n in [s] + methods]
                self.docstring = next((d for d in docs if d), "")

    def load(self, sizes=None):
        """The file's namespace, run with `sizes` (a subset of self.sizes) in place of its literals."""
        old = {}
        for name, v in (sizes or {}).items():
            place = self._places[name]
            old[name] = _get(place)
            _put(place, ast.copy_location(ast.Constant(v), old[name]))
        try:
            code = compile(self.tree, str(self.path), "exec")
        finally:
            for name, node in old.items():
                _put(self._places[name], node)
        ns = {"__name__": "kernelbench_problem", "__file__": str(self.path)}
        exec(code, ns)  # noqa: S102 - KernelBench's own reference problem, trusted benchmark code
        return ns


def seed_all(seed=KERNELBENCH_SEED):
    """KernelBench's set_seed (torch's generators), plus Python's for problems that use random."""
    torch.manual_seed(seed)
    random.seed(seed)


def kernelbench_model(ns):
    """The module exactly as KernelBench's eval_kernel_against_ref builds it: seed,
    get_init_inputs(), seed again, Model(*init) on the CPU, no grad, left in training mode."""
    seed_all()
    init = list(ns["get_init_inputs"]())
    with torch.no_grad():
        seed_all()
        model = ns["Model"](*init)
    return model, init


def build_model(ns):
    """The reference module: KernelBench's (kernelbench_model), in training mode as KernelBench
    runs it (BatchNorm normalises with the batch's statistics). A training-mode BatchNorm also
    updates its running statistics on every call, which changes none of its outputs; here it
    does not (track_running_stats off, the same computation), so that the running_mean and
    running_var given to kernels stay the values a freshly built ModelNew holds."""
    model, init = kernelbench_model(ns)
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.track_running_stats = False
    return model, init


_RNG = ("rand", "randn", "randint", "rand_like", "randn_like", "randint_like", "zeros", "ones",
        "empty", "full", "arange", "tensor", "randperm", "eye", "linspace")


@contextlib.contextmanager
def recording_factories(device=None):
    """Records what each tensor factory torch.<f>(...) returned, keyed by id(tensor), so that a
    get_inputs() element that is a factory's result unchanged can be drawn natively; with
    `device` (e.g. "meta") every factory allocates there instead."""
    made = {}
    saved = {}

    def wrap(fname, fn):
        def f(*args, **kwargs):
            if device is not None:
                kwargs["device"] = device
            t = fn(*args, **kwargs)
            if isinstance(t, torch.Tensor):
                made[id(t)] = (fname, args, {k: v for k, v in kwargs.items() if k != "device"}, t)
            return t

        return f

    for fname in _RNG:
        if hasattr(torch, fname):
            saved[fname] = getattr(torch, fname)
            setattr(torch, fname, wrap(fname, saved[fname]))
    try:
        yield made
    finally:
        for fname, fn in saved.items():
            setattr(torch, fname, fn)


def native_init(entry):
    """kernrl's init for a factory call, or None where kernrl has no equivalent draw."""
    fname, args, kwargs, t = entry
    if kwargs.get("generator") is not None:
        return None
    if fname == "rand" and t.is_floating_point():
        return {"uniform": {"low": 0, "high": 1}}
    if fname == "randn" and t.is_floating_point():
        return {"normal": {"mean": 0, "std": 1}}
    if fname == "randint":
        nums = [a for a in args if isinstance(a, int)]
        if len(nums) == 1 and not kwargs.get("low"):
            low, high = 0, nums[0]
        elif len(nums) >= 2 and isinstance(args[1], int):
            low, high = nums[0], nums[1]
        else:
            return None
        return {"randint": {"low": low, "high": high}}
    return None
