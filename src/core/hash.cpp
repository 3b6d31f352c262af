#include "core/hash.h"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <stdexcept>

namespace kernrl {

std::string base64_decode(const std::string& text) {
  if (text.size() % 4 != 0) throw std::runtime_error("not base64 (length)");
  std::string out(text.size() / 4 * 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0) throw std::runtime_error("not base64");
  size_t pad = 0;
  if (!text.empty() && text.back() == '=') ++pad;
  if (text.size() > 1 && text[text.size() - 2] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

std::string sha256_hex(const std::string& data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr) != 1)
    throw std::runtime_error("SHA-256 failed");
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) {
    out += hex[md[i] >> 4];
    out += hex[md[i] & 15];
  }
  return out;
}

uint64_t derive_seed(uint64_t base, const std::string& tag) {
  auto mix = [](uint64_t z) {
    z += 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  uint64_t h = mix(base);
  for (unsigned char c : tag) h = mix(h ^ c);
  return h;
}

std::string fresh_secret_key() {
  std::string key(32, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&key[0]), static_cast<int>(key.size())) != 1)
    throw std::runtime_error("the system's random source failed");
  return key;
}

uint64_t keyed_seed(const std::string& key, uint64_t base, const std::string& tag) {
  std::string msg(8, '\0');
  for (int i = 0; i < 8; ++i) msg[static_cast<size_t>(i)] = static_cast<char>(base >> (8 * i));
  msg += tag;
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
            reinterpret_cast<const unsigned char*>(msg.data()), msg.size(), md, &len) ||
      len < 8)
    throw std::runtime_error("HMAC-SHA256 failed");
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | md[i];
  return v;
}

}  // namespace kernrl
