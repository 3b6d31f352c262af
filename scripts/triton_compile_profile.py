#!/usr/bin/env python3
"""Where a Triton compile's time goes, in one fresh process as kernrl's compiler child runs it
(outside the sandbox): the interpreter and Triton's import, the first compile (which also loads
Triton's backend, MLIR and LLVM), and further compiles in the same process. Prints one JSON line.

    scripts/triton_compile_profile.py [ARCH]      (ARCH: 90 for sm_90, the default)

It compiles the two small kernels below (no GPU is used); run it on a host whose Python has
Triton, with TRITON_CACHE_DIR pointing at an empty folder so nothing comes from Triton's cache.
"""
import json
import os
import resource
import sys
import time

T0 = time.monotonic()


def cpu_s():
    r = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime + c.ru_utime + c.ru_stime


import triton  # noqa: E402
import triton.language as tl  # noqa: E402
from triton.backends.compiler import GPUTarget  # noqa: E402
from triton.compiler import ASTSource  # noqa: E402

IMPORTED = time.monotonic()
IMPORT_CPU = cpu_s()


@triton.jit
def scale(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * 2.0, mask=m)


@triton.jit
def softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    m = offs < n_cols
    x = tl.load(x_ptr + row * n_cols + offs, mask=m, other=-float("inf"))
    e = tl.exp(x - tl.max(x, 0))
    tl.store(out_ptr + row * n_cols + offs, e / tl.sum(e, 0), mask=m)


def compile_ms(fn, block, arch):
    sig = {"x_ptr": "*fp32", "out_ptr": "*fp32", fn.arg_names[2]: "i32", "BLOCK": "constexpr"}
    t0, c0 = time.monotonic(), cpu_s()
    triton.compile(ASTSource(fn, sig, constexprs={"BLOCK": block}),
                   target=GPUTarget("cuda", arch, 32), options={"num_warps": 4})
    return round((time.monotonic() - t0) * 1000, 1), round((cpu_s() - c0) * 1000, 1)


def main():
    arch = int(sys.argv[1]) if len(sys.argv) > 1 else 90
    out = {"triton": triton.__version__,
           "import_ms": round((IMPORTED - T0) * 1000, 1),
           "process_cpu_ms_at_import": round(IMPORT_CPU * 1000, 1)}
    for label, fn, block in (("first_scale", scale, 1024), ("then_softmax", softmax, 1024),
                             ("then_softmax_other_block", softmax, 2048),
                             ("then_scale_other_block", scale, 512)):
        wall, cpu = compile_ms(fn, block, arch)
        out[label + "_ms"] = wall
        out[label + "_cpu_ms"] = cpu
    print(json.dumps(out))


if __name__ == "__main__":
    main()
