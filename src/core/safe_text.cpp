#include "core/safe_text.h"

#include <algorithm>

namespace kernrl {
using nlohmann::json;

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the byte there starts none
// (Unicode 15, table 3-7: well-formed UTF-8 byte sequences).
size_t valid_sequence_at(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
  } else {
    return 0;  // a continuation byte, C0/C1 (overlong) or F5..FF
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

bool is_continuation(unsigned char c) {
  return c >= 0x80 && c <= 0xBF;
}

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    size_t n = valid_sequence_at(s, i);
    if (!n) return false;
    i += n;
  }
  return true;
}

namespace {
// Copies `s`, writing each byte that is not part of a valid UTF-8 sequence with `escape`.
template <class Escape>
std::string map_invalid_utf8(std::string_view s, Escape escape) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    size_t n = valid_sequence_at(s, i);
    if (n) {
      out.append(s.data() + i, n);
      i += n;
    } else {
      escape(out, static_cast<unsigned char>(s[i++]));
    }
  }
  return out;
}
}  // namespace

std::string escape_invalid_utf8(std::string_view s) {
  static const char hex[] = "0123456789abcdef";
  return map_invalid_utf8(s, [](std::string& out, unsigned char c) {
    out += "\\x";
    out += hex[c >> 4];
    out += hex[c & 15];
  });
}

std::string octal_escape_invalid_utf8(std::string_view s) {
  return map_invalid_utf8(s, [](std::string& out, unsigned char c) {
    out += '\\';
    out += static_cast<char>('0' + (c >> 6));
    out += static_cast<char>('0' + ((c >> 3) & 7));
    out += static_cast<char>('0' + (c & 7));
  });
}

void escape_invalid_utf8_in(json& j) {
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    if (!is_valid_utf8(s)) j = escape_invalid_utf8(s);
  } else if (j.is_array()) {
    for (json& v : j) escape_invalid_utf8_in(v);
  } else if (j.is_object()) {
    bool bad_key = false;
    for (auto it = j.begin(); it != j.end(); ++it) {
      bad_key |= !is_valid_utf8(it.key());
      escape_invalid_utf8_in(it.value());
    }
    if (bad_key) {
      json fixed = json::object();
      for (auto it = j.begin(); it != j.end(); ++it)
        fixed[escape_invalid_utf8(it.key())] = std::move(it.value());
      j = std::move(fixed);
    }
  }
}

std::string cap_text(const std::string& s, size_t cap, size_t* cut, double head_share) {
  if (cut) *cut = 0;
  if (s.size() <= cap) return s;
  // The note's digits are bounded by those of s.size(), so its length is known before cutting.
  std::string probe = "\n[... kernrl cut " + std::to_string(s.size()) + " of " +
                      std::to_string(s.size()) + " bytes ...]\n";
  size_t budget = cap > probe.size() ? cap - probe.size() : 0;
  head_share = std::min(1.0, std::max(0.0, head_share));
  size_t head = static_cast<size_t>(static_cast<double>(budget) * head_share);
  if (head > budget) head = budget;
  size_t tail_start = s.size() - (budget - head);
  while (head > 0 && is_continuation(static_cast<unsigned char>(s[head]))) --head;
  while (tail_start < s.size() && is_continuation(static_cast<unsigned char>(s[tail_start])))
    ++tail_start;
  size_t removed = tail_start - head;
  if (cut) *cut = removed;
  return s.substr(0, head) + "\n[... kernrl cut " + std::to_string(removed) + " of " +
         std::to_string(s.size()) + " bytes ...]\n" + s.substr(tail_start);
}

}  // namespace kernrl
