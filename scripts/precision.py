#!/usr/bin/env python3
"""Precision margins of the fp32 problems under kernrl's pass rule.

For every problem with a float32 (or complex64) output compared with `allclose`, runs the problem's
`torch:` module on inputs drawn exactly as the grader draws them (by kernrl_refdump) and compares
variants of the computation with the fp32 reference (the same module in float32, TF32 off):

  fp64       every float32 tensor promoted to float64, the result rounded to float32: what an
             exact kernel returns. Shows the reference's own rounding error.
  reordered  float32 with other summation orders: matrix products split along K into chunks of
             64 summed in reverse order, reductions (sum, mean, var, norm, softmax, layer/group/
             instance norm, cross-entropy) summed in chunks of 32, convolutions split by input
             channel or kernel row. A legitimate fp32 kernel differs from the reference like this.
  tf32       CUDA only: the reference with TF32 allowed in cuBLAS and cuDNN.
  tf32emu    operands of matrix products and convolutions rounded to TF32 (10-bit mantissa, round
             to nearest even), then float32 arithmetic: an emulation of TF32 tensor cores that also
             runs on CPU.
  bf16       every float32 tensor cast to bfloat16 (computation in bf16), the result in float32.

For each problem and variant it prints the worst ratio of error to tolerance over outputs, size
sets and trials: max(max_i |got_i - ref_i| / (atol + rtol |ref_i|), rel_l2 error / rel_l2). A ratio
above 1 fails kernrl's check (NaN or inf where the reference has none is reported as inf). Exact
outputs (booleans, integers, compare: exact) show `exact` or the number of differing elements.

Usage: scripts/precision.sh [--sizes test|bench|all] [--trials N] [--device cpu|cuda]
       [--variants fp64,reordered,...] [--filter 'L2_*'] [--refdump PATH] [--out FILE.md]
"""
import argparse
import contextlib
import fnmatch
import inspect
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import torch
import torch.nn.functional as F
import yaml
from torch.overrides import TorchFunctionMode

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
DTYPES = {
    "Float": torch.float32, "Double": torch.float64, "Half": torch.float16, "BFloat16": torch.bfloat16,
    "ComplexFloat": torch.complex64, "Long": torch.int64, "Int": torch.int32, "Short": torch.int16,
    "Char": torch.int8, "Byte": torch.uint8, "Bool": torch.bool,
}
ALL_VARIANTS = ["fp64", "reordered", "tf32", "tf32emu", "bf16"]
K_CHUNK = 64   # matrix products: K split into chunks of this many terms
R_CHUNK = 32   # reductions: chunk length


# ---------------------------------------------------------------------------------------------
# Variants as torch function modes


def _map(obj, fn):
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def _mha(op, query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
         add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training=True, key_padding_mask=None,
         need_weights=True, attn_mask=None, *rest, **kw):
    """F.multi_head_attention_forward for self-attention without masks, as separate operations
    (so that a mode sees its matrix products and softmax); NotImplemented for other uses."""
    if (bias_k is not None or bias_v is not None or add_zero_attn or key_padding_mask is not None
            or attn_mask is not None or rest or kw.get("use_separate_proj_weight")
            or not (query is key is value)):
        return NotImplemented
    L, N, E = query.shape
    hd = E // num_heads
    qkv = op(F.linear, query, in_proj_weight, in_proj_bias)
    q, k, v = qkv.chunk(3, dim=-1)
    heads = lambda t: t.contiguous().view(L, N * num_heads, hd).transpose(0, 1)
    q, k, v = heads(q), heads(k), heads(v)
    q = q * (1.0 / math.sqrt(hd))
    attn = op(torch.softmax, op(torch.bmm, q, k.transpose(1, 2)), -1)
    out = op(torch.bmm, attn, v).transpose(0, 1).contiguous().view(L * N, E)
    out = op(F.linear, out, out_proj_weight, out_proj_bias).view(L, N, E)
    return out, None


class Mode(TorchFunctionMode):
    """A variant: handle(func, args, kwargs) computes one operation; composite functions whose inner
    operations matter (multi-head attention) are decomposed so that handle sees those."""

    def op(self, func, *args, **kwargs):
        return self.handle(func, args, kwargs)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if getattr(func, "__name__", "") == "multi_head_attention_forward":
            out = _mha(self.op, *args, **kwargs)
            if out is not NotImplemented:
                return out
        return self.handle(func, args, kwargs)


class Cast(Mode):
    """Runs every operation in `target` precision: float32 tensors (arguments and results) become
    `target`, and conversions to float32 (.float(), .to(torch.float32), dtype=torch.float32) go to
    `target` instead."""

    def __init__(self, target):
        super().__init__()
        self.target = target
        self.ctarget = torch.complex128 if target == torch.float64 else torch.complex64

    def conv(self, t):
        if t.dtype == torch.float32:
            return t.to(self.target)
        if t.dtype == torch.complex64 and self.ctarget != torch.complex64:
            return t.to(self.ctarget)
        return t

    def handle(self, func, args, kwargs):
        name = getattr(func, "__name__", "")
        args = _map(args, self.conv)
        kwargs = _map(kwargs, self.conv)
        if name == "float":
            return args[0].to(self.target)
        if kwargs.get("dtype") == torch.float32:
            kwargs["dtype"] = self.target
        if name in ("to", "type") and len(args) > 1 and args[1] == torch.float32:
            args = (args[0], self.target) + tuple(args[2:])
        return _map(func(*args, **kwargs), self.conv)


def _tf32(t):
    """Rounds float32 values to TF32 (10 mantissa bits), to nearest, ties to even."""
    if t.dtype != torch.float32:
        return t
    b = t.contiguous().view(torch.int32)
    r = (b + 0xFFF + ((b >> 13) & 1)) & ~0x1FFF
    out = r.view(torch.float32)
    return torch.where(torch.isfinite(t), out, t)


MATMULS = {"matmul", "__matmul__", "__rmatmul__", "mm", "bmm", "linear", "addmm", "baddbmm", "einsum",
           "conv1d", "conv2d", "conv3d", "mv", "dot", "tensordot"}


class TF32Emu(Mode):
    def handle(self, func, args, kwargs):
        if getattr(func, "__name__", "") in MATMULS:
            args, kwargs = _map(args, _tf32), _map(kwargs, _tf32)
        return func(*args, **kwargs)


def _chunked_sum(x, dims=None, keepdim=False):
    """Sum over `dims` (all when None) in chunks of R_CHUNK, the partial sums added in reverse."""
    if dims is None:
        dims = list(range(x.dim()))
    if isinstance(dims, int):
        dims = [dims]
    dims = sorted(d % x.dim() for d in dims) if x.dim() else []
    if not dims:
        return x.clone()
    keep = [d for d in range(x.dim()) if d not in dims]
    y = x.permute(*keep, *dims).reshape(*[x.shape[d] for d in keep], -1)
    n = y.shape[-1]
    if n > R_CHUNK:
        pad = (-n) % R_CHUNK
        if pad:
            y = torch.cat([y, y.new_zeros(*y.shape[:-1], pad)], -1)
        y = y.reshape(*y.shape[:-1], -1, R_CHUNK).sum(-1).flip(-1)
    s = y.sum(-1)
    if keepdim:
        for d in dims:
            s = s.unsqueeze(d)
    return s


def _numel(x, dims):
    if dims is None:
        return x.numel()
    if isinstance(dims, int):
        dims = [dims]
    return math.prod(x.shape[d] for d in dims)


def _pair(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class Reorder(Mode):
    """float32 with other summation orders (see the module docstring)."""

    def handle(self, func, args, kwargs):
        name = getattr(func, "__name__", "")
        fn = getattr(self, "_" + name.strip("_"), None)
        if fn is not None and all(isinstance(a, torch.Tensor) and a.dtype == torch.float32
                                  for a in args[:1]):
            try:
                out = fn(func, *args, **kwargs)
                if out is not NotImplemented:
                    return out
            except TypeError:
                pass
        return func(*args, **kwargs)

    # matrix products: split the contracted dimension
    def _matmul(self, func, a, b, **kw):
        if kw or not isinstance(b, torch.Tensor) or b.dtype != torch.float32 or a.dim() == 0 or b.dim() == 0:
            return NotImplemented
        k = a.shape[-1]
        if k <= K_CHUNK:
            return func(a, b)
        parts = []
        for k0 in range(0, k, K_CHUNK):
            k1 = min(k, k0 + K_CHUNK)
            bs = b[k0:k1] if b.dim() == 1 else b[..., k0:k1, :]
            parts.append(func(a[..., k0:k1], bs))
        acc = parts[-1]
        for p in reversed(parts[:-1]):
            acc = acc + p
        return acc

    _mm = _bmm = _mv = _dot = _matmul

    def _rmatmul(self, func, a, b, **kw):
        return self._matmul(torch.matmul, b, a)

    def _linear(self, func, x, w, bias=None):
        y = self._matmul(torch.matmul, x, w.t())
        return y if bias is None else y + bias

    def _addmm(self, func, inp, a, b, beta=1, alpha=1):
        return beta * inp + alpha * self._matmul(torch.matmul, a, b)

    def _conv_generic(self, func, nd, x, w, bias=None, stride=1, padding=0, dilation=1, groups=1):
        stride, dilation = _pair(stride, nd), _pair(dilation, nd)
        if isinstance(padding, str):
            return NotImplemented
        padding = _pair(padding, nd)
        cin = x.shape[1]
        if groups == 1 and cin >= 2:  # split input channels
            h = (cin + 1) // 2
            a = func(x[:, :h], w[:, :h], None, stride, padding, dilation, 1)
            b = func(x[:, h:], w[:, h:], None, stride, padding, dilation, 1)
            y = b + a
        elif all(s == 1 for s in stride) and all(d == 1 for d in dilation) and w.shape[2] > 1:
            # split the taps of the first spatial axis: each kernel row is its own convolution
            pad = []
            for p in reversed(padding):
                pad += [p, p]
            xp = F.pad(x, pad)
            kh = w.shape[2]
            out0 = xp.shape[2] - kh + 1
            y = None
            for i in reversed(range(kh)):
                part = func(xp.narrow(2, i, out0), w.narrow(2, i, 1), None, 1, 0, 1, groups)
                y = part if y is None else y + part
        else:
            return NotImplemented
        if bias is not None:
            y = y + bias.view(1, -1, *([1] * nd))
        return y

    def _conv1d(self, func, *a, **k):
        return self._conv_generic(func, 1, *a, **k)

    def _conv2d(self, func, *a, **k):
        return self._conv_generic(func, 2, *a, **k)

    def _conv3d(self, func, *a, **k):
        return self._conv_generic(func, 3, *a, **k)

    # reductions
    def _sum(self, func, x, dim=None, keepdim=False, dtype=None):
        if dtype is not None:
            return NotImplemented
        return _chunked_sum(x, dim, keepdim)

    def _mean(self, func, x, dim=None, keepdim=False, dtype=None):
        if dtype is not None:
            return NotImplemented
        return _chunked_sum(x, dim, keepdim) / _numel(x, dim)

    def _var(self, func, x, dim=None, unbiased=True, keepdim=False, correction=None):
        corr = (1 if unbiased else 0) if correction is None else correction
        m = _chunked_sum(x, dim, True) / _numel(x, dim)
        return _chunked_sum((x - m) ** 2, dim, keepdim) / (_numel(x, dim) - corr)

    def _std(self, func, *a, **k):
        return self._var(func, *a, **k).sqrt()

    def _norm(self, func, x, p="fro", dim=None, keepdim=False, dtype=None):
        if p not in (2, "fro", None) or dtype is not None:
            return NotImplemented
        return _chunked_sum(x * x, dim, keepdim).sqrt()

    def _softmax(self, func, x, dim, dtype=None, _stacklevel=3):
        if dtype not in (None, torch.float32):
            return NotImplemented
        e = torch.exp(x - x.amax(dim, keepdim=True))
        return e / _chunked_sum(e, dim, True)

    def _log_softmax(self, func, x, dim, dtype=None, _stacklevel=3):
        if dtype not in (None, torch.float32):
            return NotImplemented
        m = x.amax(dim, keepdim=True)
        return x - m - torch.log(_chunked_sum(torch.exp(x - m), dim, True))

    def _logsumexp(self, func, x, dim, keepdim=False):
        m = x.amax(dim, keepdim=True)
        s = torch.log(_chunked_sum(torch.exp(x - m), dim, True)) + m
        return s if keepdim else s.squeeze(dim)

    def _layer_norm(self, func, x, normalized_shape, weight=None, bias=None, eps=1e-5):
        dims = list(range(x.dim() - len(normalized_shape), x.dim()))
        n = _numel(x, dims)
        m = _chunked_sum(x, dims, True) / n
        v = _chunked_sum((x - m) ** 2, dims, True) / n
        y = (x - m) / torch.sqrt(v + eps)
        if weight is not None:
            y = y * weight
        return y if bias is None else y + bias

    def _group_norm(self, func, x, num_groups, weight=None, bias=None, eps=1e-5):
        n, c = x.shape[:2]
        g = x.reshape(n, num_groups, -1)
        m = _chunked_sum(g, [2], True) / g.shape[2]
        v = _chunked_sum((g - m) ** 2, [2], True) / g.shape[2]
        y = ((g - m) / torch.sqrt(v + eps)).reshape(x.shape)
        shape = (1, c) + (1,) * (x.dim() - 2)
        if weight is not None:
            y = y * weight.view(shape)
        return y if bias is None else y + bias.view(shape)

    def _instance_norm(self, func, x, running_mean=None, running_var=None, weight=None, bias=None,
                       use_input_stats=True, momentum=0.1, eps=1e-5):
        if not use_input_stats:
            return NotImplemented
        dims = list(range(2, x.dim()))
        n = _numel(x, dims)
        m = _chunked_sum(x, dims, True) / n
        v = _chunked_sum((x - m) ** 2, dims, True) / n
        y = (x - m) / torch.sqrt(v + eps)
        shape = (1, x.shape[1]) + (1,) * (x.dim() - 2)
        if weight is not None:
            y = y * weight.view(shape)
        return y if bias is None else y + bias.view(shape)

    def _cross_entropy(self, func, x, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                       reduction="mean", label_smoothing=0.0):
        if weight is not None or reduction != "mean" or label_smoothing or target.dtype != torch.int64:
            return NotImplemented
        lse = self._logsumexp(None, x, 1)
        loss = lse - x.gather(1, target[:, None])[:, 0]
        return _chunked_sum(loss) / loss.numel()


# ---------------------------------------------------------------------------------------------
# Problems, inputs, runs


def load_bin(d, entry, device):
    with open(os.path.join(d, entry["file"]), "rb") as f:
        data = bytearray(f.read())
    dtype = DTYPES[entry["dtype"]]
    t = torch.empty(entry["shape"], dtype=dtype) if not data else \
        torch.frombuffer(data, dtype=dtype).reshape(entry["shape"]).clone()
    return t.to(device)


def fp32_problems(root, flt):
    out = []
    for level in sorted(os.listdir(root), key=lambda s: (len(s), s)):
        ldir = os.path.join(root, level)
        if not os.path.isdir(ldir):
            continue
        for name in sorted(os.listdir(ldir), key=lambda s: (int(s.split("_")[0]) if s.split("_")[0].isdigit() else 0, s)):
            path = os.path.join(ldir, name, "problem.yaml")
            if not os.path.exists(path):
                continue
            spec = yaml.safe_load(open(path))
            if not fnmatch.fnmatch(spec["id"], flt):
                continue
            default_cmp = spec.get("compare", "allclose")
            if any(o["dtype"] in ("float32", "complex64") and o.get("compare", default_cmp) == "allclose"
                   for o in spec["outputs"]):
                out.append(spec)
    return out


def tol_of(spec, out):
    t = dict(spec.get("tolerance") or {})
    t.update(out.get("tolerance") or {})
    return t.get("atol", 1e-4), t.get("rtol", 1e-4), t.get("rel_l2", 1e-2)


def ratio(got, want, atol, rtol, rel_l2):
    """Worst error / tolerance under kernrl's rule, in float64."""
    if want.is_complex():
        got, want = torch.view_as_real(got.to(want.dtype)), torch.view_as_real(want)
    g, w = got.double(), want.double()
    fin = torch.isfinite(w)
    bad = (torch.isnan(g) != torch.isnan(w)) | (torch.isinf(w) & (g != w)) | (fin & ~torch.isfinite(g))
    if bad.any():
        return math.inf
    if not fin.any():
        return 0.0
    d = (g - w).abs()[fin]
    elem = (d / (atol + rtol * w.abs()[fin])).max().item()
    ref = w[fin].norm().item()
    err = d.norm().item()
    l2 = (err / ref) / rel_l2 if ref > 0 else (0.0 if err == 0 else math.inf)
    return max(elem, l2)


@contextlib.contextmanager
def tf32(enabled):
    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


def build_model(spec, s, device):
    scope = {}
    exec(compile(spec["torch"], f"<{spec['id']} torch:>", "exec"), scope)
    model_cls = scope["Model"]
    args = {**s["sizes"], **s["scalars"]}
    sig = inspect.signature(model_cls.__init__)
    model = model_cls(**{k: v for k, v in args.items() if k in sig.parameters})
    state = {p["name"]: load_bin(s["dir"], p, "cpu") for p in s["parameters"]}
    model.load_state_dict(state, strict=True)
    return model.to(device).eval()


def run_variant(model, inputs, variant, device):
    mode = {"fp64": lambda: Cast(torch.float64), "bf16": lambda: Cast(torch.bfloat16),
            "reordered": Reorder, "tf32emu": TF32Emu}.get(variant)
    old_default = torch.get_default_dtype()
    with torch.no_grad(), tf32(variant == "tf32"):
        try:
            if variant == "fp64":  # factories (zeros, linspace, ...) in float64 as well
                torch.set_default_dtype(torch.float64)
            if mode is None:
                res = model(*inputs)
            else:
                with mode():
                    res = model(*inputs)
        finally:
            torch.set_default_dtype(old_default)
    if not isinstance(res, (tuple, list)):
        res = (res,)
    return [torch.as_tensor(r) for r in res]


def check_problem(spec, args, tmp):
    """{variant: worst ratio or note} and a note for the problem."""
    variants = [v for v in args.variants if v != "tf32" or args.device == "cuda"]
    worst = {v: 0.0 for v in variants}
    notes = {}
    default_cmp = spec.get("compare", "allclose")
    for trial in range(args.trials):
        d = os.path.join(tmp, f"{spec['id']}-{trial}")
        r = subprocess.run([args.refdump, spec["id"], d, "--sizes", args.sizes, "--seed", str(1000 + 100 * trial),
                            "--inputs-only"], capture_output=True, text=True)
        if r.returncode != 0:
            return {v: "refdump failed" for v in variants}, r.stderr.strip()
        meta = json.load(open(os.path.join(d, "meta.json")))
        for s in meta["sets"]:
            model = build_model(spec, s, args.device)
            inputs = [load_bin(s["dir"], i, args.device) for i in s["inputs"]]
            ref = run_variant(model, inputs, "fp32", args.device)
            for v in variants:
                if isinstance(worst[v], str):
                    continue
                try:
                    got = run_variant(model, inputs, v, args.device)
                except Exception as e:  # noqa: BLE001 - an unsupported op makes the variant n/a
                    worst[v] = f"n/a ({type(e).__name__})"
                    notes[v] = str(e).split("\n")[0][:120]
                    continue
                counts = {}
                for out, g, w in zip(s["outputs"], got, ref):
                    ospec = next(o for o in spec["outputs"] if o["name"] == out["name"])
                    if ospec.get("count"):
                        n = int(counts[ospec["count"]])
                        g, w = g[:n], w[:n]
                    if ospec["name"] in [o.get("count") for o in spec["outputs"]]:
                        counts[ospec["name"]] = w.flatten()[0].item()
                    if g.shape != w.shape:
                        worst[v] = math.inf
                        notes[v] = f"'{ospec['name']}' has shape {tuple(g.shape)}"
                        continue
                    exact = ospec.get("compare", default_cmp) == "exact" or not (w.is_floating_point() or w.is_complex())
                    if exact:
                        n = int((g.to(w.dtype) != w).sum())
                        if n:
                            worst[v] = math.inf
                            notes[v] = f"{n} elements of exact output '{ospec['name']}' differ"
                        continue
                    # the variant's result as the kernel would return it: rounded to the output dtype
                    worst[v] = max(worst[v], ratio(g.to(w.dtype), w, *tol_of(spec, ospec)))
    return worst, notes


def fmt(v):
    if isinstance(v, str):
        return v
    if math.isinf(v):
        return "**inf**"
    s = f"{v:.2g}" if v < 10 else f"{v:.0f}"
    return f"**{s}**" if v > 1 else s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", choices=["test", "bench", "all"], default="bench")
    ap.add_argument("--trials", type=int, default=2)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--variants", default=",".join(ALL_VARIANTS))
    ap.add_argument("--filter", default=os.environ.get("KERNRL_PROBLEM_FILTER", "*") or "*")
    ap.add_argument("--refdump", default=os.path.join(ROOT, "build", "kernrl_refdump"))
    ap.add_argument("--problems-root", default=os.path.join(ROOT, "problems"))
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in args.variants if v not in ALL_VARIANTS]
    if unknown:
        ap.error(f"unknown variants {unknown}; known: {ALL_VARIANTS}")
    if not os.path.exists(args.refdump):
        ap.error(f"{args.refdump} not found: build the kernrl_refdump target or pass --refdump")
    torch.manual_seed(0)
    if args.device == "cpu":
        torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    cols = [v for v in args.variants if v != "tf32" or args.device == "cuda"]
    dev = torch.cuda.get_device_name() if args.device == "cuda" else "CPU"
    lines = [f"Precision margins: worst error / tolerance under kernrl's rule ({args.sizes} sizes, "
             f"{args.trials} trials, {dev}, torch {torch.__version__}). Above 1 fails.", "",
             "| problem | atol / rtol / rel_l2 | " + " | ".join(cols) + " |",
             "| --- | --- | " + " | ".join("---:" for _ in cols) + " |"]
    print("\n".join(lines), flush=True)
    notes_all = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in fp32_problems(args.problems_root, args.filter):
            t0 = time.time()
            worst, notes = check_problem(spec, args, tmp)
            tols = sorted({tol_of(spec, o) for o in spec["outputs"]
                           if o["dtype"] in ("float32", "complex64")})
            tol = "; ".join(f"{a:g} / {r:g} / {l:g}" for a, r, l in tols)
            row = f"| {spec['id']} | {tol} | " + " | ".join(fmt(worst[c]) for c in cols) + " |"
            lines.append(row)
            print(row, flush=True)
            for v, n in notes.items():
                notes_all.append(f"- {spec['id']} {v}: {n}")
            print(f"<!-- {spec['id']}: {time.time() - t0:.1f} s -->", file=sys.stderr, flush=True)
    if notes_all:
        print("\nNotes:\n" + "\n".join(notes_all))
        lines += ["", "Notes:"] + notes_all
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
