// UTF-8 helpers for Python-like string semantics: len(), indexing and slicing count code
// points, not bytes. Invalid bytes decode as single units (U+FFFD-like) so nothing throws.
//   std::vector<uint32_t> cps = utf8_decode(s); append_utf8(out, cps[0]);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paddock::jinja {

void append_utf8(std::string& out, uint32_t cp);
// Byte offsets of each code point start, plus a final entry s.size().
std::vector<size_t> utf8_offsets(std::string_view s);
std::vector<uint32_t> utf8_decode(std::string_view s);
bool is_ascii(std::string_view s);

}  // namespace paddock::jinja
