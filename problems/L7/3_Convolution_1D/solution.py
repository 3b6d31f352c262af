"""kernrl
problem: L7_3_Convolution_1D
launches:
  - kernel: fir
    grid: ["cdiv(signal_length + 2 * (kernel_size / 2) - kernel_size + 1, 2048)"]
    args: [signal, kernel, out, signal_length, kernel_size, "signal_length + 2 * (kernel_size / 2) - kernel_size + 1"]
    constexprs: {BLOCK: 2048}
    num_warps: 8
"""
# 1-D "same" convolution (PyTorch's conv1d: cross-correlation, zero padding kernel_size / 2): each
# program computes 2048 outputs; the taps loop reads shifted windows of the signal, which stay in
# L1, and one scalar tap at a time.
import triton
import triton.language as tl


@triton.jit
def fir(x_ptr, k_ptr, out_ptr, L, K, n_out, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    om = i < n_out
    pad = K // 2
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in range(0, K):
        src = i + k - pad
        xv = tl.load(x_ptr + src, mask=om & (src >= 0) & (src < L), other=0.0)
        acc += xv * tl.load(k_ptr + k)
    tl.store(out_ptr + i, acc, mask=om)
