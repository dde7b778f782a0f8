// UTF-8 decoding shared by the Go-compatible printers (JSON, %q, js escaping).
// decode_utf8 never reads past the end and consumes one byte of an invalid sequence, as Go does.
//   size_t i = 0; int32_t r = decode_utf8(s, &i);  // r == kRuneError for bad bytes
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace paddock::chat {

inline constexpr int32_t kRuneError = -1;

inline int32_t decode_utf8(std::string_view s, size_t* i) {
  const auto b0 = static_cast<unsigned char>(s[*i]);
  if (b0 < 0x80) {
    ++*i;
    return b0;
  }
  int n = 0;
  int32_t r = 0;
  int32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 1, r = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 2, r = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 3, r = b0 & 0x07, min = 0x10000;
  } else {
    ++*i;
    return kRuneError;
  }
  if (*i + n >= s.size()) {
    ++*i;
    return kRuneError;
  }
  for (int k = 1; k <= n; ++k) {
    const auto b = static_cast<unsigned char>(s[*i + k]);
    if ((b & 0xC0) != 0x80) {
      ++*i;
      return kRuneError;
    }
    r = (r << 6) | (b & 0x3F);
  }
  if (r < min || r > 0x10FFFF || (r >= 0xD800 && r <= 0xDFFF)) {
    ++*i;
    return kRuneError;
  }
  *i += n + 1;
  return r;
}

inline void append_utf8(std::string* out, int32_t r) {
  if (r < 0x80) {
    out->push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (r >> 6)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (r >> 12)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (r >> 18)));
    out->push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

}  // namespace paddock::chat
