#include "references/reference.h"
#include "references/sha256.h"

namespace kernrl::problems::L10_6_PBKDF2 {
using namespace kernrl::refs::sha256;
using Tensor = torch::Tensor;
// Padded SHA-256 blocks (as word tensors) of a message suffix `bytes` ([B, L] uint8) that follows
// `prefix_len` already-compressed bytes.
inline std::vector<Tensor> padded_suffix_words(const Tensor& bytes, int64_t prefix_len) {
  int64_t B = bytes.size(0), L = bytes.size(1);
  int64_t blocks = (L + 8) / 64 + 1;
  auto padded = torch::zeros({B, blocks * 64}, bytes.options().dtype(torch::kUInt8));
  padded.narrow(1, 0, L).copy_(bytes);
  padded.narrow(1, L, 1).fill_(0x80);
  uint64_t bits = (uint64_t)(prefix_len + L) * 8;
  for (int i = 0; i < 8; ++i)
    padded.narrow(1, blocks * 64 - 1 - i, 1).fill_((int64_t)((bits >> (8 * i)) & 255));
  return bytes_to_words(padded);
}

inline std::vector<Tensor> compress_all(std::vector<Tensor> state, const std::vector<Tensor>& words) {
  for (size_t k = 0; k < words.size(); k += 16)
    state = compress(state, std::vector<Tensor>(words.begin() + k, words.begin() + k + 16));
  return state;
}

// Compression of a 32-byte value (8 words) as the final block of a 96-byte message.
inline std::vector<Tensor> compress_96(const std::vector<Tensor>& state, const std::vector<Tensor>& value) {
  std::vector<Tensor> w(value.begin(), value.end());
  auto zero = torch::zeros_like(value[0]);
  w.push_back(zero + int64_t(0x80000000LL));
  for (int k = 9; k < 15; ++k) w.push_back(zero);
  w.push_back(zero + 768);
  return compress(state, w);
}

// PBKDF2-HMAC-SHA256 (RFC 8018) with dkLen = 32: T = U_1 ^ ... ^ U_c,
// U_1 = HMAC(P, S || INT(1)), U_j = HMAC(P, U_{j-1}). Keys (passwords) are at most 64 bytes.
TensorMap reference(const RefContext& c) {
  const auto& pw = c.t("passwords");
  const auto& salt = c.t("salts");
  int64_t B = pw.size(0), P = pw.size(1);
  int64_t iterations = c.size("iterations");
  TORCH_CHECK(P <= 64, "passwords longer than the 64-byte HMAC block are not supported");
  auto key = torch::zeros({B, 64}, pw.options().dtype(torch::kUInt8));
  key.narrow(1, 0, P).copy_(pw);
  auto kw = bytes_to_words(key);
  std::vector<Tensor> ipad, opad;
  for (auto& w : kw) {
    ipad.push_back(w ^ int64_t(0x36363636));
    opad.push_back(w ^ int64_t(0x5c5c5c5c));
  }
  auto iv = initial_state(pw);
  auto istate = compress(iv, ipad);
  auto ostate = compress(iv, opad);
  auto block_index = torch::zeros({B, 4}, pw.options().dtype(torch::kUInt8));
  block_index.narrow(1, 3, 1).fill_(1);
  auto first = torch::cat({salt, block_index}, 1);
  auto u = compress_96(ostate, compress_all(istate, padded_suffix_words(first, 64)));
  auto t = u;
  for (int64_t j = 1; j < iterations; ++j) {
    u = compress_96(ostate, compress_96(istate, u));
    for (int k = 0; k < 8; ++k) t[k] = t[k] ^ u[k];
  }
  return {{"out", words_to_bytes(t)}};
}

KERNRL_REFERENCE("L10_6_PBKDF2", reference);

}  // namespace kernrl::problems::L10_6_PBKDF2
