// GBNF grammars (llama.cpp's syntax): parsing into a flat rule table that the matcher
// (grammar_matcher.h) walks over Unicode code points.
// Invariants of a parsed Grammar: every rule reference is defined, no rule is left-recursive,
// every alternative ends with kAlt or kEnd, the element count is bounded (kMaxGrammarElements).
// Errors name line:col of the input and what was expected.
//   PADDOCK_ASSIGN(auto g, sample::parse_gbnf(R"(root ::= "yes" | "no")"));
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace paddock::sample {

enum class ElemType : uint8_t {
  kEnd,           // end of a rule
  kAlt,           // start of another alternative of the same rule
  kRuleRef,       // value = rule id
  kChar,          // value = code point; may be followed by kCharRngUpper / kCharAlt
  kCharNot,       // like kChar, but the set is negated
  kCharRngUpper,  // value = inclusive upper bound of a range started by the previous element
  kCharAlt,       // value = another code point of the same set
  kCharAny,       // `.`: any code point
};

struct Element {
  ElemType type = ElemType::kEnd;
  uint32_t value = 0;
};

// Limits that keep hostile grammars from exhausting memory.
inline constexpr size_t kMaxGrammarElements = size_t{1} << 20;
inline constexpr uint32_t kMaxRepetition = 2000;

struct Grammar {
  std::vector<std::vector<Element>> rules;  // rule id -> alternatives, terminated by kEnd
  std::vector<std::string> names;           // rule id -> name (generated rules get "name_N")
  uint32_t root = 0;
};

// Parses GBNF text; `root_name` names the start rule.
Result<std::shared_ptr<const Grammar>> parse_gbnf(std::string_view text, std::string_view root_name = "root");

// True when code point `c` is in the character set starting at `elem` (kChar/kCharNot/kCharAny).
// Returns through `after` the element following the set.
bool char_set_matches(const Element* elem, uint32_t c, const Element** after);

// True when some code point in [lo, hi] is in the set at `elem` (used for partial UTF-8).
bool char_set_intersects(const Element* elem, uint32_t lo, uint32_t hi);

}  // namespace paddock::sample
