// GBNF parser: a recursive-descent reading of llama.cpp's grammar syntax. Groups and
// repetitions become generated rules, exactly as llama.cpp rewrites them, so users' grammars
// behave the same here.
#include "sample/gbnf.h"

#include <map>
#include <optional>

namespace paddock::sample {
namespace {

constexpr int kMaxNesting = 128;

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Result<std::shared_ptr<const Grammar>> run(std::string_view root_name) {
    skip_space(true);
    while (pos_ < s_.size() && status_.is_ok()) parse_rule();
    if (!status_.is_ok()) return status_;
    for (size_t id = 0; id < rules_.size(); ++id) {
      if (rules_[id].empty()) {
        return invalid_argument("grammar: line " + line_col(first_use_[id]) + ": undefined rule '" +
                                names_[id] + "'");
      }
    }
    auto root = ids_.find(std::string(root_name));
    if (root == ids_.end())
      return invalid_argument("grammar: expected a rule named '" + std::string(root_name) + "'");
    PADDOCK_TRY(check_left_recursion());
    auto g = std::make_shared<Grammar>();
    g->rules = std::move(rules_);
    g->names = std::move(names_);
    g->root = root->second;
    return std::shared_ptr<const Grammar>(std::move(g));
  }

 private:
  std::string line_col(size_t at) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return std::to_string(line) + ":" + std::to_string(col);
  }

  // Records the first error only; parsing unwinds by checking ok() after each step.
  void fail(const std::string& expected) {
    if (!status_.is_ok()) return;
    std::string found = "end of input";
    if (pos_ < s_.size()) {
      found.assign(3, '\'');
      found[1] = s_[pos_];
    }
    status_ =
        invalid_argument("grammar: line " + line_col(pos_) + ": expected " + expected + ", found " + found);
  }
  bool ok() const { return status_.is_ok(); }
  char peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
  bool at_end() const { return pos_ >= s_.size(); }

  void skip_space(bool newline_ok) {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < s_.size() && s_[pos_] != '\n' && s_[pos_] != '\r') ++pos_;
      } else if (newline_ok && (c == '\r' || c == '\n')) {
        ++pos_;
      } else {
        break;
      }
    }
  }

  std::string parse_name() {
    size_t start = pos_;
    while (pos_ < s_.size() && is_word_char(s_[pos_])) ++pos_;
    if (start == pos_) fail("a rule name");
    return std::string(s_.substr(start, pos_ - start));
  }

  uint32_t symbol_id(const std::string& name, size_t at) {
    auto [it, inserted] = ids_.emplace(name, static_cast<uint32_t>(names_.size()));
    if (inserted) {
      names_.push_back(name);
      rules_.emplace_back();
      first_use_.push_back(at);
    }
    return it->second;
  }

  uint32_t generate_symbol(const std::string& base) {
    std::string name = base + "_" + std::to_string(names_.size());
    return symbol_id(name, pos_);
  }

  void add_rule(uint32_t id, std::vector<Element> rule) {
    total_elements_ += rule.size();
    if (total_elements_ > kMaxGrammarElements)
      fail("a grammar of at most " + std::to_string(kMaxGrammarElements) + " elements");
    rules_[id] = std::move(rule);
  }

  // Decodes one UTF-8 code point of the grammar text itself.
  uint32_t decode_utf8() {
    auto b0 = static_cast<uint8_t>(s_[pos_]);
    int len = b0 < 0x80 ? 1 : (b0 >> 5) == 0x6 ? 2 : (b0 >> 4) == 0xE ? 3 : (b0 >> 3) == 0x1E ? 4 : 0;
    if (len == 0 || pos_ + len > s_.size()) {
      fail("valid UTF-8");
      return 0;
    }
    uint32_t cp = len == 1 ? b0 : b0 & (0x7F >> len);
    for (int i = 1; i < len; ++i) {
      auto b = static_cast<uint8_t>(s_[pos_ + i]);
      if ((b & 0xC0) != 0x80) {
        fail("valid UTF-8");
        return 0;
      }
      cp = (cp << 6) | (b & 0x3F);
    }
    pos_ += len;
    return cp;
  }

  uint32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      int h = hex_value(peek());
      if (h < 0) {
        fail(std::to_string(digits) + " hex digits");
        return 0;
      }
      v = v * 16 + static_cast<uint32_t>(h);
      ++pos_;
    }
    return v;
  }

  // One (possibly escaped) character of a literal or a character class.
  uint32_t parse_char() {
    if (at_end()) {
      fail("a character");
      return 0;
    }
    if (peek() != '\\') return decode_utf8();
    ++pos_;
    char e = peek();
    ++pos_;
    switch (e) {
      case 'x': return parse_hex(2);
      case 'u': return parse_hex(4);
      case 'U': return parse_hex(8);
      case 't': return '\t';
      case 'r': return '\r';
      case 'n': return '\n';
      case '\\':
      case '"':
      case '[':
      case ']':
      case '-':
      case '^': return static_cast<uint8_t>(e);
      default:
        --pos_;
        fail("an escape (\\x.. \\u.... \\U........ \\t \\r \\n \\\\ \\\" \\[ \\] \\- \\^)");
        return 0;
    }
  }

  void parse_rule() {
    size_t at = pos_;
    std::string name = parse_name();
    if (!ok()) return;
    skip_space(false);
    uint32_t id = symbol_id(name, at);
    if (!rules_[id].empty()) {
      pos_ = at;
      fail("a new rule name ('" + name + "' is defined twice)");
      return;
    }
    if (s_.substr(pos_, 3) != "::=") return fail("'::='");
    pos_ += 3;
    skip_space(true);
    parse_alternates(name, id, false, 0);
    if (!ok()) return;
    skip_space(false);
    if (peek() == '\r') {
      pos_ += peek(1) == '\n' ? 2 : 1;
    } else if (peek() == '\n') {
      ++pos_;
    } else if (!at_end()) {
      return fail("a newline or end of input after rule '" + name + "'");
    }
    skip_space(true);
  }

  void parse_alternates(const std::string& name, uint32_t id, bool nested, int depth) {
    if (depth > kMaxNesting) return fail("at most " + std::to_string(kMaxNesting) + " nested groups");
    std::vector<Element> rule;
    parse_sequence(name, rule, nested, depth);
    while (ok() && peek() == '|') {
      rule.push_back({ElemType::kAlt, 0});
      ++pos_;
      skip_space(true);
      parse_sequence(name, rule, nested, depth);
    }
    rule.push_back({ElemType::kEnd, 0});
    if (ok()) add_rule(id, std::move(rule));
  }

  bool parse_uint(uint32_t* out) {
    size_t start = pos_;
    uint64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      v = v * 10 + static_cast<uint64_t>(peek() - '0');
      if (v > kMaxRepetition) {
        fail("a repetition count of at most " + std::to_string(kMaxRepetition));
        return false;
      }
      ++pos_;
    }
    if (start == pos_) {
      fail("a number");
      return false;
    }
    *out = static_cast<uint32_t>(v);
    return true;
  }

  // S{m,n} -> S repeated m times, then n-m nested optional S; S{m,} -> S^m S' with S' ::= S S' | .
  void repeat(const std::string& name, std::vector<Element>& out, size_t last_sym_start, uint32_t min_times,
              std::optional<uint32_t> max_times) {
    if (last_sym_start == out.size()) return fail("an item before a repetition operator");
    const std::vector<Element> prev(out.begin() + static_cast<std::ptrdiff_t>(last_sym_start), out.end());
    if (static_cast<uint64_t>(prev.size()) * (min_times + 2) + total_elements_ > kMaxGrammarElements) {
      return fail("a grammar of at most " + std::to_string(kMaxGrammarElements) + " elements");
    }
    if (min_times == 0) out.resize(last_sym_start);
    for (uint32_t i = 1; i < min_times; ++i) out.insert(out.end(), prev.begin(), prev.end());
    const uint32_t n_opt = max_times ? *max_times - min_times : 1;
    uint32_t last_rec = 0;
    for (uint32_t i = 0; i < n_opt && ok(); ++i) {
      std::vector<Element> rec(prev);
      uint32_t rec_id = generate_symbol(name);
      if (i > 0 || !max_times) rec.push_back({ElemType::kRuleRef, max_times ? last_rec : rec_id});
      rec.push_back({ElemType::kAlt, 0});
      rec.push_back({ElemType::kEnd, 0});
      add_rule(rec_id, std::move(rec));
      last_rec = rec_id;
    }
    if (n_opt > 0) out.push_back({ElemType::kRuleRef, last_rec});
  }

  void parse_sequence(const std::string& name, std::vector<Element>& out, bool nested, int depth) {
    size_t last_sym_start = out.size();
    while (ok() && !at_end()) {
      char c = peek();
      if (c == '"') {
        ++pos_;
        last_sym_start = out.size();
        while (ok() && peek() != '"') {
          if (at_end()) return fail("a closing '\"'");
          out.push_back({ElemType::kChar, parse_char()});
        }
        ++pos_;
        skip_space(nested);
      } else if (c == '[') {
        ++pos_;
        ElemType start_type = ElemType::kChar;
        if (peek() == '^') {
          ++pos_;
          start_type = ElemType::kCharNot;
        }
        last_sym_start = out.size();
        while (ok() && peek() != ']') {
          if (at_end()) return fail("a closing ']'");
          uint32_t ch = parse_char();
          out.push_back({last_sym_start < out.size() ? ElemType::kCharAlt : start_type, ch});
          if (peek() == '-' && peek(1) != ']' && pos_ + 1 < s_.size()) {
            ++pos_;
            out.push_back({ElemType::kCharRngUpper, parse_char()});
          }
        }
        if (!ok()) return;
        if (last_sym_start == out.size()) return fail("at least one character in '[...]'");
        ++pos_;
        skip_space(nested);
      } else if (is_word_char(c)) {
        size_t at = pos_;
        std::string ref = parse_name();
        last_sym_start = out.size();
        out.push_back({ElemType::kRuleRef, symbol_id(ref, at)});
        skip_space(nested);
      } else if (c == '(') {
        ++pos_;
        skip_space(true);
        uint32_t sub = generate_symbol(name);
        parse_alternates(name, sub, true, depth + 1);
        if (!ok()) return;
        last_sym_start = out.size();
        out.push_back({ElemType::kRuleRef, sub});
        if (peek() != ')') return fail("')'");
        ++pos_;
        skip_space(nested);
      } else if (c == '.') {
        last_sym_start = out.size();
        out.push_back({ElemType::kCharAny, 0});
        ++pos_;
        skip_space(nested);
      } else if (c == '*' || c == '+' || c == '?') {
        ++pos_;
        if (c == '?') {
          repeat(name, out, last_sym_start, 0, 1);
        } else {
          repeat(name, out, last_sym_start, c == '+' ? 1 : 0, std::nullopt);
        }
        skip_space(nested);
      } else if (c == '{') {
        ++pos_;
        skip_space(nested);
        uint32_t min_times = 0;
        if (!parse_uint(&min_times)) return;
        skip_space(nested);
        std::optional<uint32_t> max_times = min_times;
        if (peek() == ',') {
          ++pos_;
          skip_space(nested);
          max_times.reset();
          if (peek() >= '0' && peek() <= '9') {
            uint32_t m = 0;
            if (!parse_uint(&m)) return;
            if (m < min_times) return fail("a maximum repetition >= the minimum");
            max_times = m;
          }
          skip_space(nested);
        }
        if (peek() != '}') return fail("'}'");
        ++pos_;
        repeat(name, out, last_sym_start, min_times, max_times);
        skip_space(nested);
      } else {
        break;
      }
      if (out.size() + total_elements_ > kMaxGrammarElements) {
        return fail("a grammar of at most " + std::to_string(kMaxGrammarElements) + " elements");
      }
    }
  }

  // A rule that can reach itself through leftmost (possibly nullable-prefixed) references
  // would make the matcher's stack expansion loop forever, so it is an error.
  Status check_left_recursion() const {
    const size_t n = rules_.size();
    std::vector<bool> nullable(n, false);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < n; ++r) {
        if (nullable[r]) continue;
        bool alt_nullable = true;
        for (const Element& e : rules_[r]) {
          if (e.type == ElemType::kAlt || e.type == ElemType::kEnd) {
            if (alt_nullable) {
              nullable[r] = true;
              changed = true;
              break;
            }
            alt_nullable = true;
          } else if (e.type == ElemType::kRuleRef) {
            alt_nullable = alt_nullable && nullable[e.value];
          } else {
            alt_nullable = false;
          }
        }
      }
    }
    std::vector<std::vector<uint32_t>> left(n);
    for (size_t r = 0; r < n; ++r) {
      bool at_left = true;
      for (const Element& e : rules_[r]) {
        if (e.type == ElemType::kAlt || e.type == ElemType::kEnd) {
          at_left = true;
        } else if (at_left && e.type == ElemType::kRuleRef) {
          left[r].push_back(e.value);
          at_left = nullable[e.value];
        } else if (e.type != ElemType::kRuleRef) {
          at_left = false;
        }
      }
    }
    // Iterative DFS with colours: 0 new, 1 on the path, 2 done.
    std::vector<uint8_t> colour(n, 0);
    for (size_t start = 0; start < n; ++start) {
      if (colour[start]) continue;
      std::vector<std::pair<uint32_t, size_t>> path{{static_cast<uint32_t>(start), 0}};
      colour[start] = 1;
      while (!path.empty()) {
        auto& [r, next] = path.back();
        if (next == left[r].size()) {
          colour[r] = 2;
          path.pop_back();
          continue;
        }
        uint32_t to = left[r][next++];
        if (colour[to] == 1) {
          return invalid_argument("grammar: rule '" + names_[to] + "' (line " + line_col(first_use_[to]) +
                                  ") is left-recursive; rewrite it as repetition");
        }
        if (colour[to] == 0) {
          colour[to] = 1;
          path.emplace_back(to, 0);
        }
      }
    }
    return Status::ok();
  }

  std::string_view s_;
  size_t pos_ = 0;
  Status status_;
  std::map<std::string, uint32_t> ids_;
  std::vector<std::string> names_;
  std::vector<std::vector<Element>> rules_;
  std::vector<size_t> first_use_;
  size_t total_elements_ = 0;
};

}  // namespace

Result<std::shared_ptr<const Grammar>> parse_gbnf(std::string_view text, std::string_view root_name) {
  return Parser(text).run(root_name);
}

bool char_set_matches(const Element* elem, uint32_t c, const Element** after) {
  const bool positive = elem->type == ElemType::kChar || elem->type == ElemType::kCharAny;
  bool found = false;
  do {
    if (elem->type == ElemType::kCharAny) {
      found = true;
      elem += 1;
    } else if (elem[1].type == ElemType::kCharRngUpper) {
      found = found || (elem->value <= c && c <= elem[1].value);
      elem += 2;
    } else {
      found = found || elem->value == c;
      elem += 1;
    }
  } while (elem->type == ElemType::kCharAlt);
  if (after) *after = elem;
  return found == positive;
}

bool char_set_intersects(const Element* elem, uint32_t lo, uint32_t hi) {
  if (elem->type == ElemType::kCharAny) return true;
  if (elem->type == ElemType::kChar) {
    do {
      uint32_t a = elem->value;
      uint32_t b = elem[1].type == ElemType::kCharRngUpper ? elem[1].value : a;
      if (a <= hi && lo <= b) return true;
      elem += elem[1].type == ElemType::kCharRngUpper ? 2 : 1;
    } while (elem->type == ElemType::kCharAlt);
    return false;
  }
  // Negated set: some point of [lo, hi] escapes every excluded range. Walk x upward through
  // the ranges that cover it; each pass either moves x past a range or finds a free point.
  std::vector<std::pair<uint32_t, uint32_t>> excluded;
  do {
    uint32_t a = elem->value;
    uint32_t b = elem[1].type == ElemType::kCharRngUpper ? elem[1].value : a;
    excluded.emplace_back(a, b);
    elem += elem[1].type == ElemType::kCharRngUpper ? 2 : 1;
  } while (elem->type == ElemType::kCharAlt);
  uint64_t x = lo;
  for (size_t pass = 0; pass <= excluded.size(); ++pass) {
    bool covered = false;
    for (auto [a, b] : excluded) {
      if (a <= x && x <= b) {
        x = uint64_t{b} + 1;
        covered = true;
        break;
      }
    }
    if (x > hi) return false;
    if (!covered) return true;
  }
  return x <= hi;
}

}  // namespace paddock::sample
