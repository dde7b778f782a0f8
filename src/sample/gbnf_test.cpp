// GBNF syntax: accept/reject tables per grammar, parse errors with positions, and the
// matcher's token-level behaviour (partial UTF-8, EOG, empty tokens).
#include "sample/gbnf.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sample/grammar_matcher.h"

namespace paddock::sample {
namespace {

bool matches(const std::shared_ptr<const Grammar>& g, const std::string& text) {
  GrammarMatcher m(g);
  return m.accept_bytes(text) && m.can_end();
}

struct Case {
  const char* grammar;
  std::vector<std::string> accept;
  std::vector<std::string> reject;
};

TEST(Gbnf, AcceptRejectTables) {
  const std::vector<Case> cases = {
      {R"(root ::= "a" | "b")", {"a", "b"}, {"", "c", "ab"}},
      {R"(root ::= "x"{2,4})", {"xx", "xxx", "xxxx"}, {"x", "xxxxx", ""}},
      {R"(root ::= "x"{2,})", {"xx", "xxxxxxx"}, {"x"}},
      {R"(root ::= "x"{3})", {"xxx"}, {"xx", "xxxx"}},
      {R"(root ::= "ab"* "c"+ "d"?)", {"c", "ababc", "ccd", "abcccd"}, {"", "abd", "aab", "cdd"}},
      {R"(root ::= [a-c0-9]+ [^x\n])", {"a1z", "00y", "cc "}, {"ax", "a", "d1z", "a\n"}},
      {R"(root ::= "\x41\u00e9\n" [\t] "\U0001F600")", {"A\xC3\xA9\n\t\xF0\x9F\x98\x80"}, {"A\xC3\xA9\n\t"}},
      {"# leading comment\nroot ::= greeting \" \" name  # trailing\ngreeting ::= \"hi\" | \"hello\"\n"
       "name ::= [A-Z] [a-z]*\n",
       {"hi Bob", "hello X"},
       {"hi bob", "hey Bob", "hello"}},
      {"root ::= (\"ab\" |\n  \"c\")* \"d\"", {"d", "abcd", "ccabd"}, {"abc", "ad"}},
      {R"g(root ::= "(" root ")" | "")g", {"", "()", "(())"}, {"(()", ")", "(()))"}},
      {R"(root ::= "<" [^>]* ">")", {"<>", "<a\xC3\xA9>"}, {"<a>b", "<"}},
      {R"(root ::= . "!")", {"a!", "\xE2\x82\xAC!"}, {"!", "ab!"}},
      {R"(root ::= [\]\[-] "\"")", {"]\"", "[\"", "-\""}, {"a\""}},
      {"root ::= a b\na ::= \"1\"?\nb ::= \"2\"?", {"", "1", "2", "12"}, {"21"}},
  };
  for (const Case& c : cases) {
    auto g = parse_gbnf(c.grammar);
    ASSERT_TRUE(g.ok()) << c.grammar << ": " << g.status().to_string();
    for (const std::string& s : c.accept) EXPECT_TRUE(matches(*g, s)) << c.grammar << " should accept " << s;
    for (const std::string& s : c.reject) EXPECT_FALSE(matches(*g, s)) << c.grammar << " should reject " << s;
  }
}

void expect_error(const std::string& grammar, const std::string& needle) {
  auto g = parse_gbnf(grammar);
  ASSERT_FALSE(g.ok()) << grammar;
  EXPECT_NE(g.status().message().find(needle), std::string::npos)
      << grammar << " -> " << g.status().message();
}

TEST(Gbnf, ErrorsNamePositionAndExpectation) {
  expect_error(R"(root ::= "a)", "line 1:");
  expect_error(R"(root ::= "a)", "closing");
  expect_error("root ::= \"a\"\nfoo ::= [ab", "line 2:12");
  expect_error("root ::= foo", "undefined rule 'foo'");
  expect_error("a ::= \"x\"", "rule named 'root'");
  expect_error("root ::= root \"a\" | \"a\"", "left-recursive");
  expect_error("root ::= a \"x\"\na ::= b? root\nb ::= \"b\"", "left-recursive");
  expect_error(R"(root ::= "a"{3,1})", "maximum repetition");
  expect_error(R"(root ::= *"a")", "item before a repetition");
  expect_error(R"(root ::= "\q")", "escape");
  expect_error(R"(root ::= "a"{99999})", "at most 2000");
  expect_error("root ::= \"a\"\nroot ::= \"b\"", "defined twice");
  expect_error("root = \"a\"", "'::='");
  expect_error("root ::= (\"a\"", "')'");
  expect_error(R"(root ::= [])", "at least one character");
  expect_error("root ::= \"a\" ) \"b\"", "newline or end");
  expect_error(std::string("root ::= ") + std::string(200, '(') + std::string(200, ')'), "nested");
}

TEST(Gbnf, RightRecursionIsFine) {
  auto g = parse_gbnf("root ::= item root | item\nitem ::= [a-z]");
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  EXPECT_TRUE(matches(*g, "abc"));
}

TEST(GrammarMatcher, TokensWithPartialUtf8) {
  auto g = parse_gbnf(R"(root ::= "a" [\u00e0-\u00ff] "!")");
  ASSERT_TRUE(g.ok());
  // 0: "a", 1: first byte of U+00E9, 2: its second byte, 3: "é!", 4: first byte of U+20AC
  // (outside the range), 5: "", 6: EOG, 7: a stray continuation byte.
  GrammarVocab vocab({"a", "\xC3", "\xA9", "\xC3\xA9!", "\xE2", "", "</s>", "\xA9"}, {6});
  GrammarMatcher m(*g);
  EXPECT_TRUE(m.allows_token(vocab, 0));
  EXPECT_FALSE(m.allows_token(vocab, 1));
  EXPECT_FALSE(m.allows_token(vocab, 5));
  EXPECT_FALSE(m.allows_token(vocab, 6));
  EXPECT_FALSE(m.allows_token(vocab, 7));
  ASSERT_TRUE(m.accept_token(vocab, 0).is_ok());
  EXPECT_TRUE(m.allows_token(vocab, 1));
  EXPECT_TRUE(m.allows_token(vocab, 3));
  EXPECT_FALSE(m.allows_token(vocab, 4));
  EXPECT_FALSE(m.allows_token(vocab, 2));
  ASSERT_TRUE(m.accept_token(vocab, 1).is_ok());
  EXPECT_FALSE(m.can_end());
  EXPECT_TRUE(m.allows_token(vocab, 2));
  EXPECT_FALSE(m.allows_token(vocab, 0));
  ASSERT_TRUE(m.accept_token(vocab, 2).is_ok());
  EXPECT_FALSE(m.allows_token(vocab, 6));
  EXPECT_TRUE(m.accept_bytes("!"));
  EXPECT_TRUE(m.can_end());
  EXPECT_TRUE(m.allows_token(vocab, 6));
  EXPECT_TRUE(m.accept_token(vocab, 6).is_ok());
  EXPECT_TRUE(m.is_finished());
}

TEST(GrammarMatcher, RejectedTokenLeavesStateUnchanged) {
  auto g = parse_gbnf(R"(root ::= "ab")");
  ASSERT_TRUE(g.ok());
  GrammarVocab vocab({"a", "b", "x", "abx"}, {});
  GrammarMatcher m(*g);
  EXPECT_FALSE(m.accept_token(vocab, 2).is_ok());
  EXPECT_FALSE(m.accept_token(vocab, 3).is_ok());
  ASSERT_TRUE(m.accept_token(vocab, 0).is_ok());
  ASSERT_TRUE(m.accept_token(vocab, 1).is_ok());
  EXPECT_TRUE(m.can_end());
}

TEST(GrammarMatcher, TrieWalkAgreesWithSingleChecks) {
  auto g = parse_gbnf(R"(root ::= "{" ws ("\"" [a-z\u00e9]* "\"" ws)? "}"
ws ::= | " ")");
  ASSERT_TRUE(g.ok()) << g.status().to_string();
  GrammarVocab vocab(
      {"{",    "{ ",       "{\"",        "{\"a", "\"", "\"ab\"", "\"ab\" }", "a", "ab", "abc",
       "\xC3", "\xC3\xA9", "\xC3\xA9\"", "\xA9", " ",  "}",      " }",       "",  "x",  "<eos>"},
      {19});
  for (const char* prefix : {"", "{", "{\"", "{\"a", "{\"\xC3", "{\"ab\"", "{}"}) {
    GrammarMatcher m(*g);
    ASSERT_TRUE(m.accept_bytes(prefix)) << prefix;
    std::vector<uint8_t> mask;
    m.allowed_tokens(vocab, &mask);
    int allowed = 0;
    for (int32_t id = 0; id < vocab.size(); ++id) {
      EXPECT_EQ(mask[static_cast<size_t>(id)] != 0, m.allows_token(vocab, id))
          << "prefix " << prefix << " token " << id;
      allowed += mask[static_cast<size_t>(id)];
    }
    EXPECT_GT(allowed, 0) << prefix;
  }
}

TEST(GrammarMatcher, AmbiguousGrammarStaysBounded) {
  // Exponentially many parses of "aaaa..."; stacks are deduplicated, so this stays small.
  auto g = parse_gbnf(R"(root ::= ("a" | "a" | "aa")* )");
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(matches(*g, std::string(200, 'a')));
}

TEST(Utf8, DecodeRejectsOverlongSurrogatesAndOutOfRange) {
  const auto ok = [](std::string_view bytes) {
    std::vector<uint32_t> cps;
    PartialUtf8 end;
    return decode_utf8(bytes, PartialUtf8{}, &cps, &end);
  };
  for (const char* good : {"\x7F", "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xED\x9F\xBF", "\xEE\x80\x80",
                           "\xF0\x90\x80\x80", "\xF4\x8F\xBF\xBF", "\xE0\xA0", "\xF4\x8F"}) {
    EXPECT_TRUE(ok(good)) << good;
  }
  // Overlongs (C0/C1 leads, E0 80-9F, F0 80-8F), surrogates (ED A0-BF), above U+10FFFF
  // (F4 90+, F5-F7 leads), bytes never used (F8-FF), stray continuations: as soon as the
  // prefix cannot complete, not only at the last byte.
  for (const char* bad : {"\xC0\x80", "\xC1\xBB", "\xC1", "\xE0\x81\xBB", "\xE0\x9F", "\xF0\x80\x81\xBB",
                          "\xF0\x8F", "\xED\xA0\x80", "\xED\xBF", "\xF4\x90\x80\x80", "\xF4\x90", "\xF5",
                          "\xF7\xBF\xBF\xBF", "\xF8", "\xFF", "\x80", "a\xBF"}) {
    EXPECT_FALSE(ok(bad)) << testing::PrintToString(std::string(bad));
  }
  // Split across tokens: the partial state carries the character's length.
  std::vector<uint32_t> cps;
  PartialUtf8 mid, end;
  ASSERT_TRUE(decode_utf8("\xF0", PartialUtf8{}, &cps, &mid));
  EXPECT_EQ(mid.len, 4);
  EXPECT_FALSE(decode_utf8("\x8F", mid, &cps, &end));
  ASSERT_TRUE(decode_utf8("\x9F\x98\x80", mid, &cps, &end));
  EXPECT_EQ(cps, std::vector<uint32_t>{0x1F600});
  EXPECT_EQ(end.remain, 0);
}

// An overlong encoding of an allowed ASCII character is not that character: "{" as C1 BB
// (or E0 81 BB, F0 80 81 BB), whole or split over tokens, is rejected by every entry point.
TEST(GrammarMatcher, OverlongUtf8NeverMatchesAscii) {
  auto g = parse_gbnf(R"(root ::= "{" [a-z]* "}")");
  ASSERT_TRUE(g.ok());
  // 0: "{", 1-3: overlong "{", 4: C1 lead alone, 5: its continuation, 6: E0 lead alone,
  // 7: F0 lead alone, 8: "}", 9: EOG.
  GrammarVocab vocab(
      {"{", "\xC1\xBB", "\xE0\x81\xBB", "\xF0\x80\x81\xBB", "\xC1", "\xBB", "\xE0", "\xF0", "}", "</s>"},
      {9});
  GrammarMatcher m(*g);
  std::vector<uint8_t> mask;
  m.allowed_tokens(vocab, &mask);
  for (int32_t id = 1; id < vocab.size(); ++id) {
    EXPECT_FALSE(m.allows_token(vocab, id)) << id;
    EXPECT_EQ(mask[static_cast<size_t>(id)], 0) << id;
  }
  EXPECT_TRUE(m.allows_token(vocab, 0));
  EXPECT_FALSE(m.accept_bytes("\xC1\xBB"));
  EXPECT_FALSE(m.accept_bytes("\xC1"));
  EXPECT_FALSE(m.accept_bytes("\xE0\x81"));
  ASSERT_TRUE(m.accept_token(vocab, 0).is_ok());
  m.allowed_tokens(vocab, &mask);
  EXPECT_EQ(mask[8], 1);
  for (int32_t id : {1, 2, 3, 4, 5, 6, 7}) EXPECT_EQ(mask[static_cast<size_t>(id)], 0) << id;
}

// Surrogates and code points past U+10FFFF are not characters, even where a negated class
// would take any code point; their neighbours are.
TEST(GrammarMatcher, SurrogatesAndOutOfRangeAreRejectedByNegatedClasses) {
  auto g = parse_gbnf(R"(root ::= [^a]*)");
  ASSERT_TRUE(g.ok());
  for (const char* good : {"\xED\x9F\xBF", "\xEE\x80\x80", "\xF4\x8F\xBF\xBF", "\xC2\xA9"}) {
    EXPECT_TRUE(matches(*g, good)) << testing::PrintToString(std::string(good));
  }
  for (const char* bad :
       {"\xED\xA0\x80", "\xED\xBF\xBF", "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xC0\x80"}) {
    EXPECT_FALSE(matches(*g, bad)) << testing::PrintToString(std::string(bad));
  }
  // A lead byte alone is allowed only when some well-formed completion is: ED can still
  // become U+D000-U+D7FF, F4 U+100000-U+10FFFF, but C0 and F5 nothing.
  GrammarVocab vocab({"\xED", "\xF4", "\xC0", "\xF5"}, {});
  GrammarMatcher m(*g);
  EXPECT_TRUE(m.allows_token(vocab, 0));
  EXPECT_TRUE(m.allows_token(vocab, 1));
  EXPECT_FALSE(m.allows_token(vocab, 2));
  EXPECT_FALSE(m.allows_token(vocab, 3));
}

}  // namespace
}  // namespace paddock::sample
