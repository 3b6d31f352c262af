#pragma once

#include <cstdint>
#include <string>

namespace kernrl {

// Lower-case hex SHA-256 of `data` (OpenSSL).
std::string sha256_hex(const std::string& data);

// The bytes of standard base64 text (OpenSSL); throws std::runtime_error when it is not base64.
std::string base64_decode(const std::string& text);

// A well-mixed 64-bit seed for `tag` under `base` (splitmix64 over the tag's bytes): every trial,
// input set and tensor gets its own stream from one run seed.
uint64_t derive_seed(uint64_t base, const std::string& tag);

// 32 bytes from the operating system's random source (OpenSSL's RAND_bytes): a secret key for
// keyed_seed that lives only in one process.
std::string fresh_secret_key();

// A seed for `tag` under `base` that cannot be predicted without `key`: the first 8 bytes of
// HMAC-SHA256(key, base || tag). What a client sees (base, tag, earlier seeds) does not tell the
// next one.
uint64_t keyed_seed(const std::string& key, uint64_t base, const std::string& tag);

}  // namespace kernrl
