/* kernrl
problem: L10_5_ChaCha20
launches:
  - kernel: chacha20_blocks
    grid: [cdiv(num_blocks, 128)]
    block: [128]
    args: [key, nonce, counter, out, num_blocks]
*/

// ChaCha20 keystream (RFC 8439 section 2.3): one thread per 64-byte block.
// The 16-word state lives in registers; quarter rounds use 32-bit rotations
// (__funnelshift_l -> a single SHF instruction). The key and nonce are the same
// for every block, so every thread reads the same 44 bytes (broadcast loads).
// Output words are little-endian, which is the native byte order of the GPU,
// so the 64 output bytes are written as four 16-byte vector stores.

#include <cstdint>

#define QR(a, b, c, d)                          \
    a += b; d ^= a; d = __funnelshift_l(d, d, 16); \
    c += d; b ^= c; b = __funnelshift_l(b, b, 12); \
    a += b; d ^= a; d = __funnelshift_l(d, d, 8);  \
    c += d; b ^= c; b = __funnelshift_l(b, b, 7);

__device__ __forceinline__ uint32_t load_le32(const uint8_t* p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

extern "C" __global__ void __launch_bounds__(128)
chacha20_blocks(const uint8_t* __restrict__ key,
                const uint8_t* __restrict__ nonce,
                const uint32_t* __restrict__ counter,
                uint8_t* __restrict__ out,
                int num_blocks)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= num_blocks) return;

    uint32_t in[16];
    in[0] = 0x61707865u; in[1] = 0x3320646eu; in[2] = 0x79622d32u; in[3] = 0x6b206574u;
#pragma unroll
    for (int k = 0; k < 8; ++k) in[4 + k] = load_le32(key + 4 * k);
    in[12] = __ldg(counter + i);
#pragma unroll
    for (int k = 0; k < 3; ++k) in[13 + k] = load_le32(nonce + 4 * k);

    uint32_t x0 = in[0], x1 = in[1], x2 = in[2], x3 = in[3];
    uint32_t x4 = in[4], x5 = in[5], x6 = in[6], x7 = in[7];
    uint32_t x8 = in[8], x9 = in[9], x10 = in[10], x11 = in[11];
    uint32_t x12 = in[12], x13 = in[13], x14 = in[14], x15 = in[15];

#pragma unroll
    for (int r = 0; r < 10; ++r) {
        // column round
        QR(x0, x4, x8,  x12)
        QR(x1, x5, x9,  x13)
        QR(x2, x6, x10, x14)
        QR(x3, x7, x11, x15)
        // diagonal round
        QR(x0, x5, x10, x15)
        QR(x1, x6, x11, x12)
        QR(x2, x7, x8,  x13)
        QR(x3, x4, x9,  x14)
    }

    uint4* dst = reinterpret_cast<uint4*>(out + (size_t)i * 64);
    dst[0] = make_uint4(x0 + in[0],   x1 + in[1],   x2 + in[2],   x3 + in[3]);
    dst[1] = make_uint4(x4 + in[4],   x5 + in[5],   x6 + in[6],   x7 + in[7]);
    dst[2] = make_uint4(x8 + in[8],   x9 + in[9],   x10 + in[10], x11 + in[11]);
    dst[3] = make_uint4(x12 + in[12], x13 + in[13], x14 + in[14], x15 + in[15]);
}
