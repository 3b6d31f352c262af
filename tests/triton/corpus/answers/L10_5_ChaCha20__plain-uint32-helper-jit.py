"""kernrl
problem: L10_5_ChaCha20
launches:
  - kernel: chacha20_kernel
    grid: [cdiv(num_blocks, 256)]
    args: [key, nonce, counter, out, num_blocks]
    constexprs: {BLOCK: 256}
    num_warps: 4
"""
# One thread computes one full 64-byte ChaCha20 block (16 uint32 words kept in registers).
# The output row is written as 16 little-endian uint32 words through a reinterpreted pointer,
# which is byte-identical to the 64-byte serialization on a little-endian GPU.
import triton
import triton.language as tl


@triton.jit
def _le_word(p, i):
    b0 = tl.load(p + 4 * i + 0).to(tl.uint32)
    b1 = tl.load(p + 4 * i + 1).to(tl.uint32)
    b2 = tl.load(p + 4 * i + 2).to(tl.uint32)
    b3 = tl.load(p + 4 * i + 3).to(tl.uint32)
    return b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)


@triton.jit
def _qr(a, b, c, d):
    a = a + b
    d = d ^ a
    d = (d << 16) | (d >> 16)
    c = c + d
    b = b ^ c
    b = (b << 12) | (b >> 20)
    a = a + b
    d = d ^ a
    d = (d << 8) | (d >> 24)
    c = c + d
    b = b ^ c
    b = (b << 7) | (b >> 25)
    return a, b, c, d


@triton.jit
def chacha20_kernel(key_ptr, nonce_ptr, counter_ptr, out_ptr, num_blocks, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < num_blocks

    zero = tl.zeros([BLOCK], dtype=tl.uint32)

    # initial state
    i0 = zero + 0x61707865
    i1 = zero + 0x3320646E
    i2 = zero + 0x79622D32
    i3 = zero + 0x6B206574
    i4 = zero + _le_word(key_ptr, 0)
    i5 = zero + _le_word(key_ptr, 1)
    i6 = zero + _le_word(key_ptr, 2)
    i7 = zero + _le_word(key_ptr, 3)
    i8 = zero + _le_word(key_ptr, 4)
    i9 = zero + _le_word(key_ptr, 5)
    i10 = zero + _le_word(key_ptr, 6)
    i11 = zero + _le_word(key_ptr, 7)
    i12 = tl.load(counter_ptr + offs, mask=mask, other=0).to(tl.uint32, bitcast=True)
    i13 = zero + _le_word(nonce_ptr, 0)
    i14 = zero + _le_word(nonce_ptr, 1)
    i15 = zero + _le_word(nonce_ptr, 2)

    x0, x1, x2, x3 = i0, i1, i2, i3
    x4, x5, x6, x7 = i4, i5, i6, i7
    x8, x9, x10, x11 = i8, i9, i10, i11
    x12, x13, x14, x15 = i12, i13, i14, i15

    for _ in range(10):
        # column round
        x0, x4, x8, x12 = _qr(x0, x4, x8, x12)
        x1, x5, x9, x13 = _qr(x1, x5, x9, x13)
        x2, x6, x10, x14 = _qr(x2, x6, x10, x14)
        x3, x7, x11, x15 = _qr(x3, x7, x11, x15)
        # diagonal round
        x0, x5, x10, x15 = _qr(x0, x5, x10, x15)
        x1, x6, x11, x12 = _qr(x1, x6, x11, x12)
        x2, x7, x8, x13 = _qr(x2, x7, x8, x13)
        x3, x4, x9, x14 = _qr(x3, x4, x9, x14)

    out32 = out_ptr.to(tl.pointer_type(tl.uint32))
    base = out32 + offs * 16
    tl.store(base + 0, x0 + i0, mask=mask)
    tl.store(base + 1, x1 + i1, mask=mask)
    tl.store(base + 2, x2 + i2, mask=mask)
    tl.store(base + 3, x3 + i3, mask=mask)
    tl.store(base + 4, x4 + i4, mask=mask)
    tl.store(base + 5, x5 + i5, mask=mask)
    tl.store(base + 6, x6 + i6, mask=mask)
    tl.store(base + 7, x7 + i7, mask=mask)
    tl.store(base + 8, x8 + i8, mask=mask)
    tl.store(base + 9, x9 + i9, mask=mask)
    tl.store(base + 10, x10 + i10, mask=mask)
    tl.store(base + 11, x11 + i11, mask=mask)
    tl.store(base + 12, x12 + i12, mask=mask)
    tl.store(base + 13, x13 + i13, mask=mask)
    tl.store(base + 14, x14 + i14, mask=mask)
    tl.store(base + 15, x15 + i15, mask=mask)
