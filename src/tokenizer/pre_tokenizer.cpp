#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <initializer_list>

#include "tokenizer/unicode.h"

namespace paddock::tok {

namespace {

// The regexes llama.cpp (llama-vocab.cpp, llm_tokenizer_bpe) uses per pre-tokenizer type.
constexpr std::string_view kGpt2 =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S))";
constexpr std::string_view kLlama3 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kQwen2 =
    R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// o200k (gpt-4o, gpt-oss, Llama 4): words split before an upper-case letter that follows a
// lower-case one ("HelloWorld"), contractions kept on the word, digits in threes, and a
// punctuation run takes trailing newlines and slashes. Written as llama.cpp runs it: \p{Lu}
// and \p{Ll} become "a letter but not a-z" and "a letter but not A-Z" (non-ASCII letters,
// collapsed to one byte, are both), (?i:'s|...) is spelled out case by case, and the marks
// (\p{M}) the original regex lets into a word are left out.
constexpr std::string_view kGpt4o =
    R"([^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])*(?:(?=\p{L})[^A-Z])+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?)"
    R"(|[^\r\n\p{L}\p{N}]?(?:(?=\p{L})[^a-z])+(?:(?=\p{L})[^A-Z])*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?)"
    R"(|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr std::string_view kDeepseekLetters =
    "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-"
    "\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481"
    "\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-"
    "\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57"
    "\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-"
    "\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-"
    "\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183"
    "\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f"
    "\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a"
    "\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-"
    "\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943]+";
constexpr std::string_view kDeepseekPunct =
    "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+";
constexpr std::string_view kCjk = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+";
constexpr std::string_view kBloom = " ?[^(\\s|.,!?\u2026\u3002\uff0c\u3001\u0964\u06d4\u060c)]+";

struct PreRow {
  std::initializer_list<std::string_view> names;
  std::initializer_list<std::string_view> regexes;
};

const std::initializer_list<PreRow> kPreTable = {
    {{"default", ""}, {R"([\p{P}\$\+<=>\^~\|]+)", kGpt2, R"(\p{N}+)", "[0-9][0-9][0-9]"}},
    {{"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "dbrx",
      "smaug-bpe", "chatglm-bpe"},
     {kLlama3}},
    {{"deepseek-llm"}, {"[\r\n]", kDeepseekLetters, kDeepseekPunct, "\\s+$", kCjk, R"(\p{N}+)"}},
    {{"deepseek-coder"}, {"[\r\n]", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kCjk, R"(\p{N})"}},
    {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, "[0-9][0-9][0-9]"}},
    {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
     {R"(\p{N})", kGpt2}},
    {{"gpt-2", "mpt", "olmo", "jais", "trillion", "granite-docling", "phi-2", "jina-es", "jina-de",
      "gigachat", "jina-v1-en", "jina-v2-es", "jina-v2-de", "jina-v2-code", "roberta-bpe", "a.x-4.0",
      "mellum"},
     {kGpt2}},
    {{"qwen2", "qwen35", "stablelm2", "hunyuan", "deepseek-r1-qwen", "megrez", "kormo", "grok-2"}, {kQwen2}},
    {{"gpt-4o", "llama4"}, {kGpt4o}},
    {{"poro-chat", "bloom", "gpt3-finnish"}, {kBloom}},
    {{"viking"}, {kBloom, R"(\p{N})"}},
    {{"seed-coder"},
     {R"((?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)"}},
};

enum class StepKind { kCustomGpt2, kCustomLlama3, kCollapsed, kUtf };

// std::regex knows no Unicode categories; llama.cpp replaces each \p{X} by the byte its
// collapsed text uses for category X plus X's ASCII members.
struct CategoryClass {
  std::string_view name;
  std::string_view members;
};
constexpr std::array<CategoryClass, 10> kCategoryClasses = {{
    {"\\p{N}",
     "\xD1"
     "0-9"},
    {"\\p{L}",
     "\xD2"
     "A-Za-z"},
    {"\\p{P}",
     "\xD3"
     "!-#%-*,-/:-;?-@\\[-\\]_\\{\\}"},
    {"\\p{M}", "\xD4"},
    {"\\p{S}",
     "\xD5"
     "\\$\\+<->^`\\|"},
    {"\\p{Lu}",
     "\xD2"
     "A-Za-z"},
    {"\\p{Ll}",
     "\xD2"
     "A-Za-z"},
    {"\\p{Lt}",
     "\xD2"
     "A-Za-z"},
    {"\\p{Lm}",
     "\xD2"
     "A-Za-z"},
    {"\\p{Lo}",
     "\xD2"
     "A-Za-z"},
}};

bool uses_categories(std::string_view re) {
  return std::any_of(kCategoryClasses.begin(), kCategoryClasses.end(),
                     [&](const CategoryClass& c) { return re.find(c.name) != std::string_view::npos; });
}

std::string collapse_regex(std::string_view re) {
  std::string out;
  bool inside = false;
  for (size_t i = 0; i < re.size(); ++i) {
    if (re[i] == '[' && (i == 0 || re[i - 1] != '\\')) {
      out += '[';
      inside = true;
      continue;
    }
    if (inside && re[i] == ']' && re[i - 1] != '\\') {
      out += ']';
      inside = false;
      continue;
    }
    bool replaced = false;
    for (const CategoryClass& c : kCategoryClasses) {
      if (re.substr(i, c.name.size()) == c.name) {
        if (!inside) out += '[';
        out += c.members;
        if (!inside) out += ']';
        i += c.name.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out += re[i];
  }
  return out;
}

uint8_t collapsed_byte(uint32_t cp) {
  if (cp < 128) return static_cast<uint8_t>(cp);
  const uint16_t f = codepoint_flags(cp);
  if (f & kWhitespace) return 0x0B;
  if (f & kNumber) return 0xD1;
  if (f & kLetter) return 0xD2;
  if (f & kPunctuation) return 0xD3;
  if (f & kMark) return 0xD4;
  if (f & kSymbol) return 0xD5;
  return 0xD0;
}

bool is_letter(uint16_t f) { return f & kLetter; }
bool is_number(uint16_t f) { return f & kNumber; }
bool is_space(uint16_t f) { return f & kWhitespace; }

constexpr uint32_t kOutOfRange = 0xFFFFFFFF;

// The hand-written matchers below mirror llama.cpp's unicode_regex_split_custom_gpt2/_llama3
// branch for branch, including where they differ from the regex (e.g. \s+(?!\S) at the end).
class Segment {
 public:
  Segment(const uint32_t* cpts, const uint16_t* flags, size_t ini, size_t end, std::vector<size_t>& out)
      : cpts_(cpts), flags_(flags), ini_(ini), end_(end), prev_end_(ini), out_(out) {}
  uint32_t cpt(size_t pos) const { return pos >= ini_ && pos < end_ ? cpts_[pos] : kOutOfRange; }
  uint16_t flags(size_t pos) const { return pos >= ini_ && pos < end_ ? flags_[pos] : 0; }
  size_t add(size_t end) {
    const size_t len = end - prev_end_;
    if (len > 0) out_.push_back(len);
    prev_end_ = end;
    return len;
  }
  size_t end() const { return end_; }

 private:
  const uint32_t* cpts_;
  const uint16_t* flags_;
  size_t ini_, end_, prev_end_;
  std::vector<size_t>& out_;
};

uint32_t ascii_lower(uint32_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

// 's 't 're 've 'm 'll 'd at pos; returns the match length (0 if none).
size_t contraction(const Segment& s, size_t pos, bool any_case) {
  if (s.cpt(pos) != '\'' || pos + 1 >= s.end()) return 0;
  auto low = [&](size_t p) { return any_case ? ascii_lower(s.cpt(p)) : s.cpt(p); };
  const uint32_t n1 = low(pos + 1);
  if (n1 == 's' || n1 == 't' || n1 == 'm' || n1 == 'd') return 2;
  if (pos + 2 < s.end()) {
    const uint32_t n2 = low(pos + 2);
    if ((n1 == 'r' && n2 == 'e') || (n1 == 'v' && n2 == 'e') || (n1 == 'l' && n2 == 'l')) return 3;
  }
  return 0;
}

void split_gpt2(Segment& s, size_t ini) {
  for (size_t pos = ini; pos < s.end();) {
    const uint32_t c = s.cpt(pos);
    if (const size_t n = contraction(s, pos, false)) {
      pos += s.add(pos + n);
      continue;
    }
    uint16_t f2 = c == ' ' ? s.flags(pos + 1) : s.flags(pos);
    if (is_letter(f2)) {
      pos += c == ' ';
      while (is_letter(f2)) f2 = s.flags(++pos);
      s.add(pos);
      continue;
    }
    if (is_number(f2)) {
      pos += c == ' ';
      while (is_number(f2)) f2 = s.flags(++pos);
      s.add(pos);
      continue;
    }
    auto other = [](uint16_t f) { return !(is_space(f) || is_letter(f) || is_number(f)) && f != 0; };
    if (other(f2)) {
      pos += c == ' ';
      while (other(f2)) f2 = s.flags(++pos);
      s.add(pos);
      continue;
    }
    size_t num_ws = 0;
    while (is_space(s.flags(pos + num_ws))) num_ws++;
    if (num_ws > 1 && s.cpt(pos + num_ws) != kOutOfRange) {
      pos += num_ws - 1;
      s.add(pos);
      continue;
    }
    if (num_ws > 0) {
      pos += num_ws;
      s.add(pos);
      continue;
    }
    s.add(++pos);
  }
}

void split_llama3(Segment& s, size_t ini) {
  for (size_t pos = ini; pos < s.end();) {
    const uint32_t c = s.cpt(pos);
    const uint16_t f = s.flags(pos);
    if (const size_t n = contraction(s, pos, true)) {
      pos += s.add(pos + n);
      continue;
    }
    if (!(c == '\r' || c == '\n' || is_number(f)) && (is_letter(f) || is_letter(s.flags(pos + 1)))) {
      pos++;
      while (is_letter(s.flags(pos))) pos++;
      s.add(pos);
      continue;
    }
    if (is_number(f)) {
      size_t start = pos;
      while (is_number(s.flags(pos))) {
        if (++pos - start >= 3) {
          s.add(pos);
          start = pos;
        }
      }
      s.add(pos);
      continue;
    }
    uint16_t f2 = c == ' ' ? s.flags(pos + 1) : f;
    auto other = [](uint16_t g) { return !(is_space(g) || is_letter(g) || is_number(g)) && g != 0; };
    if (other(f2)) {
      pos += c == ' ';
      while (other(f2)) f2 = s.flags(++pos);
      uint32_t c2 = s.cpt(pos);
      while (c2 == '\r' || c2 == '\n') c2 = s.cpt(++pos);
      s.add(pos);
      continue;
    }
    size_t num_ws = 0;
    size_t last_rn = 0;
    while (is_space(s.flags(pos + num_ws))) {
      const uint32_t c2 = s.cpt(pos + num_ws);
      if (c2 == '\r' || c2 == '\n') last_rn = pos + num_ws + 1;
      num_ws++;
    }
    if (last_rn > 0) {
      pos = last_rn;
      s.add(pos);
      continue;
    }
    if (num_ws > 1 && s.cpt(pos + num_ws) != kOutOfRange) {
      pos += num_ws - 1;
      s.add(pos);
      continue;
    }
    if (num_ws > 0) {
      pos += num_ws;
      s.add(pos);
      continue;
    }
    s.add(++pos);
  }
}

}  // namespace

struct PreTokenizer::Step {
  StepKind kind = StepKind::kCustomGpt2;
  pcre2_code* code = nullptr;
};

PreTokenizer::PreTokenizer() = default;

PreTokenizer::~PreTokenizer() {
  for (Step& s : steps_) pcre2_code_free(s.code);
}

std::optional<std::vector<std::string>> pre_tokenizer_regexes(std::string_view pre) {
  for (const PreRow& row : kPreTable) {
    if (std::find(row.names.begin(), row.names.end(), pre) != row.names.end()) {
      return std::vector<std::string>(row.regexes.begin(), row.regexes.end());
    }
  }
  return std::nullopt;
}

Result<std::unique_ptr<PreTokenizer>> PreTokenizer::create(std::span<const std::string> regexes) {
  std::unique_ptr<PreTokenizer> p(new PreTokenizer());
  for (const std::string& re : regexes) {
    Step step;
    if (re == kGpt2) {
      step.kind = StepKind::kCustomGpt2;
    } else if (re == kLlama3) {
      step.kind = StepKind::kCustomLlama3;
    } else {
      const bool collapsed = uses_categories(re);
      step.kind = collapsed ? StepKind::kCollapsed : StepKind::kUtf;
      const std::string pattern = collapsed ? collapse_regex(re) : re;
      int err = 0;
      PCRE2_SIZE err_off = 0;
      const uint32_t options = PCRE2_DOLLAR_ENDONLY | (collapsed ? 0u : PCRE2_UTF);
      step.code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &err,
                                &err_off, nullptr);
      if (step.code == nullptr) {
        std::array<PCRE2_UCHAR, 256> msg{};
        pcre2_get_error_message(err, msg.data(), msg.size());
        return invalid_argument("pre-tokenizer regex '" + re +
                                "': expected a valid regex, PCRE2 says at offset " + std::to_string(err_off) +
                                ": " + reinterpret_cast<const char*>(msg.data()));
      }
      pcre2_jit_compile(step.code,
                        PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is unavailable
      p->need_collapsed_ |= collapsed;
      p->need_utf_ |= !collapsed;
    }
    p->steps_.push_back(step);
  }
  return p;
}

void PreTokenizer::split(std::string_view text, std::vector<Range>& words) const {
  if (text.empty()) return;
  const Utf8Text t = decode_utf8(text);
  const size_t n = t.cpts.size();
  std::vector<uint16_t> flags(n);
  for (size_t i = 0; i < n; ++i) flags[i] = codepoint_flags(t.cpts[i]);

  std::string collapsed;
  if (need_collapsed_) {
    collapsed.resize(n);
    for (size_t i = 0; i < n; ++i) collapsed[i] = static_cast<char>(collapsed_byte(t.cpts[i]));
  }
  // For plain regexes: the codepoints re-encoded as valid UTF-8 (invalid bytes become U+FFFD,
  // non-ASCII whitespace becomes \v as in llama.cpp), with each codepoint's byte offset.
  std::string utf;
  std::vector<uint32_t> utf_offs;
  if (need_utf_) {
    utf_offs.reserve(n + 1);
    for (size_t i = 0; i < n; ++i) {
      utf_offs.push_back(static_cast<uint32_t>(utf.size()));
      const uint32_t c = t.cpts[i];
      const bool surrogate = c >= 0xD800 && c <= 0xDFFF;
      append_utf8(utf, c > 0x7F && (flags[i] & kWhitespace) ? 0x0B : surrogate ? kReplacementChar : c);
    }
    utf_offs.push_back(static_cast<uint32_t>(utf.size()));
  }

  std::vector<size_t> offsets = {n};
  std::vector<size_t> next;
  pcre2_match_data* md = nullptr;
  for (const Step& step : steps_) {
    next.clear();
    next.reserve(offsets.size());
    size_t start = 0;
    for (const size_t len : offsets) {
      if (step.kind == StepKind::kCustomGpt2 || step.kind == StepKind::kCustomLlama3) {
        Segment seg(t.cpts.data(), flags.data(), start, start + len, next);
        if (step.kind == StepKind::kCustomGpt2)
          split_gpt2(seg, start);
        else
          split_llama3(seg, start);
      } else {
        if (md == nullptr) md = pcre2_match_data_create(4, nullptr);
        const bool coll = step.kind == StepKind::kCollapsed;
        // Subject and offsets in code units; positions are converted back to codepoints.
        const size_t sub_begin = coll ? start : utf_offs[start];
        const size_t sub_len = coll ? len : utf_offs[start + len] - sub_begin;
        const auto* subject =
            reinterpret_cast<PCRE2_SPTR>((coll ? collapsed.data() : utf.data()) + sub_begin);
        auto to_cpt = [&](size_t unit) -> size_t {
          if (coll) return unit;
          const auto it = std::lower_bound(utf_offs.begin() + static_cast<ptrdiff_t>(start),
                                           utf_offs.begin() + static_cast<ptrdiff_t>(start + len),
                                           static_cast<uint32_t>(sub_begin + unit));
          return static_cast<size_t>(it - (utf_offs.begin() + static_cast<ptrdiff_t>(start)));
        };
        size_t last = 0;    // codepoints of this piece already emitted
        size_t search = 0;  // code unit where the next search starts
        while (search <= sub_len) {
          const int rc = pcre2_match(step.code, subject, sub_len, search, 0, md, nullptr);
          if (rc < 0) break;
          const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
          const size_t m_begin = to_cpt(ov[0]);
          const size_t m_end = to_cpt(ov[1]);
          if (ov[1] == ov[0]) {
            // Empty match: nothing to emit; step over one character as std::regex_iterator does.
            if (ov[1] >= sub_len) break;
            search = ov[1] + (coll ? 1 : utf8_len(subject[ov[1]]));
            continue;
          }
          if (m_begin > last) next.push_back(m_begin - last);
          next.push_back(m_end - m_begin);
          last = m_end;
          search = ov[1];
        }
        if (last < len) next.push_back(len - last);
      }
      start += len;
    }
    offsets.swap(next);
  }
  if (md != nullptr) pcre2_match_data_free(md);

  size_t cp = 0;
  for (const size_t len : offsets) {
    words.push_back({t.offs[cp], t.offs[cp + len]});
    cp += len;
  }
}

}  // namespace paddock::tok
