// Fuzzes JSON schema -> GBNF: every input either fails with a Status or yields a grammar that
// parses and can be matched from its start.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "sample/gbnf.h"
#include "sample/grammar_matcher.h"
#include "sample/json_schema.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  auto gbnf = paddock::sample::format_to_gbnf(in);
  if (!gbnf.ok() || gbnf->empty()) return 0;
  auto g = paddock::sample::parse_gbnf(*gbnf);
  if (!g.ok()) std::abort();  // the converter promised a grammar that parses
  paddock::sample::GrammarMatcher m(*g);
  for (std::string_view step : {"{", "[", "\"", "1", " ", "}"}) {
    if (!m.accept_bytes(step)) continue;
  }
  return 0;
}
