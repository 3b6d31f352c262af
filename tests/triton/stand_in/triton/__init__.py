"""A stand-in for the `triton` package, for tests on machines without Triton or a GPU.

It has the surface kernrl's helper (src/triton/kernrl_triton.py) uses: @jit, @autotune,
@heuristics, Config, runtime.JITFunction, compiler.ASTSource, backends.compiler.GPUTarget and
compile(). compile() runs the bundled stand-in ptxas (to prove the sandbox lets it run) and returns
a fake cubin with metadata shaped like Triton 3.6's. Kernels are never traced or run.
"""
import inspect

from . import language  # noqa: F401
from .runtime import JITFunction, Autotuner, Heuristics, Config  # noqa: F401

__version__ = "0.0+stand-in"


def jit(fn=None, **kwargs):
    if fn is None:
        return lambda f: JITFunction(f)
    return JITFunction(fn)


def autotune(configs, key, **kwargs):
    return lambda fn: Autotuner(fn, configs, key)


def heuristics(values):
    return lambda fn: Heuristics(fn, values)


def cdiv(a, b):
    return (a + b - 1) // b


def next_power_of_2(n):
    p = 1
    while p < n:
        p *= 2
    return p


def compile(src, target=None, options=None):
    from .compiler import compile as _compile
    return _compile(src, target=target, options=options)


_ = inspect
