"""A shape-only stand-in for `torch`, for kernrl's wrapper plans (wrapper_plan.py).

It runs only inside kernrl-triton's OS sandbox, in place of torch, while a Python answer's
`ModelNew.__init__` and `forward` run to show which Triton kernels they launch. Its tensors have a
shape, strides, a dtype and a storage (an input, a parameter, an allocation), never values: what
needs values (torch operations in forward, `.item()`, a tensor in an `if`) is refused with the
answer's line and the reason (`Refusal`).

Integers derived from sizes are `SymInt`s: ints that also carry the expression over the problem's
sizes they were computed from (`cdiv(batch_size * dim, 1024)`), so that the launch plan can be
written with expressions.
"""
import sys
import types

STATE = {"filename": "kernel.py", "phase": "init", "num_sms": 132}


class Refusal(Exception):
    def __init__(self, message, line=0):
        super().__init__(message)
        self.line = line


def answer_line():
    """The line of the answer file that is running (the innermost frame of that file)."""
    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename == STATE["filename"]:
            return f.f_lineno
        f = f.f_back
    return 0


def refuse(message):
    raise Refusal(message, answer_line())


WRITE_KERNELS = ("kernrl runs only the Triton kernels that forward launches, so each step of forward "
                 "must be a kernel launch: write a Triton kernel for it")


def in_forward():
    return STATE["phase"] == "forward"


# ---------------------------------------------------------------------------------------------
# Integers with expressions


PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2}


def expr_of(v):
    return v.expr if isinstance(v, SymInt) else str(int(v))


def _prec(v):
    if isinstance(v, SymInt):
        return v.prec
    return 3 if int(v) >= 0 else 0


def _operand(v, op, right):
    """v's expression as an operand of `op`, in parentheses where the order needs them."""
    p, q = PRECEDENCE[op], _prec(v)
    top = v.top if isinstance(v, SymInt) else None
    needs = q < p or (right and q == p and not (op == "+" or (op == "*" and top == "*")))
    return "(" + expr_of(v) + ")" if needs else expr_of(v)


class SymInt(int):
    def __new__(cls, value, expr=None, prec=3, top=None):
        o = int.__new__(cls, value)
        o.expr = expr if expr is not None else str(int(value))
        o.prec = prec if expr is not None or int(value) >= 0 else 0
        o.top = top
        return o

    def _op(self, other, op, value, swap=False):
        if not isinstance(other, int) or isinstance(other, bool):
            return NotImplemented
        a, b = (other, self) if swap else (self, other)
        # x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1: x itself
        for keep, drop, ops in ((a, b, "*/+-"), (b, a, "*+")):
            if expr_of(drop) == ("1" if op in "*/" else "0") and op in ops:
                return SymInt(value, expr_of(keep), _prec(keep),
                              keep.top if isinstance(keep, SymInt) else None)
        return SymInt(value, "%s %s %s" % (_operand(a, op, False), op, _operand(b, op, True)),
                      PRECEDENCE[op], op)

    def __add__(self, o):
        return self._op(o, "+", int(self) + int(o)) if isinstance(o, int) else NotImplemented

    def __radd__(self, o):
        return self._op(o, "+", int(o) + int(self), True) if isinstance(o, int) else NotImplemented

    def __sub__(self, o):
        return self._op(o, "-", int(self) - int(o)) if isinstance(o, int) else NotImplemented

    def __rsub__(self, o):
        return self._op(o, "-", int(o) - int(self), True) if isinstance(o, int) else NotImplemented

    def __mul__(self, o):
        return self._op(o, "*", int(self) * int(o)) if isinstance(o, int) else NotImplemented

    def __rmul__(self, o):
        return self._op(o, "*", int(o) * int(self), True) if isinstance(o, int) else NotImplemented

    def __floordiv__(self, o):
        return self._op(o, "/", int(self) // int(o)) if isinstance(o, int) else NotImplemented

    def __rfloordiv__(self, o):
        return self._op(o, "/", int(o) // int(self), True) if isinstance(o, int) else NotImplemented

    def __mod__(self, o):
        return self._op(o, "%", int(self) % int(o)) if isinstance(o, int) else NotImplemented

    def __rmod__(self, o):
        return self._op(o, "%", int(o) % int(self), True) if isinstance(o, int) else NotImplemented

    def __neg__(self):
        return SymInt(-int(self), "-(" + self.expr + ")", 0)

    def __pos__(self):
        return self

    def __hash__(self):
        return int.__hash__(self)


def cdiv(a, b):
    """triton.cdiv, keeping the expression."""
    value = (int(a) + int(b) - 1) // int(b)
    if isinstance(a, SymInt) or isinstance(b, SymInt):
        return SymInt(value, "cdiv(%s, %s)" % (expr_of(a), expr_of(b)))
    return value


def product(dims):
    p = SymInt(1, "1")
    first = True
    for d in dims:
        p = d if first else p * d
        first = False
    return p if not first else SymInt(1, "1")


class PtrInt(int):
    """What data_ptr() gives: a kernel may not take it as an integer (kernrl passes tensors)."""


# ---------------------------------------------------------------------------------------------
# dtypes and devices


class dtype:
    def __init__(self, name, itemsize, is_floating_point):
        self.name, self.itemsize, self.is_floating_point = name, itemsize, is_floating_point
        self.is_complex = name.startswith("complex")
        self.is_signed = not name.startswith("uint") and name != "bool"

    def __repr__(self):
        return "torch." + self.name


DTYPES = {n: dtype(n, s, f) for n, s, f in [
    ("float32", 4, True), ("float64", 8, True), ("float16", 2, True), ("bfloat16", 2, True),
    ("int8", 1, False), ("uint8", 1, False), ("int16", 2, False), ("int32", 4, False),
    ("uint32", 4, False), ("int64", 8, False), ("bool", 1, False), ("complex64", 8, False)]}
ALIASES = {"float": "float32", "double": "float64", "half": "float16", "long": "int64",
           "int": "int32", "short": "int16", "cfloat": "complex64"}


class device:
    def __init__(self, kind="cuda", index=0):
        if isinstance(kind, device):
            kind, index = kind.type, kind.index
        self.type = str(kind).split(":")[0]
        self.index = index

    def __repr__(self):
        return "device(type='%s', index=%s)" % (self.type, self.index)

    def __eq__(self, other):
        return isinstance(other, (device, str))

    def __hash__(self):
        return 0


CUDA = device("cuda", 0)


# ---------------------------------------------------------------------------------------------
# Tensors


class Storage:
    """What a tensor's memory is: an input or parameter of the problem, or an allocation."""

    def __init__(self, kind, numel, dtype_, line, fill=None, name=None):
        self.kind = kind  # "input" | "parameter" | "empty" | "zeros" | "full" | "random" | "computed"
        self.numel, self.dtype, self.line, self.fill = numel, dtype_, line, fill
        self.name = name  # inputs: the problem's name; parameters: set when the module is walked
        self.module_path = None


def contiguous_strides(shape):
    strides, acc = [], SymInt(1, "1")
    for d in reversed(shape):
        strides.append(acc)
        acc = acc * d
    return tuple(reversed(strides))


def as_sym(v):
    if isinstance(v, SymInt):
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        refuse("a tensor size must be an integer, not %r" % (v,))
    return SymInt(v)


def shape_args(args):
    if len(args) == 1 and isinstance(args[0], (tuple, list, Size)):
        args = tuple(args[0])
    return tuple(as_sym(a) for a in args)


class Size(tuple):
    def numel(self):
        return product(self)


def _tensor_method_refusal(name):
    def method(self, *args, **kwargs):
        if in_forward():
            refuse("forward calls the tensor method %s(), a torch operation: %s" %
                   (name, WRITE_KERNELS))
        return Tensor(Storage("computed", self._storage.numel, self.dtype, answer_line()),
                      self.shape, self.dtype)
    return method


class Tensor:
    def __init__(self, storage, shape, dtype_, strides=None):
        self._storage = storage
        self._shape = Size(shape)
        self._dtype = dtype_
        self._strides = tuple(strides) if strides is not None else contiguous_strides(shape)
        self._param = False

    # shape queries
    @property
    def shape(self):
        return self._shape

    def size(self, dim=None):
        return self._shape if dim is None else self._shape[dim]

    def stride(self, dim=None):
        return self._strides if dim is None else self._strides[dim]

    def dim(self):
        return len(self._shape)

    ndim = property(dim)

    def numel(self):
        return product(self._shape)

    nelement = numel

    @property
    def dtype(self):
        return self._dtype

    @property
    def device(self):
        return CUDA

    is_cuda = True
    requires_grad = False
    grad = None

    def element_size(self):
        return self._dtype.itemsize

    def is_floating_point(self):
        return self._dtype.is_floating_point

    def is_contiguous(self, memory_format=None):
        return tuple(int(s) for s in self._strides) == tuple(
            int(s) for s in contiguous_strides(self._shape))

    def data_ptr(self):
        return PtrInt(1 << 20)

    def __len__(self):
        return int(self._shape[0])

    def __repr__(self):
        return "Tensor(shape=%s, dtype=%s)" % (list(map(int, self._shape)), self._dtype)

    # views: the same storage
    def _view(self, shape, strides=None):
        t = Tensor(self._storage, shape, self._dtype, strides)
        t._param = self._param
        return t

    def _resolved(self, args):
        shape = list(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) \
            else list(args)
        if any(not isinstance(d, int) for d in shape):
            refuse("view/reshape takes integer sizes")
        if -1 in [int(d) for d in shape]:
            known = product([as_sym(d) for d in shape if int(d) != -1])
            rest = self.numel() // known
            shape = [rest if int(d) == -1 else d for d in shape]
        shape = tuple(as_sym(d) for d in shape)
        if int(product(shape)) != int(self.numel()):
            refuse("cannot view a tensor of %d elements as %s" % (int(self.numel()),
                                                                  [int(d) for d in shape]))
        return shape

    def view(self, *args):
        if len(args) == 1 and isinstance(args[0], dtype):
            if args[0] is self._dtype:
                return self
            refuse("view(%r) reinterprets the tensor's bytes as another dtype: pass the tensor "
                   "as it is and reinterpret in the kernel" % (args[0],))
        if not self.is_contiguous():
            refuse("view() of a non-contiguous tensor")
        return self._view(self._resolved(args))

    def reshape(self, *args):
        if not self.is_contiguous():
            refuse("reshape() of a non-contiguous tensor copies it, a torch operation: %s" %
                   WRITE_KERNELS)
        return self._view(self._resolved(args))

    def flatten(self, start_dim=0, end_dim=-1):
        n = len(self._shape)
        s, e = start_dim % max(n, 1), end_dim % max(n, 1)
        shape = list(self._shape[:s]) + [product(self._shape[s:e + 1])] + list(self._shape[e + 1:])
        return self.reshape(shape)

    def unsqueeze(self, d):
        shape = list(self._shape)
        d = d % (len(shape) + 1)
        shape.insert(d, SymInt(1))
        return self.reshape(shape) if self.is_contiguous() else refuse("unsqueeze of a strided view")

    def squeeze(self, d=None):
        shape = [s for i, s in enumerate(self._shape)
                 if not (int(s) == 1 and (d is None or i == d % len(self._shape)))]
        return self.reshape(shape)

    def contiguous(self, memory_format=None):
        if self.is_contiguous():
            return self
        if in_forward():
            refuse("contiguous() of a non-contiguous tensor copies it, a torch operation: pass the "
                   "tensor and its strides to the kernel instead")
        return Tensor(Storage("computed", self.numel(), self._dtype, answer_line()), self._shape,
                      self._dtype)

    def transpose(self, a, b):
        shape, strides = list(self._shape), list(self._strides)
        shape[a], shape[b] = shape[b], shape[a]
        strides[a], strides[b] = strides[b], strides[a]
        return self._view(shape, strides)

    def t(self):
        return self.transpose(0, 1) if len(self._shape) == 2 else self

    T = property(t)

    def permute(self, *dims):
        dims = dims[0] if len(dims) == 1 and isinstance(dims[0], (tuple, list)) else dims
        return self._view([self._shape[d] for d in dims], [self._strides[d] for d in dims])

    def expand(self, *sizes):
        sizes = shape_args(sizes)
        if [int(s) for s in sizes] == [int(s) for s in self._shape]:
            return self
        refuse("expand() makes a broadcast view: pass the tensor as it is and broadcast in the kernel")

    # devices and dtypes: the same tensor where nothing changes
    def to(self, *args, **kwargs):
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, dtype) and a is not self._dtype:
                return self._convert(a)
        return self

    def _convert(self, d):
        if d is self._dtype:
            return self
        if in_forward():
            refuse("converting a %s tensor to %s is a torch operation: %s" %
                   (self._dtype.name, d.name, WRITE_KERNELS))
        return Tensor(Storage("computed", self.numel(), d, answer_line()), self._shape, d)

    def cuda(self, *a, **k):
        return self

    def float(self):
        return self._convert(DTYPES["float32"])

    def half(self):
        return self._convert(DTYPES["float16"])

    def bfloat16(self):
        return self._convert(DTYPES["bfloat16"])

    def double(self):
        return self._convert(DTYPES["float64"])

    def long(self):
        return self._convert(DTYPES["int64"])

    def int(self):
        return self._convert(DTYPES["int32"])

    def requires_grad_(self, flag=True):
        return self

    def detach(self):
        return self

    # allocations like this one
    def new_empty(self, *size, dtype=None, **kw):
        return alloc("empty", shape_args(size), dtype or self._dtype)

    def new_zeros(self, *size, dtype=None, **kw):
        return alloc("zeros", shape_args(size), dtype or self._dtype)

    def new_ones(self, *size, dtype=None, **kw):
        return alloc("full", shape_args(size), dtype or self._dtype, 1)

    def new_full(self, size, value, dtype=None, **kw):
        return alloc("full", shape_args((size,)), dtype or self._dtype, value)

    # in-place fills of an allocation
    def zero_(self):
        return self.fill_(0)

    def fill_(self, value):
        st = self._storage
        if in_forward():
            if st.kind in ("input", "parameter"):
                refuse("forward writes into %s %s in place; kernrl's inputs must stay unchanged: "
                       "allocate the output and write it" % (st.kind, st.name or ""))
            if st.kind in ("empty", "zeros", "full"):
                st.kind, st.fill = ("zeros", None) if value == 0 else ("full", value)
                return self
            refuse("fill_() is a torch operation: %s" % WRITE_KERNELS)
        return self

    def uniform_(self, *a, **k):
        return self._init_only("uniform_")

    def normal_(self, *a, **k):
        return self._init_only("normal_")

    def _init_only(self, name):
        if in_forward():
            refuse("forward calls %s(), a torch operation: %s" % (name, WRITE_KERNELS))
        return self

    # values: never known
    def _values(self, *a, **k):
        refuse("the wrapper reads the values of a tensor (item(), bool(), int() or float() of a "
               "tensor, a tensor in an if): they are not known before the kernels run, so the "
               "launches may not depend on them; compute what depends on data inside the kernels")

    item = tolist = __bool__ = __float__ = __int__ = __index__ = _values

    def __getitem__(self, key):
        if key is Ellipsis or (isinstance(key, slice) and key == slice(None)):
            return self
        refuse("forward indexes or slices a tensor (a view at an offset, or a copy): kernrl passes "
               "whole tensors, so index inside the kernel instead")

    def __setitem__(self, key, value):
        refuse("forward assigns into a tensor (x[...] = ...), a torch operation: %s" %
               WRITE_KERNELS)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return types.MethodType(_tensor_method_refusal(name), self)


def _arith(name):
    def op(self, *others):
        if in_forward():
            refuse("forward computes with torch (the tensor operator %s): %s" %
                   (name.strip("_"), WRITE_KERNELS))
        shape = self._shape
        for o in others:
            if isinstance(o, Tensor) and len(o._shape) > len(shape):
                shape = o._shape
        return Tensor(Storage("computed", product(shape), self._dtype, answer_line()), shape,
                      self._dtype)
    return op


for _n in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
           "lshift", "rshift"]:
    for _p in ("__%s__", "__r%s__", "__i%s__"):
        setattr(Tensor, _p % _n, _arith(_p % _n))
for _n in ["__neg__", "__abs__", "__invert__", "__lt__", "__le__", "__gt__", "__ge__"]:
    setattr(Tensor, _n, _arith(_n))


def alloc(kind, shape, dtype_, fill=None):
    if kind == "full" and fill == 0:
        kind, fill = "zeros", None
    shape = tuple(as_sym(s) for s in shape)
    return Tensor(Storage(kind, product(shape), dtype_, answer_line(), fill), shape, dtype_)


def input_tensor(name, shape, dtype_name):
    shape = tuple(shape)
    return Tensor(Storage("input", product(shape), DTYPES[dtype_name], 0, name=name), shape,
                  DTYPES[dtype_name])
