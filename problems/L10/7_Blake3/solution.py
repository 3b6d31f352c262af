"""kernrl
problem: L10_7_Blake3
launches:
  - kernel: blake3_chunk
    grid: ["cdiv(batch, 128)"]
    args: [messages, out, batch, msg_len]
    constexprs: {BLOCK: 128}
    num_warps: 4
"""
# BLAKE3 of single-chunk messages, one message per lane: per 64-byte block the 16 message words
# are gathered little-endian (zero past the end), the compression runs 7 rounds of 8 G functions
# on uint32 registers with the message permutation as a simultaneous tuple assignment, and the
# chaining value feeds the next block; flags CHUNK_START / CHUNK_END | ROOT on the first / last.
import triton
import triton.language as tl


@triton.jit
def _rotr(x, n: tl.constexpr):
    return (x >> n) | (x << (32 - n))


@triton.jit
def _g(a, b, c, d, mx, my):
    a = a + b + mx
    d = _rotr(d ^ a, 16)
    c = c + d
    b = _rotr(b ^ c, 12)
    a = a + b + my
    d = _rotr(d ^ a, 8)
    c = c + d
    b = _rotr(b ^ c, 7)
    return a, b, c, d


@triton.jit
def _word(msg_ptr, rows, rm, L, off):
    base = msg_ptr + rows.to(tl.int64) * L + off
    b0 = tl.load(base, mask=rm & (off < L), other=0).to(tl.uint32)
    b1 = tl.load(base + 1, mask=rm & (off + 1 < L), other=0).to(tl.uint32)
    b2 = tl.load(base + 2, mask=rm & (off + 2 < L), other=0).to(tl.uint32)
    b3 = tl.load(base + 3, mask=rm & (off + 3 < L), other=0).to(tl.uint32)
    return b0 | (b1 << 8) | (b2 << 16) | (b3 << 24)


@triton.jit
def _emit(out_ptr, rows, rm, w: tl.constexpr, word):
    t = tl.arange(0, 4)
    byte = (word[:, None] >> (8 * t)[None, :].to(tl.uint32)) & 255
    tl.store(out_ptr + rows[:, None].to(tl.int64) * 32 + 4 * w + t[None, :], byte.to(tl.uint8), mask=rm[:, None])


@triton.jit
def blake3_chunk(msg_ptr, out_ptr, n, L, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rm = rows < n
    z = tl.zeros([BLOCK], dtype=tl.uint32)
    iv0 = z + 0x6A09E667
    iv1 = z + 0xBB67AE85
    iv2 = z + 0x3C6EF372
    iv3 = z + 0xA54FF53A
    h0, h1, h2, h3 = iv0, iv1, iv2, iv3
    h4 = z + 0x510E527F
    h5 = z + 0x9B05688C
    h6 = z + 0x1F83D9AB
    h7 = z + 0x5BE0CD19
    nb = tl.maximum(tl.cdiv(L, 64), 1)
    for j in range(0, nb):
        off = j * 64
        m0 = _word(msg_ptr, rows, rm, L, off + 0)
        m1 = _word(msg_ptr, rows, rm, L, off + 4)
        m2 = _word(msg_ptr, rows, rm, L, off + 8)
        m3 = _word(msg_ptr, rows, rm, L, off + 12)
        m4 = _word(msg_ptr, rows, rm, L, off + 16)
        m5 = _word(msg_ptr, rows, rm, L, off + 20)
        m6 = _word(msg_ptr, rows, rm, L, off + 24)
        m7 = _word(msg_ptr, rows, rm, L, off + 28)
        m8 = _word(msg_ptr, rows, rm, L, off + 32)
        m9 = _word(msg_ptr, rows, rm, L, off + 36)
        m10 = _word(msg_ptr, rows, rm, L, off + 40)
        m11 = _word(msg_ptr, rows, rm, L, off + 44)
        m12 = _word(msg_ptr, rows, rm, L, off + 48)
        m13 = _word(msg_ptr, rows, rm, L, off + 52)
        m14 = _word(msg_ptr, rows, rm, L, off + 56)
        m15 = _word(msg_ptr, rows, rm, L, off + 60)
        flags = tl.where(j == 0, 1, 0) | tl.where(j == nb - 1, 10, 0)
        v0, v1, v2, v3, v4, v5, v6, v7 = h0, h1, h2, h3, h4, h5, h6, h7
        v8, v9, v10, v11 = iv0, iv1, iv2, iv3
        v12 = z
        v13 = z
        v14 = z + tl.minimum(L - off, 64).to(tl.uint32)
        v15 = z + flags.to(tl.uint32)
        for r in range(7):
            v0, v4, v8, v12 = _g(v0, v4, v8, v12, m0, m1)
            v1, v5, v9, v13 = _g(v1, v5, v9, v13, m2, m3)
            v2, v6, v10, v14 = _g(v2, v6, v10, v14, m4, m5)
            v3, v7, v11, v15 = _g(v3, v7, v11, v15, m6, m7)
            v0, v5, v10, v15 = _g(v0, v5, v10, v15, m8, m9)
            v1, v6, v11, v12 = _g(v1, v6, v11, v12, m10, m11)
            v2, v7, v8, v13 = _g(v2, v7, v8, v13, m12, m13)
            v3, v4, v9, v14 = _g(v3, v4, v9, v14, m14, m15)
            m0, m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, m11, m12, m13, m14, m15 = \
                m2, m6, m3, m10, m7, m0, m4, m13, m1, m11, m12, m5, m9, m14, m15, m8
        h0 = v0 ^ v8
        h1 = v1 ^ v9
        h2 = v2 ^ v10
        h3 = v3 ^ v11
        h4 = v4 ^ v12
        h5 = v5 ^ v13
        h6 = v6 ^ v14
        h7 = v7 ^ v15
    _emit(out_ptr, rows, rm, 0, h0)
    _emit(out_ptr, rows, rm, 1, h1)
    _emit(out_ptr, rows, rm, 2, h2)
    _emit(out_ptr, rows, rm, 3, h3)
    _emit(out_ptr, rows, rm, 4, h4)
    _emit(out_ptr, rows, rm, 5, h5)
    _emit(out_ptr, rows, rm, 6, h6)
    _emit(out_ptr, rows, rm, 7, h7)
