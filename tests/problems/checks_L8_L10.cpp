// Independent CPU checks of the L8-L10 references: published test vectors for the cryptographic
// problems (FIPS 180-2 SHA-256, FIPS-197 AES-128, RFC 8439 ChaCha20, RFC 7914 / published
// PBKDF2-HMAC-SHA256, the official BLAKE3 vectors, modular exponentiation against Python's pow),
// and brute-force scalar loops at tiny sizes for the video and parallel-primitive problems.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "references/reference.h"

namespace {

using kernrl::TensorMap;

struct Run {
  TensorMap tensors;
  std::map<std::string, int64_t> sizes;
  std::map<std::string, double> scalars;

  TensorMap operator()(const std::string& id) const {
    const auto* e = kernrl::find_reference(id);
    REQUIRE_MESSAGE(e != nullptr, "no reference for " << id);
    kernrl::RefContext ctx{tensors, sizes, scalars, torch::Device(torch::kCPU)};
    return e->run(ctx);
  }
};

torch::Tensor bytes_of(const std::string& s) {
  auto t = torch::empty({1, (int64_t)s.size()}, torch::kUInt8);
  for (size_t i = 0; i < s.size(); ++i) t[0][i] = (uint8_t)s[i];
  return t;
}

torch::Tensor bytes_of(const std::vector<uint8_t>& v) {
  auto t = torch::empty({1, (int64_t)v.size()}, torch::kUInt8);
  std::copy(v.begin(), v.end(), t.data_ptr<uint8_t>());
  return t;
}

std::string hex_of(const torch::Tensor& row) {
  auto r = row.contiguous().to(torch::kUInt8);
  static const char* d = "0123456789abcdef";
  std::string s;
  for (int64_t i = 0; i < r.numel(); ++i) {
    uint8_t b = r.data_ptr<uint8_t>()[i];
    s += d[b >> 4];
    s += d[b & 15];
  }
  return s;
}

std::vector<uint8_t> unhex(const std::string& h) {
  std::vector<uint8_t> v;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    v.push_back((uint8_t)std::stoi(h.substr(i, 2), nullptr, 16));
  return v;
}

std::vector<uint8_t> pattern251(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = (uint8_t)(i % 251);
  return v;
}

std::string sha256_hex(const std::string& msg) {
  Run r;
  r.tensors = {{"messages", bytes_of(msg)}};
  r.sizes = {{"batch", 1}, {"msg_len", (int64_t)msg.size()}};
  return hex_of(r(msg.size() <= 55 ? "L10_1_SHA256_Single" : "L10_2_SHA256_Batch").at("out")[0]);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Level 10: published vectors

TEST_CASE("L10_1/L10_2 SHA-256: FIPS 180-2 vectors") {
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnop"
                   "qklmnopqrlmnopqrs"
                   "mnopqrstnopqrstu") ==
        "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  // Rows of a batch are hashed independently.
  Run r;
  r.tensors = {{"messages", torch::cat({bytes_of("abc"), bytes_of("xyz"), bytes_of("abc")})}};
  r.sizes = {{"batch", 3}, {"msg_len", 3}};
  auto out = r("L10_1_SHA256_Single").at("out");
  CHECK(hex_of(out[0]) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(hex_of(out[2]) == hex_of(out[0]));
  CHECK(hex_of(out[1]) != hex_of(out[0]));
}

TEST_CASE("L10_3 Merkle root: brute-force tree of SHA-256 (checked above) node hashes") {
  const int64_t T = 2, n = 5;
  auto leaves = torch::randint(0, 256, {T, n, 32}, torch::kInt64).to(torch::kUInt8);
  Run r;
  r.tensors = {{"leaves", leaves}};
  r.sizes = {{"num_trees", T}, {"num_leaves", n}};
  auto roots = r("L10_3_MerkleTreeRoot").at("out");
  for (int64_t t = 0; t < T; ++t) {
    std::vector<std::string> level;
    for (int64_t i = 0; i < n; ++i) {
      std::string s;
      for (int64_t k = 0; k < 32; ++k) s += (char)leaves[t][i][k].item<uint8_t>();
      level.push_back(s);
    }
    while (level.size() > 1) {
      if (level.size() % 2) level.push_back(level.back());
      std::vector<std::string> next;
      for (size_t i = 0; i < level.size(); i += 2) {
        auto d = unhex(sha256_hex(level[i] + level[i + 1]));
        next.emplace_back(d.begin(), d.end());
      }
      level = next;
    }
    std::string want;
    for (unsigned char ch : level[0])
      want += "0123456789abcdef"[ch >> 4], want += "0123456789abcdef"[ch & 15];
    CHECK(hex_of(roots[t]) == want);
  }
  // One leaf: the root is the leaf.
  Run one;
  one.tensors = {{"leaves", leaves.narrow(1, 0, 1).contiguous()}};
  one.sizes = {{"num_trees", T}, {"num_leaves", 1}};
  CHECK(torch::equal(one("L10_3_MerkleTreeRoot").at("out"), leaves.select(1, 0)));
}

TEST_CASE("L10_4 AES-128: FIPS-197 Appendix B and C.1") {
  auto enc = [](const std::string& key, const std::string& pt) {
    Run r;
    r.tensors = {{"plaintext", bytes_of(unhex(pt))}, {"key", bytes_of(unhex(key)).reshape({16})}};
    r.sizes = {{"num_blocks", 1}};
    return hex_of(r("L10_4_AES_ECB").at("out")[0]);
  };
  CHECK(enc("000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff") ==
        "69c4e0d86a7b0430d8cdb78070b4c55a");
  CHECK(enc("2b7e151628aed2a6abf7158809cf4f3c", "3243f6a8885a308d313198a2e0370734") ==
        "3925841d02dc09fbdc118597196a0b32");
}

namespace {

uint32_t rotl32(uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
}

// Scalar RFC 8439 block function.
std::vector<uint8_t> chacha20_block(const std::vector<uint8_t>& key, uint32_t counter,
                                    const std::vector<uint8_t>& nonce) {
  auto le = [](const uint8_t* p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  };
  uint32_t s[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
  for (int i = 0; i < 8; ++i) s[4 + i] = le(&key[4 * i]);
  s[12] = counter;
  for (int i = 0; i < 3; ++i) s[13 + i] = le(&nonce[4 * i]);
  uint32_t x[16];
  std::copy(s, s + 16, x);
  auto qr = [&](int a, int b, int c, int d) {
    x[a] += x[b];
    x[d] = rotl32(x[d] ^ x[a], 16);
    x[c] += x[d];
    x[b] = rotl32(x[b] ^ x[c], 12);
    x[a] += x[b];
    x[d] = rotl32(x[d] ^ x[a], 8);
    x[c] += x[d];
    x[b] = rotl32(x[b] ^ x[c], 7);
  };
  for (int i = 0; i < 10; ++i) {
    qr(0, 4, 8, 12);
    qr(1, 5, 9, 13);
    qr(2, 6, 10, 14);
    qr(3, 7, 11, 15);
    qr(0, 5, 10, 15);
    qr(1, 6, 11, 12);
    qr(2, 7, 8, 13);
    qr(3, 4, 9, 14);
  }
  std::vector<uint8_t> out(64);
  for (int i = 0; i < 16; ++i)
    for (int b = 0; b < 4; ++b) out[4 * i + b] = (uint8_t)((x[i] + s[i]) >> (8 * b));
  return out;
}

}  // namespace

TEST_CASE("L10_5 ChaCha20: RFC 8439 section 2.3.2 and a scalar block function") {
  std::vector<uint8_t> key(32);
  for (int i = 0; i < 32; ++i) key[i] = (uint8_t)i;
  auto nonce = unhex("000000090000004a00000000");
  std::vector<int32_t> counters = {1, 0, 7, (int32_t)0x80000000u, (int32_t)0xffffffffu, 123456789};
  Run r;
  r.tensors = {{"key", bytes_of(key).reshape({32})},
               {"nonce", bytes_of(nonce).reshape({12})},
               {"counter", torch::tensor(counters, torch::kInt32)}};
  r.sizes = {{"num_blocks", (int64_t)counters.size()}};
  auto out = r("L10_5_ChaCha20").at("out");
  CHECK(hex_of(out[0]) ==
        "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4ed2826446079faa0914c2d705d9"
        "8b02a2b5129cd1de164e"
        "b9cbd083e8a2503c4e");
  for (size_t i = 0; i < counters.size(); ++i) {
    auto want = chacha20_block(key, (uint32_t)counters[i], nonce);
    CHECK(hex_of(out[i]) == hex_of(bytes_of(want)[0]));
  }
}

TEST_CASE("L10_6 PBKDF2-HMAC-SHA256: RFC 7914 section 11 and published vectors") {
  auto dk = [](const std::string& pw, const std::string& salt, int64_t c) {
    Run r;
    r.tensors = {{"passwords", bytes_of(pw)}, {"salts", bytes_of(salt)}};
    r.sizes = {{"batch", 1},
               {"pw_len", (int64_t)pw.size()},
               {"salt_len", (int64_t)salt.size()},
               {"iterations", c}};
    return hex_of(r("L10_6_PBKDF2").at("out")[0]);
  };
  // RFC 7914: P = "passwd", S = "salt", c = 1, dkLen = 64; the first 32 bytes.
  CHECK(dk("passwd", "salt", 1) ==
        "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc");
  CHECK(dk("password", "salt", 1) ==
        "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b");
  CHECK(dk("password", "salt", 2) ==
        "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43");
}

TEST_CASE("L10_7 BLAKE3: official test vectors (input i % 251)") {
  const std::vector<std::pair<size_t, std::string>> cases = {
      {0, "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"},
      {1, "2d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f592e213"},
      {1023, "10108970eeda3eb932baac1428c7a2163b0e924c9a9e25b35bba72b28f70bd11"},
      {1024, "42214739f095a406f3fc83deb889744ac00df831c10daa55189b5d121c855af7"},
  };
  for (const auto& [len, want] : cases) {
    INFO("input_len ", len);
    Run r;
    r.tensors = {{"messages", bytes_of(pattern251(len))}};
    r.sizes = {{"batch", 1}, {"msg_len", (int64_t)len}};
    CHECK(hex_of(r("L10_7_Blake3").at("out")[0]) == want);
  }
}

namespace {

// 256-bit numbers as 4 x 64-bit limbs, least significant first; bit-serial modular arithmetic.
using U256 = std::array<uint64_t, 4>;

// GCC's 128-bit integer (an extension: __extension__ keeps -Wpedantic quiet about it).
__extension__ typedef unsigned __int128 u128;

bool geq(const U256& a, const U256& b) {
  for (int i = 3; i >= 0; --i)
    if (a[i] != b[i]) return a[i] > b[i];
  return true;
}
U256 sub(const U256& a, const U256& b) {
  U256 r;
  u128 borrow = 0;
  for (int i = 0; i < 4; ++i) {
    u128 d = (u128)a[i] - b[i] - borrow;
    r[i] = (uint64_t)d;
    borrow = (d >> 64) ? 1 : 0;
  }
  return r;
}
// (a + b) mod m for a, b < m.
U256 addmod(const U256& a, const U256& b, const U256& m) {
  U256 r;
  u128 c = 0;
  for (int i = 0; i < 4; ++i) {
    u128 s = (u128)a[i] + b[i] + c;
    r[i] = (uint64_t)s;
    c = s >> 64;
  }
  if (c || geq(r, m)) r = sub(r, m);
  return r;
}
U256 mulmod(const U256& a, const U256& b, const U256& m) {
  U256 r = {0, 0, 0, 0};
  for (int bit = 255; bit >= 0; --bit) {
    r = addmod(r, r, m);
    if ((b[bit / 64] >> (bit % 64)) & 1) r = addmod(r, a, m);
  }
  return r;
}
U256 powmod(const U256& b, const U256& e, const U256& m) {
  U256 r = {1, 0, 0, 0};
  for (int bit = 255; bit >= 0; --bit) {
    r = mulmod(r, r, m);
    if ((e[bit / 64] >> (bit % 64)) & 1) r = mulmod(r, b, m);
  }
  return r;
}
U256 from_hex(const std::string& h) {
  U256 r = {0, 0, 0, 0};
  for (char ch : h) {
    int v = std::isdigit((unsigned char)ch) ? ch - '0' : std::tolower((unsigned char)ch) - 'a' + 10;
    for (int i = 3; i >= 0; --i) r[i] = (r[i] << 4) | (i > 0 ? r[i - 1] >> 60 : 0);
    r[0] |= (uint64_t)v;
  }
  return r;
}
torch::Tensor limbs(const U256& x) {
  auto t = torch::empty({8}, torch::kInt32);
  for (int k = 0; k < 8; ++k) t[k] = (int32_t)(uint32_t)(x[k / 2] >> (32 * (k % 2)));
  return t;
}

}  // namespace

TEST_CASE("L10_8 modular exponentiation: Python pow vector and a bit-serial brute force") {
  std::vector<U256> bs, es, ms;
  bs.push_back(from_hex("1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef"));
  es.push_back(from_hex("fedcba0987654321fedcba0987654321fedcba0987654321fedcba0987654321"));
  ms.push_back(
      from_hex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff"));  // P-256 prime
  std::mt19937_64 rng(7);
  for (int i = 0; i < 3; ++i) {
    U256 m = {rng(), rng(), rng(), rng() | (1ull << 63)}, b = {rng(), rng(), rng(), rng() >> 1},
         e = {rng(), rng(), rng(), rng()};
    m[0] |= 1;
    if (i == 2) e = {5, 0, 0, 0};  // a short exponent
    ms.push_back(m), bs.push_back(b), es.push_back(e);
  }
  std::vector<torch::Tensor> B, E, M;
  for (size_t i = 0; i < bs.size(); ++i)
    B.push_back(limbs(bs[i])), E.push_back(limbs(es[i])), M.push_back(limbs(ms[i]));
  Run r;
  r.tensors = {
      {"base", torch::stack(B)}, {"exponent", torch::stack(E)}, {"modulus", torch::stack(M)}};
  r.sizes = {{"batch", (int64_t)bs.size()}};
  auto out = r("L10_8_ModularExponentiation").at("out");
  CHECK(torch::equal(
      out[0], limbs(from_hex("6d6b39760654ac1ec81026099eb789d8bca988ab3c08970e7d1501ea6bd10c90"))));
  for (size_t i = 0; i < bs.size(); ++i) {
    INFO("case ", i);
    CHECK(torch::equal(out[i], limbs(powmod(bs[i], es[i], ms[i]))));
  }
}

// ---------------------------------------------------------------------------------------------
// Level 9: brute-force loops

TEST_CASE("L9 scans, reductions, sort, compaction, scatter, gather: brute force") {
  const int64_t n = 1001;
  auto x = torch::randint(-128, 128, {n}, torch::kInt64).to(torch::kFloat32);
  auto xa = x.accessor<float, 1>();
  {
    Run r;
    r.tensors = {{"x", x}};
    r.sizes = {{"n", n}};
    auto out = r("L9_1_PrefixSum_ExclusiveScan").at("out");
    double run = 0;
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) ok &= out[i].item<float>() == (float)run, run += xa[i];
    CHECK(ok);
    CHECK(r("L9_2_Reduction_Sum").at("out").item<float>() == (float)run);
    float mx = -INFINITY;
    for (int64_t i = 0; i < n; ++i) mx = std::max(mx, xa[i]);
    CHECK(r("L9_3_Reduction_Max").at("out").item<float>() == mx);
  }
  {
    auto flags = torch::rand({n}) < 0.05;
    Run r;
    r.tensors = {{"x", x}, {"flags", flags}};
    r.sizes = {{"n", n}, {"num_heads", flags.sum().item<int64_t>()}};
    auto out = r("L9_8_SegmentedScan").at("out");
    double run = 0;
    bool ok = true;
    for (int64_t i = 0; i < n; ++i) {
      if (i == 0 || flags[i].item<bool>()) run = 0;
      ok &= out[i].item<float>() == (float)run;
      run += xa[i];
    }
    CHECK(ok);
  }
  {
    auto keys = torch::randint(0, int64_t(1) << 31, {n}, torch::kInt64);
    Run r;
    r.tensors = {{"keys", keys}};
    r.sizes = {{"n", n}};
    std::vector<int64_t> v(keys.data_ptr<int64_t>(), keys.data_ptr<int64_t>() + n);
    std::sort(v.begin(), v.end());
    CHECK(torch::equal(r("L9_4_RadixSort").at("out"), torch::tensor(v, torch::kInt64)));
  }
  {
    auto u = torch::rand({n});
    Run r;
    r.tensors = {{"x", u}};
    r.sizes = {{"n", n}};
    r.scalars = {{"threshold", 0.5}};
    auto res = r("L9_5_Compact_StreamCompaction");
    std::vector<float> kept;
    for (int64_t i = 0; i < n; ++i)
      if (u[i].item<float>() >= 0.5f) kept.push_back(u[i].item<float>());
    REQUIRE(res.at("count").item<int64_t>() == (int64_t)kept.size());
    CHECK(torch::equal(res.at("out").narrow(0, 0, (int64_t)kept.size()), torch::tensor(kept)));
  }
  {
    const int64_t m = 97, k = 500;
    auto index = torch::randint(0, m, {k}, torch::kInt64);
    auto src = torch::randn({k});
    Run r;
    r.tensors = {{"index", index}, {"src", src}};
    r.sizes = {{"n", m}, {"num_updates", k}};
    std::vector<float> want(m, 0.0f);
    for (int64_t i = 0; i < k; ++i)
      want[index[i].item<int64_t>()] = src[i].item<float>();  // last write wins
    CHECK(torch::equal(r("L9_6_Scatter").at("out"), torch::tensor(want)));
    Run g;
    auto source = torch::randn({m});
    g.tensors = {{"source", source}, {"index", index}};
    g.sizes = {{"num_source", m}, {"num_index", k}};
    std::vector<float> gw(k);
    for (int64_t i = 0; i < k; ++i) gw[i] = source[index[i].item<int64_t>()].item<float>();
    CHECK(torch::equal(g("L9_7_Gather").at("out"), torch::tensor(gw)));
  }
}

// ---------------------------------------------------------------------------------------------
// Level 8: brute-force loops at tiny sizes

TEST_CASE("L8_1 block matching: brute-force full search") {
  const int64_t H = 35, W = 50;  // 2 x 3 whole blocks, partial rows/columns left over
  auto cur = torch::randint(0, 256, {H, W}, torch::kInt64).to(torch::kUInt8);
  auto ref = torch::randint(0, 256, {H, W}, torch::kInt64).to(torch::kUInt8);
  Run r;
  r.tensors = {{"current", cur}, {"reference", ref}};
  r.sizes = {{"height", H}, {"width", W}};
  r.scalars = {{"block_size", 16}, {"search_range", 16}};
  auto res = r("L8_1_MotionEstimation_BlockMatch");
  auto c = cur.accessor<uint8_t, 2>(), f = ref.accessor<uint8_t, 2>();
  for (int64_t by = 0; by < H / 16; ++by)
    for (int64_t bx = 0; bx < W / 16; ++bx) {
      int best = 1 << 30, bdx = 0, bdy = 0;
      for (int dy = -16; dy <= 16; ++dy)
        for (int dx = -16; dx <= 16; ++dx) {
          int sad = 0;
          for (int i = 0; i < 16; ++i)
            for (int j = 0; j < 16; ++j) {
              int64_t y = by * 16 + i + dy, xx = bx * 16 + j + dx;
              int rv = (y >= 0 && y < H && xx >= 0 && xx < W) ? f[y][xx] : 0;
              sad += std::abs((int)c[by * 16 + i][bx * 16 + j] - rv);
            }
          if (sad < best) best = sad, bdx = dx, bdy = dy;  // first in scan order wins ties
        }
      CHECK(res.at("min_sad")[by][bx].item<int>() == best);
      CHECK(res.at("motion_x")[by][bx].item<int>() == bdx);
      CHECK(res.at("motion_y")[by][bx].item<int>() == bdy);
    }
}

TEST_CASE("L8_2 Lucas-Kanade: brute-force windows in double precision, zero-padded Sobel") {
  const int64_t H = 12, W = 17;
  auto f1 = torch::rand({H, W}), f2 = torch::rand({H, W});
  Run r;
  r.tensors = {{"frame1", f1}, {"frame2", f2}};
  r.sizes = {{"height", H}, {"width", W}};
  r.scalars = {{"window", 15}, {"det_eps", 1e-6}};
  auto res = r("L8_2_OpticalFlow_LucasKanade");
  auto refl = [](int64_t i, int64_t n) { return i < 0 ? -i : (i >= n ? 2 * (n - 1) - i : i); };
  auto a = f1.accessor<float, 2>(), b = f2.accessor<float, 2>();
  // Sobel taps read zeros outside the frame (conv2d padding=1); the windows reflect.
  auto I = [&](int64_t y, int64_t x) {
    if (y < 0 || y >= H || x < 0 || x >= W) return 0.0;
    return 0.5 * ((double)a[y][x] + b[y][x]);
  };
  auto gx = [&](int64_t y, int64_t x) {
    return (I(y - 1, x + 1) + 2 * I(y, x + 1) + I(y + 1, x + 1)) -
           (I(y - 1, x - 1) + 2 * I(y, x - 1) + I(y + 1, x - 1));
  };
  auto gy = [&](int64_t y, int64_t x) {
    return (I(y + 1, x - 1) + 2 * I(y + 1, x) + I(y + 1, x + 1)) -
           (I(y - 1, x - 1) + 2 * I(y - 1, x) + I(y - 1, x + 1));
  };
  double worst = 0;
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x) {
      double sxx = 0, syy = 0, sxy = 0, sxt = 0, syt = 0;
      for (int64_t dy = -7; dy <= 7; ++dy)
        for (int64_t dx = -7; dx <= 7; ++dx) {
          int64_t yy = refl(y + dy, H), xx = refl(x + dx, W);
          double ix = gx(yy, xx), iy = gy(yy, xx), it = (double)b[yy][xx] - a[yy][xx];
          sxx += ix * ix, syy += iy * iy, sxy += ix * iy, sxt += ix * it, syt += iy * it;
        }
      double det = sxx * syy - sxy * sxy;
      double u = std::abs(det) > 1e-6 ? (sxy * syt - syy * sxt) / det : 0;
      double v = std::abs(det) > 1e-6 ? (sxy * sxt - sxx * syt) / det : 0;
      worst = std::max(
          {worst, std::abs(u - res.at("u")[y][x].item<double>()) / (1e-4 + 1e-4 * std::abs(u)),
           std::abs(v - res.at("v")[y][x].item<double>()) / (1e-4 + 1e-4 * std::abs(v))});
    }
  CHECK(worst <= 1.0);
}

namespace {

// Bilinear sample of a [H, W] plane at (x, y), pixel centres at integers; border clamps the
// coordinates, zeros drops out-of-frame taps.
double bilinear(const float* p, int64_t H, int64_t W, double x, double y, bool border) {
  if (border)
    x = std::min(std::max(x, 0.0), double(W - 1)), y = std::min(std::max(y, 0.0), double(H - 1));
  int64_t x0 = (int64_t)std::floor(x), y0 = (int64_t)std::floor(y);
  double wx = x - x0, wy = y - y0, s = 0;
  for (int dy = 0; dy < 2; ++dy)
    for (int dx = 0; dx < 2; ++dx) {
      int64_t xx = x0 + dx, yy = y0 + dy;
      double w = (dx ? wx : 1 - wx) * (dy ? wy : 1 - wy);
      if (w == 0) continue;
      if (xx < 0 || xx >= W || yy < 0 || yy >= H) continue;
      s += w * p[yy * W + xx];
    }
  return s;
}

}  // namespace

TEST_CASE("L8_3 / L8_4 / L8_5 warps: scalar bilinear formulas in pixel coordinates") {
  const int64_t H = 9, W = 13;
  {  // frame interpolation: flow normalized by W / 2, so u pixels move the sample u (W - 1) / W
    auto f0 = torch::rand({2, H, W}), f1 = torch::rand({2, H, W});
    auto flow = torch::randn({H, W, 2}) * 3;
    Run r;
    r.tensors = {{"frame0", f0}, {"frame1", f1}, {"flow_01", flow}};
    r.sizes = {{"channels", 2}, {"height", H}, {"width", W}};
    r.scalars = {{"t", 0.5}};
    auto out = r("L8_3_FrameInterpolation").at("out");
    const double kx = double(W - 1) / W, ky = double(H - 1) / H;
    double worst = 0;
    for (int64_t c = 0; c < 2; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) {
          double u = flow[y][x][0].item<double>() * kx, v = flow[y][x][1].item<double>() * ky;
          double w0 = bilinear(f0[c].data_ptr<float>(), H, W, x - 0.5 * u, y - 0.5 * v, true);
          double w1 = bilinear(f1[c].data_ptr<float>(), H, W, x + 0.5 * u, y + 0.5 * v, true);
          worst = std::max(worst, std::abs(0.5 * w0 + 0.5 * w1 - out[c][y][x].item<double>()));
        }
    CHECK(worst < 1e-4);
  }
  {  // temporal denoising, 5 frames, zeros padding
    auto frames = torch::rand({5, H, W}), flows = torch::randn({4, H, W, 2}) * 2;
    Run r;
    r.tensors = {{"frames", frames}, {"flows", flows}};
    r.sizes = {{"num_frames", 5}, {"height", H}, {"width", W}};
    auto out = r("L8_4_VideoDenoising_Temporal").at("out");
    auto fl = flows.accessor<float, 4>();
    const double kx = double(W - 1) / W, ky = double(H - 1) / H;
    double worst = 0;
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x) {
        double num = frames[2][y][x].item<double>(), den = 1;
        for (int t : {0, 1, 3, 4}) {
          double cx = 0, cy = 0;
          if (t < 2)
            for (int i = t; i < 2; ++i) cx += fl[i][y][x][0], cy += fl[i][y][x][1];
          else
            for (int i = 2; i < t; ++i) cx -= fl[i][y][x][0], cy -= fl[i][y][x][1];
          double w = std::exp(-std::sqrt(cx * cx + cy * cy) / 10);
          num += w * bilinear(frames[t].data_ptr<float>(), H, W, x - cx * kx, y - cy * ky, false);
          den += w;
        }
        worst = std::max(worst, std::abs(num / den - out[y][x].item<double>()));
      }
    CHECK(worst < 1e-4);
  }
  {  // stabilization: a homography with perspective terms, inverted here in double
    auto frame = torch::rand({1, H, W});
    double h[9] = {0.99, -0.03, 1.5, 0.04, 1.01, -0.7, 2e-3, -1e-3, 1.0};
    auto hm = torch::tensor(std::vector<double>(h, h + 9), torch::kFloat64).view({3, 3});
    Run r;
    r.tensors = {{"frame", frame}, {"homography", hm.to(torch::kFloat32)}};
    r.sizes = {{"channels", 1}, {"height", H}, {"width", W}};
    auto out = r("L8_5_VideoStabilization").at("out");
    auto inv = torch::inverse(hm.to(torch::kFloat32).to(torch::kFloat64));
    auto iv = inv.accessor<double, 2>();
    double worst = 0;
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x) {
        double sx = iv[0][0] * x + iv[0][1] * y + iv[0][2],
               sy = iv[1][0] * x + iv[1][1] * y + iv[1][2];
        double sw = iv[2][0] * x + iv[2][1] * y + iv[2][2];
        worst = std::max(
            worst, std::abs(bilinear(frame[0].data_ptr<float>(), H, W, sx / sw, sy / sw, false) -
                            out[0][y][x].item<double>()));
      }
    CHECK(worst < 1e-4);
  }
}

TEST_CASE("L8_6 chroma upsampling: direct half-pixel bilinear formula") {
  const int64_t h = 5, w = 7, H = 2 * h, W = 2 * w;
  auto y = torch::rand({H, W}), u = torch::rand({h, w}), v = torch::rand({h, w});
  Run r;
  r.tensors = {{"y_full", y}, {"u_half", u}, {"v_half", v}};
  r.sizes = {{"half_height", h}, {"half_width", w}};
  auto res = r("L8_6_ChromaUpsampling");
  CHECK(torch::equal(res.at("y_out"), y));
  double worst = 0;
  for (int64_t Y = 0; Y < H; ++Y)
    for (int64_t X = 0; X < W; ++X) {
      double sx = std::max((X + 0.5) / 2 - 0.5, 0.0), sy = std::max((Y + 0.5) / 2 - 0.5, 0.0);
      // clamp to the last sample: replicate the far edge
      for (int c = 0; c < 2; ++c) {
        const float* p = (c == 0 ? u : v).data_ptr<float>();
        int64_t x0 = (int64_t)sx, y0 = (int64_t)sy, x1 = std::min(x0 + 1, w - 1),
                y1 = std::min(y0 + 1, h - 1);
        double lx = sx - x0, ly = sy - y0;
        double want = (1 - ly) * ((1 - lx) * p[y0 * w + x0] + lx * p[y0 * w + x1]) +
                      ly * ((1 - lx) * p[y1 * w + x0] + lx * p[y1 * w + x1]);
        worst = std::max(
            worst, std::abs(want - res.at(c == 0 ? "u_full" : "v_full")[Y][X].item<double>()));
      }
    }
  CHECK(worst < 1e-5);
}

TEST_CASE("L8_7 deblocking: sequential scalar filter, as the original's loops") {
  const int64_t H = 27, W = 34;
  // Levels per 8x8 block a little apart, small noise: many edges pass the thresholds.
  auto level =
      (torch::rand({1, 4, 5}) * 0.15f + 0.4f).repeat_interleave(8, 1).repeat_interleave(8, 2);
  auto frame = (level.narrow(1, 0, H).narrow(2, 0, W) + (torch::rand({1, H, W}) - 0.5f) * 0.04f)
                   .contiguous();
  Run r;
  r.tensors = {{"frame", frame}};
  r.sizes = {{"batch", 1}, {"height", H}, {"width", W}};
  r.scalars = {{"block_size", 8}, {"alpha", 0.1}, {"beta", 0.05}};
  auto out = r("L8_7_DeblockingFilter").at("out");
  // The original's loops: pass 1 reads the input and writes a copy, pass 2 reads the result of
  // pass 1; every sum in float, left to right.
  std::vector<std::vector<float>> in(H, std::vector<float>(W));
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x) in[y][x] = frame[0][y][x].item<float>();
  const float alpha = 0.1f, beta = 0.05f;
  auto on = [&](float p1, float p0, float q0, float q1) {
    return std::fabs(p0 - q0) < alpha && std::fabs(p1 - p0) < beta && std::fabs(q1 - q0) < beta;
  };
  auto np = [](float p1, float p0, float q0) {
    volatile float t = 2.0f * p1;
    t = t + p0;
    t = t + q0;
    t = t + 2.0f;
    return t / 4.0f;
  };
  auto pass1 = in;
  for (int64_t x = 8; x < W - 1; x += 8)
    for (int64_t y = 0; y < H; ++y) {
      float p1 = in[y][x - 2], p0 = in[y][x - 1], q0 = in[y][x], q1 = in[y][x + 1];
      if (on(p1, p0, q0, q1)) pass1[y][x - 1] = np(p1, p0, q0), pass1[y][x] = np(q1, q0, p0);
    }
  auto want = pass1;
  for (int64_t y = 8; y < H - 1; y += 8)
    for (int64_t x = 0; x < W; ++x) {
      float p1 = pass1[y - 2][x], p0 = pass1[y - 1][x], q0 = pass1[y][x], q1 = pass1[y + 1][x];
      if (on(p1, p0, q0, q1)) want[y - 1][x] = np(p1, p0, q0), want[y][x] = np(q1, q0, p0);
    }
  int mismatches = 0, changed = 0;
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x) {
      mismatches += out[0][y][x].item<float>() != want[y][x];
      changed += want[y][x] != in[y][x];
    }
  CHECK(mismatches == 0);  // bit-identical
  CHECK(changed > 20);
}

TEST_CASE("L8_8 scene change: scalar statistics") {
  const int64_t B = 4, H = 7, W = 9;
  auto a = torch::rand({B, H, W}), b = torch::rand({B, H, W});
  b[1] = a[1];                // identical pair
  a[2][0][0] = 1.0f;          // v = 1 falls in the last bin
  b[3] = a[3] * 0.5f + 0.1f;  // similar histogram spread, large SAD
  Run r;
  r.tensors = {{"frame1", a}, {"frame2", b}};
  r.sizes = {{"batch", B}, {"height", H}, {"width", W}};
  r.scalars = {{"sad_threshold", 0.3}, {"hist_threshold", 0.5}};
  auto res = r("L8_8_SceneChangeDetect");
  for (int64_t i = 0; i < B; ++i) {
    double sad = 0, mean_abs = 0;
    std::vector<double> h1(32, 0), h2(32, 0);
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x) {
        float va = a[i][y][x].item<float>(), vb = b[i][y][x].item<float>();
        sad += std::abs((double)va - vb);
        mean_abs += std::abs((double)va);
        h1[std::min(31, std::max(0, (int)(va * 31.0f)))] += 1.0 / (H * W);
        h2[std::min(31, std::max(0, (int)(vb * 31.0f)))] += 1.0 / (H * W);
      }
    double score = (sad / (H * W)) / std::max(mean_abs / (H * W), 1e-6);
    double chi = 0;
    for (int k = 0; k < 32; ++k) chi += (h1[k] - h2[k]) * (h1[k] - h2[k]) / (h1[k] + h2[k] + 1e-10);
    chi /= 2;
    CHECK(res.at("sad_score")[i].item<double>() == doctest::Approx(score).epsilon(1e-5));
    CHECK(res.at("chi_sq")[i].item<double>() == doctest::Approx(chi).epsilon(1e-5));
    CHECK(res.at("is_scene_change")[i].item<bool>() == (score > 0.3 || chi > 0.5));
  }
  CHECK(res.at("chi_sq")[1].item<double>() == 0.0);
}
