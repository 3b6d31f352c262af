from collections import namedtuple

GPUTarget = namedtuple("GPUTarget", ["backend", "arch", "warp_size"])
