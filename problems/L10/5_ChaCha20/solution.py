"""kernrl
problem: L10_5_ChaCha20
launches:
  - kernel: chacha20_blocks
    grid: ["cdiv(num_blocks, 128)"]
    args: [key, nonce, counter, out, num_blocks]
    constexprs: {BLOCK: 128}
    num_warps: 4
"""
# ChaCha20 keystream blocks (RFC 8439): one block per lane, the 16-word state in uint32 registers,
# 10 double rounds written out as quarter rounds (a jit helper returning a tuple), the input
# state added back and the words serialised little-endian as [lanes, 4] byte tiles.
import triton
import triton.language as tl


@triton.jit
def _rotl(x, n: tl.constexpr):
    return (x << n) | (x >> (32 - n))


@triton.jit
def _qr(a, b, c, d):
    a = a + b
    d = _rotl(d ^ a, 16)
    c = c + d
    b = _rotl(b ^ c, 12)
    a = a + b
    d = _rotl(d ^ a, 8)
    c = c + d
    b = _rotl(b ^ c, 7)
    return a, b, c, d


@triton.jit
def _le_word(ptr, w: tl.constexpr, BLOCK: tl.constexpr):
    b0 = tl.load(ptr + 4 * w).to(tl.uint32)
    b1 = tl.load(ptr + 4 * w + 1).to(tl.uint32)
    b2 = tl.load(ptr + 4 * w + 2).to(tl.uint32)
    b3 = tl.load(ptr + 4 * w + 3).to(tl.uint32)
    return tl.zeros([BLOCK], dtype=tl.uint32) + (b0 | (b1 << 8) | (b2 << 16) | (b3 << 24))


@triton.jit
def _emit(out_ptr, rows, rm, w: tl.constexpr, word):
    t = tl.arange(0, 4)
    byte = (word[:, None] >> (8 * t)[None, :].to(tl.uint32)) & 255
    tl.store(out_ptr + rows[:, None].to(tl.int64) * 64 + 4 * w + t[None, :], byte.to(tl.uint8), mask=rm[:, None])


@triton.jit
def chacha20_blocks(key_ptr, nonce_ptr, ctr_ptr, out_ptr, n, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rm = rows < n
    i0 = tl.full([BLOCK], 0x61707865, tl.uint32)
    i1 = tl.full([BLOCK], 0x3320646E, tl.uint32)
    i2 = tl.full([BLOCK], 0x79622D32, tl.uint32)
    i3 = tl.full([BLOCK], 0x6B206574, tl.uint32)
    i4 = _le_word(key_ptr, 0, BLOCK)
    i5 = _le_word(key_ptr, 1, BLOCK)
    i6 = _le_word(key_ptr, 2, BLOCK)
    i7 = _le_word(key_ptr, 3, BLOCK)
    i8 = _le_word(key_ptr, 4, BLOCK)
    i9 = _le_word(key_ptr, 5, BLOCK)
    i10 = _le_word(key_ptr, 6, BLOCK)
    i11 = _le_word(key_ptr, 7, BLOCK)
    i12 = tl.load(ctr_ptr + rows, mask=rm, other=0).to(tl.uint32, bitcast=True)
    i13 = _le_word(nonce_ptr, 0, BLOCK)
    i14 = _le_word(nonce_ptr, 1, BLOCK)
    i15 = _le_word(nonce_ptr, 2, BLOCK)
    x0, x1, x2, x3, x4, x5, x6, x7 = i0, i1, i2, i3, i4, i5, i6, i7
    x8, x9, x10, x11, x12, x13, x14, x15 = i8, i9, i10, i11, i12, i13, i14, i15
    for _ in range(10):
        x0, x4, x8, x12 = _qr(x0, x4, x8, x12)
        x1, x5, x9, x13 = _qr(x1, x5, x9, x13)
        x2, x6, x10, x14 = _qr(x2, x6, x10, x14)
        x3, x7, x11, x15 = _qr(x3, x7, x11, x15)
        x0, x5, x10, x15 = _qr(x0, x5, x10, x15)
        x1, x6, x11, x12 = _qr(x1, x6, x11, x12)
        x2, x7, x8, x13 = _qr(x2, x7, x8, x13)
        x3, x4, x9, x14 = _qr(x3, x4, x9, x14)
    _emit(out_ptr, rows, rm, 0, x0 + i0)
    _emit(out_ptr, rows, rm, 1, x1 + i1)
    _emit(out_ptr, rows, rm, 2, x2 + i2)
    _emit(out_ptr, rows, rm, 3, x3 + i3)
    _emit(out_ptr, rows, rm, 4, x4 + i4)
    _emit(out_ptr, rows, rm, 5, x5 + i5)
    _emit(out_ptr, rows, rm, 6, x6 + i6)
    _emit(out_ptr, rows, rm, 7, x7 + i7)
    _emit(out_ptr, rows, rm, 8, x8 + i8)
    _emit(out_ptr, rows, rm, 9, x9 + i9)
    _emit(out_ptr, rows, rm, 10, x10 + i10)
    _emit(out_ptr, rows, rm, 11, x11 + i11)
    _emit(out_ptr, rows, rm, 12, x12 + i12)
    _emit(out_ptr, rows, rm, 13, x13 + i13)
    _emit(out_ptr, rows, rm, 14, x14 + i14)
    _emit(out_ptr, rows, rm, 15, x15 + i15)
