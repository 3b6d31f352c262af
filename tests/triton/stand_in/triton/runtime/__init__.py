import inspect


class KernelParam:
    def __init__(self, p):
        self.name = p.name
        ann = p.annotation
        text = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
        self.is_constexpr = "constexpr" in str(text)
        self.default = p.default


class JITFunction:
    def __init__(self, fn):
        self.fn = fn
        self.__name__ = fn.__name__
        sig = inspect.signature(fn)
        self.params = [KernelParam(p) for p in sig.parameters.values()]
        self.arg_names = [p.name for p in self.params]

    def __getitem__(self, grid):
        raise RuntimeError("the stand-in Triton cannot launch kernels")


class Config:
    def __init__(self, kwargs, num_warps=4, num_stages=3, num_ctas=1, **extra):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages
        self.num_ctas = num_ctas


class Autotuner:
    def __init__(self, fn, configs, key):
        self.fn = fn
        self.configs = configs
        self.key = key


class Heuristics:
    def __init__(self, fn, values):
        self.fn = fn
        self.values = values
