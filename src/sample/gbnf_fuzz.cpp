// Fuzzes the GBNF parser and a few steps of matching: input = grammar text, a NUL byte, then
// bytes fed to the matcher in small chunks (so UTF-8 characters get split across "tokens").
#include <cstddef>
#include <cstdint>
#include <string_view>

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
  paddock::sample::GrammarVocab vocab({"a", "\"", "{", "\xC3", "\xA9", "1", " ", ""}, {7});
  for (int32_t id = 0; id < vocab.size(); ++id) (void)m.allows_token(vocab, id);
  for (size_t i = 0; i < feed.size() && i < 64; i += 3) {
    if (!m.accept_bytes(feed.substr(i, 3))) break;
    (void)m.can_end();
  }
  return 0;
}
