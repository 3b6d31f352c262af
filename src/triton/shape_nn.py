"""The modules of the shape-only stand-in torch (its tensors are shape_torch.py's): `torch` itself
(allocations, dtypes, `torch.cuda`), and `torch.nn`: Module, Parameter, the layers whose parameters
answers use (Linear, ConvNd, ConvTransposeNd, norms, Embedding), containers, `nn.functional` and
`nn.init`. Runs only inside kernrl-triton's sandbox (wrapper_plan.py).
"""
import types

import shape_torch as st
from shape_torch import (ALIASES, DTYPES, STATE, WRITE_KERNELS, Size, Storage, SymInt, Tensor,
                         alloc, answer_line, device, dtype, in_forward, product, refuse,
                         shape_args)


def Parameter(data=None, requires_grad=True):
    """Marks a tensor as a parameter: it is named by its module path when the module is walked."""
    if data is None:
        data = alloc("empty", (), st.DTYPES["float32"])
    data._param = True
    return data


class Module:
    def __init__(self, *args, **kwargs):
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def _dicts(self):
        if "_parameters" not in self.__dict__:
            Module.__init__(self)
        return self._parameters, self._buffers, self._modules

    def __setattr__(self, name, value):
        params, buffers, modules = self._dicts()
        for d in (params, buffers, modules):
            d.pop(name, None)
        if isinstance(value, Tensor) and value._param:
            params[name] = value
        elif isinstance(value, Module):
            modules[name] = value
        elif isinstance(value, Tensor) and name in buffers:
            buffers[name] = value
        object.__setattr__(self, name, value)

    def register_buffer(self, name, tensor, persistent=True):
        self._dicts()[1][name] = tensor
        object.__setattr__(self, name, tensor)

    def register_parameter(self, name, param):
        if param is not None:
            param._param = True
            self._dicts()[0][name] = param
        object.__setattr__(self, name, param)

    def add_module(self, name, module):
        setattr(self, name, module)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        refuse("forward calls nn.%s, a torch operation: %s" % (type(self).__name__,
                                                               st.WRITE_KERNELS))

    def named_tensors(self, prefix=""):
        """(module path, tensor, "parameter" | "buffer") of this module and its submodules."""
        params, buffers, modules = self._dicts()
        for n, t in params.items():
            if t is not None:
                yield prefix + n, t, "parameter"
        for n, t in buffers.items():
            if t is not None:
                yield prefix + n, t, "buffer"
        for n, m in modules.items():
            if m is not None:
                yield from m.named_tensors(prefix + n + ".")

    def named_parameters(self, prefix="", recurse=True):
        return [(n, t) for n, t, k in self.named_tensors(prefix) if k == "parameter"]

    def parameters(self, recurse=True):
        return [t for _, t in self.named_parameters()]

    def buffers(self, recurse=True):
        return [t for _, t, k in self.named_tensors() if k == "buffer"]

    def children(self):
        return list(self._dicts()[2].values())

    def modules(self):
        out = [self]
        for m in self.children():
            out += m.modules()
        return out

    def _self(self, *a, **k):
        return self

    to = cuda = eval = train = half = float = requires_grad_ = _self

    def state_dict(self, *a, **k):
        return {n: t for n, t, _ in self.named_tensors()}

    def load_state_dict(self, *a, **k):
        return None

    def apply(self, fn):
        for m in self.modules():
            fn(m)
        return self


def _param(*shape, dtype=None):
    return Parameter(alloc("empty", tuple(shape), dtype or st.DTYPES["float32"]))


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = _param(out_features, in_features, dtype=dtype)
        self.bias = _param(out_features, dtype=dtype) if bias else None


def _conv(n, transposed):
    class Conv(Module):
        def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                     *args, groups=1, bias=True, dilation=1, dtype=None, **kwargs):
            super().__init__()
            ks = _tuple(kernel_size, n)
            self.in_channels, self.out_channels, self.kernel_size = in_channels, out_channels, ks
            self.stride, self.padding, self.dilation = (_tuple(stride, n), _tuple(padding, n),
                                                        _tuple(dilation, n))
            self.groups = groups
            w = (in_channels, out_channels // groups) if transposed else \
                (out_channels, in_channels // groups)
            self.weight = _param(*(w + ks), dtype=dtype)
            self.bias = _param(out_channels, dtype=dtype) if bias else None
    Conv.__name__ = ("ConvTranspose%dd" if transposed else "Conv%dd") % n
    return Conv


Conv1d, Conv2d, Conv3d = _conv(1, False), _conv(2, False), _conv(3, False)
ConvTranspose1d, ConvTranspose2d, ConvTranspose3d = _conv(1, True), _conv(2, True), _conv(3, True)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, **kw):
        super().__init__()
        shape = _tuple(normalized_shape, 1)
        self.normalized_shape, self.eps = shape, eps
        self.weight = _param(*shape) if elementwise_affine else None
        self.bias = _param(*shape) if elementwise_affine and bias else None


class GroupNorm(Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, **kw):
        super().__init__()
        self.num_groups, self.num_channels, self.eps = num_groups, num_channels, eps
        self.weight = _param(num_channels) if affine else None
        self.bias = _param(num_channels) if affine else None


def _batchnorm(n):
    class BatchNorm(Module):
        def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                     track_running_stats=True, **kw):
            super().__init__()
            self.num_features, self.eps = num_features, eps
            self.weight = _param(num_features) if affine else None
            self.bias = _param(num_features) if affine else None
            if track_running_stats:
                f32 = st.DTYPES["float32"]
                self.register_buffer("running_mean", alloc("empty", (num_features,), f32))
                self.register_buffer("running_var", alloc("empty", (num_features,), f32))
                self.register_buffer("num_batches_tracked",
                                     alloc("empty", (), st.DTYPES["int64"]))
    BatchNorm.__name__ = "BatchNorm%dd" % n
    return BatchNorm


BatchNorm1d, BatchNorm2d, BatchNorm3d = _batchnorm(1), _batchnorm(2), _batchnorm(3)


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, *a, **kw):
        super().__init__()
        self.weight = _param(num_embeddings, embedding_dim)


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        for m in modules or []:
            self.append(m)

    def append(self, m):
        setattr(self, str(len(self._modules)), m)
        return self

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)

    def __getitem__(self, i):
        return list(self._modules.values())[i]


class Sequential(ModuleList):
    def __init__(self, *modules):
        super().__init__(modules)


class ParameterList(Module):
    def __init__(self, values=None):
        super().__init__()
        for i, p in enumerate(values or []):
            self.register_parameter(str(i), Parameter(p))

    def __getitem__(self, i):
        return list(self._parameters.values())[i]

    def __iter__(self):
        return iter(self._parameters.values())

    def __len__(self):
        return len(self._parameters)


class _Layer(Module):
    """A layer with no parameters (ReLU, Dropout, ...): calling it in forward is refused."""


def _init_fn(*args, **kwargs):
    return args[0] if args else None


def make_nn():
    nn = types.ModuleType("torch.nn")
    for name, obj in list(globals().items()):
        if isinstance(obj, type) and issubclass(obj, Module) and not name.startswith("_"):
            setattr(nn, name, obj)
    nn.Module, nn.Parameter = Module, Parameter

    def layer(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (_Layer,), {})
    nn.__getattr__ = layer
    functional = types.ModuleType("torch.nn.functional")
    functional.__getattr__ = _refuse_attr("nn.functional.")
    init = types.ModuleType("torch.nn.init")
    init.__getattr__ = lambda name: _init_fn
    nn.functional, nn.init = functional, init
    return nn


_ = SymInt


# ---------------------------------------------------------------------------------------------
# torch functions


def _dtype_kw(kw, default=None):
    d = kw.get("dtype")
    return d if isinstance(d, dtype) else default or DTYPES["float32"]


def _like(kind, fill=None):
    def f(t, *a, dtype=None, **kw):
        if kind == "full":
            return alloc("full", t.shape, dtype or t.dtype, a[0] if a else kw.get("fill_value"))
        return alloc(kind, t.shape, dtype or t.dtype, fill)
    return f


def _factory(kind, fill=None):
    def f(*size, **kw):
        return alloc(kind, shape_args(size), _dtype_kw(kw), fill)
    return f


def full(size, fill_value, **kw):
    return alloc("full", shape_args((size,)), _dtype_kw(kw), fill_value)


def _random(*args, **kw):
    size = kw.get("size")
    if size is None:
        size = args[-1] if args and isinstance(args[-1], (tuple, list, Size)) else args
    default = DTYPES["int64"] if any(isinstance(a, (tuple, list)) for a in args) else None
    return alloc("random", shape_args(tuple(size)), _dtype_kw(kw, default))


def tensor(data, dtype=None, **kw):
    """torch.tensor / as_tensor: a tensor of values, made by torch (never a kernel's argument)."""
    shape, d = [], data
    while isinstance(d, (list, tuple)):
        shape.append(len(d))
        d = d[0] if d else 0
    if isinstance(data, Tensor):
        shape = list(data.shape)
    default = DTYPES["int64"] if isinstance(d, int) and not isinstance(d, bool) else None
    dt = dtype if isinstance(dtype, dtype_class()) else default or DTYPES["float32"]
    shape = tuple(SymInt(v) for v in shape)
    return Tensor(Storage("computed", product(shape), dt, answer_line()), shape, dt)


def dtype_class():
    return dtype


def _torch_op(name):
    def op(*args, **kwargs):
        if in_forward():
            refuse("forward computes with torch (torch.%s): %s" % (name, WRITE_KERNELS))
        for a in args:
            if isinstance(a, Tensor):
                return Tensor(Storage("computed", a.numel(), a.dtype, answer_line()), a.shape,
                              a.dtype)
        return None
    return op


class _NoGrad:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def __call__(self, fn):
        return fn


class _DeviceProperties:
    def __init__(self):
        self.multi_processor_count = SymInt(STATE["num_sms"], "num_sms")
        self.name = "kernrl grading GPU"


def _refuse_attr(owner):
    def getattr_(name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _torch_op(owner + name)
    return getattr_


def _cuda_module():
    cuda = types.ModuleType("torch.cuda")
    cuda.is_available = lambda: True
    cuda.device_count = lambda: 1
    cuda.current_device = lambda: 0
    cuda.synchronize = lambda *a, **k: None
    cuda.get_device_properties = lambda *a, **k: _DeviceProperties()
    cuda.get_device_capability = lambda *a, **k: (9, 0)
    cuda.set_device = lambda *a, **k: None
    cuda.manual_seed = cuda.manual_seed_all = lambda *a, **k: None
    cuda.current_stream = lambda *a, **k: None
    cuda.__getattr__ = _refuse_attr("cuda.")
    return cuda


def make_torch(nn_module):
    """The stand-in `torch` module (with `nn`, `nn.functional`, `nn.init`, `cuda`)."""
    torch = types.ModuleType("torch")
    torch.__version__ = "0.0+kernrl-shape"
    torch.Tensor = Tensor
    torch.Size = Size
    torch.dtype = dtype
    torch.device = device
    for n, d in DTYPES.items():
        setattr(torch, n, d)
    for a, n in ALIASES.items():
        setattr(torch, a, DTYPES[n])
    torch.empty = _factory("empty")
    torch.zeros = _factory("zeros")
    torch.ones = _factory("full", 1)
    torch.full = full
    torch.empty_like = _like("empty")
    torch.zeros_like = _like("zeros")
    torch.ones_like = _like("full", 1)
    torch.full_like = _like("full")
    torch.randn = torch.rand = torch.randint = _random
    torch.randn_like = torch.rand_like = _like("random")
    torch.tensor = torch.as_tensor = tensor
    torch.manual_seed = lambda *a, **k: None
    torch.no_grad = torch.inference_mode = lambda *a, **k: _NoGrad()
    torch.is_tensor = lambda t: isinstance(t, Tensor)
    torch.cuda = _cuda_module()
    torch.nn = nn_module
    torch.__getattr__ = _refuse_attr("")
    return torch
