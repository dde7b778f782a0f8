#include "tokenizer/unicode.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>
#include <atomic>
#include <memory>

#include "base/check.h"

namespace paddock::tok {

namespace {

constexpr uint32_t kMaxCodepoint = 0x10FFFF;
constexpr uint16_t kComputed = 1 << 15;

// The Unicode White_Space property (what llama.cpp's unicode_set_whitespace holds).
bool is_white_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

// One anchored pattern whose capture groups name the general category of one codepoint.
class CategoryMatcher {
 public:
  CategoryMatcher() {
    static constexpr char kPattern[] =
        "(\\p{L})|(\\p{N})|(\\p{P})|(\\p{S})|(\\p{M})|(\\p{Z})|(\\p{Cn})|(\\p{C})";
    int err = 0;
    PCRE2_SIZE off = 0;
    code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kPattern), PCRE2_ZERO_TERMINATED,
                          PCRE2_UTF | PCRE2_ANCHORED, &err, &off, nullptr);
    PADDOCK_CHECK(code_ != nullptr);
  }
  ~CategoryMatcher() { pcre2_code_free(code_); }
  CategoryMatcher(const CategoryMatcher&) = delete;
  CategoryMatcher& operator=(const CategoryMatcher&) = delete;

  uint16_t flags(uint32_t cp) const {
    std::string s;
    append_utf8(s, cp);
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(code_, nullptr);
    const int rc = pcre2_match(code_, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), 0, 0, md, nullptr);
    uint16_t f = 0;
    if (rc > 1) {
      static constexpr std::array<uint16_t, 8> kByGroup = {kLetter, kNumber,    kPunctuation, kSymbol,
                                                           kMark,   kSeparator, kUnassigned,  kControl};
      f = kByGroup[static_cast<size_t>(rc - 2)];
    }
    pcre2_match_data_free(md);
    return f;
  }

 private:
  pcre2_code* code_ = nullptr;
};

uint16_t compute_flags(uint32_t cp) {
  static const CategoryMatcher matcher;
  uint16_t f = kDefined;
  if (cp >= 0xD800 && cp <= 0xDFFF) {
    f |= kControl;  // surrogates (Cs) are not valid in PCRE2's UTF subjects
  } else {
    f |= matcher.flags(cp);
  }
  if (is_white_space(cp)) f |= kWhitespace;
  return f;
}

// Flags are computed on first use of each codepoint and cached; concurrent first uses compute
// the same value, so relaxed atomics suffice.
std::atomic<uint16_t> g_flags[kMaxCodepoint + 1];

struct ByteMaps {
  std::array<std::string, 256> to_unicode;
  std::array<int16_t, 324> from_unicode;  // codepoints used by the mapping are < 324
  ByteMaps() {
    from_unicode.fill(-1);
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const uint32_t cp = printable ? static_cast<uint32_t>(b) : static_cast<uint32_t>(256 + n++);
      append_utf8(to_unicode[static_cast<size_t>(b)], cp);
      from_unicode[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteMaps& byte_maps() {
  static const ByteMaps maps;
  return maps;
}

}  // namespace

uint16_t codepoint_flags(uint32_t cp) {
  if (cp > kMaxCodepoint) return 0;
  uint16_t f = g_flags[cp].load(std::memory_order_relaxed);
  if (f & kComputed) return static_cast<uint16_t>(f & ~kComputed);
  f = compute_flags(cp);
  g_flags[cp].store(static_cast<uint16_t>(f | kComputed), std::memory_order_relaxed);
  return f;
}

Utf8Text decode_utf8(std::string_view s) {
  Utf8Text t;
  t.cpts.reserve(s.size());
  t.offs.reserve(s.size() + 1);
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  auto cont = [&](size_t i) { return i < n && (p[i] & 0xC0) == 0x80; };
  size_t i = 0;
  while (i < n) {
    const uint8_t b = p[i];
    uint32_t cp = kReplacementChar;
    size_t len = 1;
    if (b < 0x80) {
      cp = b;
    } else if (b >= 0xC0 && b < 0xE0 && cont(i + 1)) {
      cp = (uint32_t{b & 0x1Fu} << 6) | (p[i + 1] & 0x3Fu);
      len = 2;
    } else if (b >= 0xE0 && b < 0xF0 && cont(i + 1) && cont(i + 2)) {
      cp = (uint32_t{b & 0x0Fu} << 12) | (uint32_t{p[i + 1] & 0x3Fu} << 6) | (p[i + 2] & 0x3Fu);
      len = 3;
    } else if (b >= 0xF0 && b < 0xF8 && cont(i + 1) && cont(i + 2) && cont(i + 3)) {
      const uint32_t v = (uint32_t{b & 0x07u} << 18) | (uint32_t{p[i + 1] & 0x3Fu} << 12) |
                         (uint32_t{p[i + 2] & 0x3Fu} << 6) | (p[i + 3] & 0x3Fu);
      if (v <= kMaxCodepoint) {
        cp = v;
        len = 4;
      }
    }
    t.cpts.push_back(cp);
    t.offs.push_back(static_cast<uint32_t>(i));
    i += len;
  }
  t.offs.push_back(static_cast<uint32_t>(n));
  return t;
}

size_t incomplete_utf8_suffix(std::string_view s) {
  const size_t n = s.size();
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const auto b = static_cast<uint8_t>(s[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: look further back for the lead
    size_t need = 0;
    if (b >= 0xC0 && b < 0xE0)
      need = 2;
    else if (b >= 0xE0 && b < 0xF0)
      need = 3;
    else if (b >= 0xF0 && b < 0xF8)
      need = 4;
    return need > back ? back : 0;
  }
  return 0;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp <= 0x7F) {
    out.push_back(static_cast<char>(cp));
  } else if (cp <= 0x7FF) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp <= 0xFFFF) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | ((cp >> 18) & 0x07)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

uint32_t to_lower(uint32_t cp) {
  // The blocks where upper and lower case differ by a fixed offset or alternate in pairs;
  // enough for WordPiece's lower-casing of Latin, Greek, Cyrillic, Armenian and full-width text.
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) || (cp >= 0x391 && cp <= 0x3AB && cp != 0x3A2) ||
      (cp >= 0x410 && cp <= 0x42F) || (cp >= 0xFF21 && cp <= 0xFF3A)) {
    return cp + 32;
  }
  if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
  if (cp >= 0x531 && cp <= 0x556) return cp + 48;
  const bool even_upper = (cp >= 0x100 && cp <= 0x12F) || (cp >= 0x132 && cp <= 0x137) ||
                          (cp >= 0x14A && cp <= 0x177) || (cp >= 0x460 && cp <= 0x481) ||
                          (cp >= 0x48A && cp <= 0x4BF) || (cp >= 0x4D0 && cp <= 0x52F) ||
                          (cp >= 0x1E00 && cp <= 0x1E95) || (cp >= 0x1EA0 && cp <= 0x1EFF);
  if (even_upper) return (cp % 2 == 0) ? cp + 1 : cp;
  const bool odd_upper =
      (cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E) || (cp >= 0x4C1 && cp <= 0x4CE);
  if (odd_upper) return (cp % 2 == 1) ? cp + 1 : cp;
  return cp;
}

const std::string& byte_to_unicode(uint8_t b) { return byte_maps().to_unicode[b]; }

int unicode_to_byte(uint32_t cp) {
  const auto& m = byte_maps().from_unicode;
  return cp < m.size() ? m[cp] : -1;
}

}  // namespace paddock::tok
