// Fuzzes the GBNF parser and a few steps of matching: input = grammar text, a NUL byte, then
// bytes fed to the matcher in small chunks (so UTF-8 characters get split across "tokens").
// Property: at every step the trie walk (allowed_tokens) agrees with allows_token for every
// token of a small vocabulary that includes split, overlong and surrogate UTF-8.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "sample/gbnf.h"
#include "sample/grammar_matcher.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  const size_t cut = in.find('\0');
  const std::string_view grammar = in.substr(0, cut);
  const std::string_view feed = cut == std::string_view::npos ? std::string_view() : in.substr(cut + 1);
  auto g = paddock::sample::parse_gbnf(grammar);
  if (!g.ok()) return 0;
  paddock::sample::GrammarMatcher m(*g);
  static const paddock::sample::GrammarVocab vocab(
      {"a", "\"", "{", "\xC3", "\xA9", "1", " ", "", "\xC1\xBB", "\xE0", "\x81\xBB", "\xED", "\xA0\x80", "ab",
       "\xF4", "\x8F\xBF\xBF"},
      {7});
  std::vector<uint8_t> mask;
  const auto agree = [&] {
    m.allowed_tokens(vocab, &mask);
    for (int32_t id = 0; id < vocab.size(); ++id) {
      if ((mask[static_cast<size_t>(id)] != 0) != m.allows_token(vocab, id)) __builtin_trap();
    }
  };
  agree();
  for (size_t i = 0; i < feed.size() && i < 64; i += 3) {
    if (!m.accept_bytes(feed.substr(i, 3))) break;
    (void)m.can_end();
    agree();
  }
  return 0;
}
