import hashlib
import json
import os
import subprocess
from collections import namedtuple


class ASTSource:
    def __init__(self, fn, signature, constexprs=None, attrs=None):
        self.fn = fn
        self.name = fn.__name__
        self.signature = signature
        self.constants = dict(constexprs or {})
        self.attrs = attrs or {}


class CompiledKernel:
    def __init__(self, metadata, asm):
        self.metadata = metadata
        self.asm = asm


def compile(src, target=None, options=None):
    options = dict(options or {})
    ptxas = os.environ.get("TRITON_PTXAS_PATH", "")
    version = subprocess.run([ptxas, "--version"], capture_output=True, check=True).stdout
    if b"release" not in version:
        raise RuntimeError("the stand-in ptxas did not answer")
    for k, v in src.signature.items():
        if v == "constexpr" and k not in src.constants:
            raise ValueError("constexpr %s has no value" % k)
    runtime = [k for k, v in src.signature.items() if v != "constexpr"]
    num_warps = int(options.get("num_warps", 4))
    num_stages = int(options.get("num_stages", 3))
    num_ctas = int(options.get("num_ctas", 1))
    block = max([v for v in src.constants.values() if isinstance(v, int) and
                 not isinstance(v, bool)] or [0])
    meta = {
        "name": src.name,
        "num_warps": num_warps,
        "num_stages": num_stages,
        "num_ctas": num_ctas,
        "shared": 4 * block * (num_stages - 1),
        "global_scratch_size": int(options.get("stand_in_scratch", 0)),
        "global_scratch_align": 1,
        "profile_scratch_size": 0,
        "profile_scratch_align": 1,
        "cluster_dims": [1, 1, 1],
        "launch_cooperative_grid": False,
        "target": {"backend": target.backend, "arch": target.arch, "warp_size": target.warp_size},
    }
    Meta = namedtuple("KernelMetadata", sorted(meta))
    params = "".join(".param .u64 %s_param_%d,\n" % (src.name, i)
                     for i in range(len(runtime) + 2))
    ptx = ".version 8.7\n.target sm_%d\n.visible .entry %s(\n%s)\n{\n}\n" % (
        target.arch, src.name, params.rstrip(",\n"))
    desc = {"name": src.name, "signature": src.signature,
            "constants": {k: repr(v) for k, v in src.constants.items()},
            "attrs": {str(k): v for k, v in src.attrs.items()}, "options": options}
    cubin = b"STAND-IN-CUBIN\n" + json.dumps(desc, sort_keys=True).encode()
    return CompiledKernel(Meta(**meta), {"ptx": ptx, "cubin": cubin,
                                         "hash": hashlib.sha256(cubin).hexdigest()})
