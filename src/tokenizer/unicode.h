// Unicode helpers for the tokenizers: lenient UTF-8 decoding (invalid bytes become one
// "replacement" codepoint each, as llama.cpp does, but keep their original bytes), codepoint
// category flags (Unicode general categories from PCRE2's tables, whitespace as llama.cpp
// defines it), simple lower-casing, and GPT-2's byte <-> printable-codepoint mapping.
// Everything here is pure or lazily cached with atomics, so it is thread-safe.
//   Utf8Text t = decode_utf8(text); uint16_t f = codepoint_flags(t.cpts[0]);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace paddock::tok {

inline constexpr uint32_t kReplacementChar = 0xFFFD;

// Category flags; kDefined is set for every codepoint <= 0x10FFFF so "no flags" means "out of
// range" (llama.cpp's sentinel in its hand-written splitters).
enum CpFlag : uint16_t {
  kLetter = 1 << 0,
  kNumber = 1 << 1,
  kPunctuation = 1 << 2,
  kSymbol = 1 << 3,
  kMark = 1 << 4,
  kSeparator = 1 << 5,
  kControl = 1 << 6,     // Cc, Cf, Co, Cs
  kUnassigned = 1 << 7,  // Cn
  kWhitespace = 1 << 8,
  kDefined = 1 << 9,
};

uint16_t codepoint_flags(uint32_t cp);

// Byte length of a UTF-8 sequence from its lead byte, as llama.cpp's unicode_len_utf8 (a
// continuation byte counts as 1).
inline size_t utf8_len(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

// Decoded text: cpts[i] starts at byte offs[i]; offs has one extra entry (the text size).
// A byte that does not start a valid sequence decodes to kReplacementChar and spans one byte.
struct Utf8Text {
  std::vector<uint32_t> cpts;
  std::vector<uint32_t> offs;
};
Utf8Text decode_utf8(std::string_view s);

// Number of trailing bytes of s that begin a valid UTF-8 character but do not finish it yet
// (0 to 3): a stream must hold them back until the next bytes arrive.
size_t incomplete_utf8_suffix(std::string_view s);

void append_utf8(std::string& out, uint32_t cp);
uint32_t to_lower(uint32_t cp);

// GPT-2 byte-level BPE: every byte maps to one printable codepoint (as UTF-8).
const std::string& byte_to_unicode(uint8_t b);
// Inverse of byte_to_unicode for one codepoint; -1 if cp is not such a codepoint.
int unicode_to_byte(uint32_t cp);

}  // namespace paddock::tok
