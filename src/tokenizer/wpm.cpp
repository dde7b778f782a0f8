// WordPiece as llama.cpp's llm_tokenizer_wpm_session: NFD-normalise (keeping each
// character's base letter), lower-case, drop control characters, split at whitespace and
// around punctuation and CJK ideographs; then each word, prefixed with U+2581, is covered by
// longest-prefix vocabulary matches, or becomes <unk> if any part cannot be matched.
#include <algorithm>
#include <string>

#include "tokenizer/algorithms.h"
#include "tokenizer/unicode.h"

namespace paddock::tok {

namespace {

// Base letters of the precomposed Latin letters in U+00C0..U+024F and U+1E00..U+1EFF ('.' =
// none): the first codepoint of their canonical decomposition.
constexpr std::string_view kLatinBase00C0 =
    "AAAAAA.CEEEEIIII.NOOOOO..UUUUY..aaaaaa.ceeeeiiii.nooooo..uuuuy.yAaAaAaCcCcCcCcDd..EeEeEeEeEeGgGgGgGgHh.."
    "IiIiIiIiI...JjKk.LlLlLl....NnNnNn...OoOoOo..RrRrRrSsSsSsSsTtTt..UuUuUuUuUuUuWwYyYZzZzZz................."
    ".."
    "..............Oo.............Uu............................AaIiOoUuUuUuUuUu.AaAa....GgKkOoOo..j...Gg.."
    "NnAa."
    "...AaAaEeEeIiIiOoOoRrRrUuUuSsTt..Hh......AaEeOoOoOoOoYy............................";
constexpr std::string_view kLatinBase1E00 =
    "AaBbBbBbCcDdDdDdDdDdEeEeEeEeEeFfGgHhHhHhHhHhIiIiKkKkKkLlLlLlLlMmMmMmNnNnNnNnOoOoOoOoPpPpRrRrRrRrSsSsSsSs"
    "Ss"
    "TtTtTtTtUuUuUuUuUuVvVvWwWwWwWwWwXxXxYyZzZzZzhtwy......AaAaAaAaAaAaAaAaAaAaAaAaEeEeEeEeEeEeEeEeIiIiOoOoOo"
    "OoOoOoOoOoOoOoOoOoUuUuUuUuUuUuUuYyYyYyYy......";

uint32_t nfd_base(uint32_t cp) {
  auto lookup = [&](std::string_view table, uint32_t first) -> uint32_t {
    const char c = table[cp - first];
    return c == '.' ? cp : static_cast<uint32_t>(c);
  };
  if (cp >= 0xC0 && cp < 0xC0 + kLatinBase00C0.size()) return lookup(kLatinBase00C0, 0xC0);
  if (cp >= 0x1E00 && cp < 0x1E00 + kLatinBase1E00.size()) return lookup(kLatinBase1E00, 0x1E00);
  switch (cp) {  // Cyrillic letters with a diacritic
    case 0x401: return 0x415;
    case 0x407: return 0x406;
    case 0x40E: return 0x423;
    case 0x419: return 0x418;
    case 0x439: return 0x438;
    case 0x451: return 0x435;
    case 0x457: return 0x456;
    case 0x45E: return 0x443;
    default: return cp;
  }
}

bool is_chinese_char(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2B73F) || (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::vector<std::string> wpm_words(std::string_view text) {
  const Utf8Text t = decode_utf8(text);
  std::vector<std::string> words(1);
  for (const uint32_t raw : t.cpts) {
    const uint32_t cp = nfd_base(raw);
    const uint16_t f = codepoint_flags(cp);
    if (f & kWhitespace) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    if (cp == 0 || cp == kReplacementChar || (f & kControl)) continue;
    std::string s;
    append_utf8(s, to_lower(cp));
    if ((f & kPunctuation) || (cp < 0x7F && (f & kSymbol)) || is_chinese_char(cp)) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = s;
      words.emplace_back();
    } else {
      words.back() += s;
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace

void wpm_tokenize(const Vocab& v, std::string_view text, std::vector<int32_t>& out) {
  for (const std::string& word : wpm_words(text)) {
    if (word.empty()) continue;
    const std::string w = "\xe2\x96\x81" + word;
    const size_t n = w.size();
    const size_t before = out.size();
    for (size_t i = 0; i < n; ++i) {
      bool match = false;
      for (size_t j = std::min(n, i + v.max_token_len + 1); j > i; --j) {
        if (const int32_t id = v.find(std::string_view(w).substr(i, j - i)); id >= 0) {
          out.push_back(id);
          match = true;
          i = j - 1;
          break;
        }
      }
      if (!match) {
        out.resize(before);
        break;
      }
    }
    if (out.size() == before && v.unk >= 0) out.push_back(v.unk);
  }
}

}  // namespace paddock::tok
