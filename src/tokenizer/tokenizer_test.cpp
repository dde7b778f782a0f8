// Unit tests of the tokenizer algorithms on hand-made inputs (no fixtures needed): UTF-8
// decoding, category flags, the pre-tokenizer splits, BPE merges over a tiny vocabulary built
// in memory, special-token partitioning, decoding and the streaming detokenizer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace paddock::tok {
namespace {

std::vector<std::string> words(std::string_view pre, std::string_view text) {
  auto regexes = pre_tokenizer_regexes(pre);
  EXPECT_TRUE(regexes.has_value());
  auto p = PreTokenizer::create(*regexes);
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  std::vector<PreTokenizer::Range> r;
  (*p)->split(text, r);
  std::vector<std::string> out;
  for (const auto& w : r) out.emplace_back(text.substr(w.begin, w.end - w.begin));
  return out;
}

TEST(Unicode, DecodesValidAndKeepsInvalidBytesAsOneCharEach) {
  const Utf8Text t = decode_utf8("a\xc3\xa9\xff\xe2\x82");
  ASSERT_EQ(t.cpts.size(), 5u);
  EXPECT_EQ(t.cpts[1], 0xE9u);
  EXPECT_EQ(t.cpts[2], kReplacementChar);
  EXPECT_EQ(t.cpts[3], kReplacementChar);  // truncated sequence: lead and continuation byte apart
  EXPECT_EQ(t.cpts[4], kReplacementChar);
  EXPECT_EQ(t.offs, (std::vector<uint32_t>{0, 1, 3, 4, 5, 6}));
}

TEST(Unicode, CategoriesAndWhitespace) {
  EXPECT_TRUE(codepoint_flags('a') & kLetter);
  EXPECT_TRUE(codepoint_flags(0x416) & kLetter);   // Cyrillic Zhe
  EXPECT_TRUE(codepoint_flags(0x0663) & kNumber);  // Arabic-Indic three
  EXPECT_TRUE(codepoint_flags(0x00BD) & kNumber);  // one half (No)
  EXPECT_TRUE(codepoint_flags(0x3000) & kWhitespace);
  EXPECT_FALSE(codepoint_flags(0x200B) & kWhitespace);  // zero width space is Cf, not White_Space
  EXPECT_TRUE(codepoint_flags('!') & kPunctuation);
  EXPECT_TRUE(codepoint_flags('$') & kSymbol);
  EXPECT_EQ(codepoint_flags(0x110000), 0);
}

TEST(Unicode, IncompleteSuffixAndByteMap) {
  EXPECT_EQ(incomplete_utf8_suffix("ab\xe2\x82"), 2u);
  EXPECT_EQ(incomplete_utf8_suffix("ab\xe2\x82\xac"), 0u);
  EXPECT_EQ(incomplete_utf8_suffix("\xf0"), 1u);
  EXPECT_EQ(incomplete_utf8_suffix("\x80"), 0u);  // stray continuation: invalid, not pending
  EXPECT_EQ(byte_to_unicode(' '), "\xc4\xa0");    // GPT-2's "Ġ"
  for (int b = 0; b < 256; ++b) {
    const Utf8Text t = decode_utf8(byte_to_unicode(static_cast<uint8_t>(b)));
    ASSERT_EQ(t.cpts.size(), 1u);
    EXPECT_EQ(unicode_to_byte(t.cpts[0]), b);
  }
}

TEST(PreTokenizer, Gpt2SplitsContractionsLettersDigitsAndSpaces) {
  EXPECT_EQ(words("gpt-2", "Hello world's  123!!"),
            (std::vector<std::string>{"Hello", " world", "'s", " ", " 123", "!!"}));
  EXPECT_EQ(words("gpt-2", "a   "), (std::vector<std::string>{"a", "   "}));
}

TEST(PreTokenizer, Llama3GroupsDigitsByThreeAndKeepsNewlines) {
  EXPECT_EQ(words("llama-bpe", "12345 I'M\n\n x"),
            (std::vector<std::string>{"123", "45", " I", "'M", "\n\n", " x"}));
}

TEST(PreTokenizer, RegexStepsKeepUnmatchedTextAsPieces) {
  // falcon: punctuation runs first, then GPT-2's rules inside the rest, then digit triples.
  EXPECT_EQ(words("falcon", "ab,cd 1234"), (std::vector<std::string>{"ab", ",", "cd", " ", "123", "4"}));
  // qwen2 runs on PCRE2 over the collapsed text: one digit per piece, non-ASCII letters stay letters.
  EXPECT_EQ(words("qwen2", "Жук 42"), (std::vector<std::string>{"Жук", " ", "4", "2"}));
  // deepseek-coder: plain regexes over codepoints (CJK runs) and \p{N} over the collapsed text.
  EXPECT_EQ(words("deepseek-coder", "ab\n你好1"), (std::vector<std::string>{"ab", "\n", "你好", "1"}));
}

// gpt-4o (o200k) as llama.cpp splits it: over the collapsed text a non-ASCII letter counts as
// upper and lower case at once, so splits differ from the original regex's (Python's `regex`).
TEST(PreTokenizer, Gpt4oSplitsCaseRunsContractionsAndDigits) {
  using W = std::vector<std::string>;
  EXPECT_EQ(words("gpt-4o", "Hello world"), (W{"Hello", " world"}));
  EXPECT_EQ(words("gpt-4o", "HelloWorld HTTPServer ABC"), (W{"Hello", "World", " HTTPServer", " ABC"}));
  // Contractions stay on their word, in any case; a lone one is punctuation plus a letter.
  EXPECT_EQ(words("gpt-4o", "don't I'M we'LL they're"), (W{"don't", " I'M", " we'LL", " they're"}));
  EXPECT_EQ(words("gpt-4o", "'s"), (W{"'s"}));
  // Digits in groups of at most three, never with the space before them.
  EXPECT_EQ(words("gpt-4o", "12345 1234"), (W{"123", "45", " ", "123", "4"}));
  EXPECT_EQ(words("gpt-4o", "x2y"), (W{"x", "2", "y"}));
}

TEST(PreTokenizer, Gpt4oPunctuationAndWhitespace) {
  using W = std::vector<std::string>;
  // A punctuation run takes the newlines and slashes after it; one character before a word joins it.
  EXPECT_EQ(words("gpt-4o", "foo(): //\n"), (W{"foo", "():", " //\n"}));
  EXPECT_EQ(words("gpt-4o", "!!!\n\nHi"), (W{"!!!\n\n", "Hi"}));
  EXPECT_EQ(words("gpt-4o", "?\n/x"), (W{"?\n/", "x"}));
  EXPECT_EQ(words("gpt-4o", "http://x a/b"), (W{"http", "://", "x", " a", "/b"}));
  // Spaces: the last one before a word joins it; newlines end a whitespace run; trailing ones stay whole.
  EXPECT_EQ(words("gpt-4o", "a  b"), (W{"a", " ", " b"}));
  EXPECT_EQ(words("gpt-4o", "a \n\n  b  "), (W{"a", " \n\n", " ", " b", "  "}));
  EXPECT_EQ(words("gpt-4o", "\tx"), (W{"\tx"}));
}

TEST(PreTokenizer, Gpt4oNonAsciiLettersAsLlamaCppCollapsesThem) {
  using W = std::vector<std::string>;
  EXPECT_EQ(words("gpt-4o", "Привет мир 你好世界"), (W{"Привет", " мир", " 你好世界"}));
  EXPECT_EQ(words("gpt-4o", "ÉcoleNormale"), (W{"École", "Normale"}));
  // Python's regex gives "hello", "ÀB": collapsed, À is also lower case and ends the first word.
  EXPECT_EQ(words("gpt-4o", "helloÀB"), (W{"helloÀ", "B"}));
  // A combining mark is no letter here: it leaves the word (the original regex keeps it).
  EXPECT_EQ(words("gpt-4o", "e\u0301t\u00e9"), (W{"e", "\u0301t\u00e9"}));
  EXPECT_EQ(pre_tokenizer_regexes("llama4"), pre_tokenizer_regexes("gpt-4o"));
}

TEST(PreTokenizer, UnknownNameAndBadRegex) {
  EXPECT_FALSE(pre_tokenizer_regexes("no-such-pre").has_value());
  const std::vector<std::string> bad = {"[unclosed"};
  EXPECT_FALSE(PreTokenizer::create(bad).ok());
}

// A tiny byte-level BPE vocabulary as a GGUF in memory.
class TinyBpe : public ::testing::Test {
 protected:
  static void put_u32(std::string& b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
  }
  static void put_u64(std::string& b, uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
  }
  static void put_str(std::string& b, std::string_view s) {
    put_u64(b, s.size());
    b += s;
  }
  static void put_str_array(std::string& b, std::string_view key, const std::vector<std::string>& v) {
    put_str(b, key);
    put_u32(b, 9);
    put_u32(b, 8);
    put_u64(b, v.size());
    for (const auto& s : v) put_str(b, s);
  }

  void SetUp() override {
    std::vector<std::string> tokens;
    for (int c = 0; c < 256; ++c) tokens.push_back(byte_to_unicode(static_cast<uint8_t>(c)));
    tokens.insert(tokens.end(), {"he", "ll", "hell", "hello", "\xc4\xa0w"});
    std::vector<int32_t> types(tokens.size(), 1);
    for (const std::string& s : specials_) {
      tokens.push_back(s);
      types.push_back(3);  // control
    }
    const std::vector<std::string> merges = {"h e", "l l", "he ll", "hell o", "\xc4\xa0 w"};
    bytes_ = "GGUF";
    put_u32(bytes_, 3);
    put_u64(bytes_, 0);
    put_u64(bytes_, 5);
    put_str(bytes_, "tokenizer.ggml.model");
    put_u32(bytes_, 8);
    put_str(bytes_, "gpt2");
    put_str(bytes_, "tokenizer.ggml.pre");
    put_u32(bytes_, 8);
    put_str(bytes_, "gpt-2");
    put_str_array(bytes_, "tokenizer.ggml.tokens", tokens);
    put_str_array(bytes_, "tokenizer.ggml.merges", merges);
    put_str(bytes_, "tokenizer.ggml.token_type");
    put_u32(bytes_, 9);
    put_u32(bytes_, 5);
    put_u64(bytes_, types.size());
    for (const int32_t t : types) put_u32(bytes_, static_cast<uint32_t>(t));
    auto f = gguf::File::parse({reinterpret_cast<const uint8_t*>(bytes_.data()), bytes_.size()});
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    file_ = std::move(*f);
    auto t = Tokenizer::load(*file_);
    ASSERT_TRUE(t.ok()) << t.status().to_string();
    tok_ = std::move(*t);
  }

  std::vector<std::string> specials_ = {"<|end|>"};  // from id 261
  std::string bytes_;
  std::unique_ptr<gguf::File> file_;
  std::unique_ptr<Tokenizer> tok_;
};

TEST_F(TinyBpe, MergesByRankAndFallsBackToBytes) {
  // "hello" merges all the way; " wx" -> "Ġw" + "x".
  EXPECT_EQ(tok_->encode("hello wx", false, false), (std::vector<int32_t>{259, 260, 'x'}));
  EXPECT_EQ(tok_->decode(tok_->encode("hello wx", false, false)), "hello wx");
}

TEST_F(TinyBpe, ControlTokensOnlyWithParseSpecial) {
  const std::vector<int32_t> parsed = tok_->encode("he<|end|>", false, true);
  EXPECT_EQ(parsed, (std::vector<int32_t>{256, 261}));
  const std::vector<int32_t> plain = tok_->encode("he<|end|>", false, false);
  EXPECT_GT(plain.size(), 2u);
  EXPECT_TRUE(tok_->is_eog(261));
  EXPECT_EQ(tok_->piece(261, false), "");
  EXPECT_EQ(tok_->piece(261, true), "<|end|>");
}

// A vocabulary with Harmony's tokens (gpt-oss): <|return|> and <|call|> end generation and
// <|end|> does not; the message framing is shown in the output, as the Harmony parser needs.
class TinyHarmonyBpe : public TinyBpe {
 protected:
  TinyHarmonyBpe() { specials_ = {"<|end|>", "<|return|>", "<|call|>", "<|channel|>"}; }
};

TEST_F(TinyHarmonyBpe, EndIsShownAndOnlyReturnAndCallEndGeneration) {
  EXPECT_FALSE(tok_->is_eog(261));
  EXPECT_TRUE(tok_->is_eog(262));
  EXPECT_TRUE(tok_->is_eog(263));
  EXPECT_EQ(tok_->piece(261, false), "<|end|>");
  EXPECT_EQ(tok_->piece(264, false), "<|channel|>");
  EXPECT_EQ(tok_->piece(262, false), "");
  EXPECT_EQ(tok_->encode("he<|channel|>", false, true), (std::vector<int32_t>{256, 264}));
}

TEST_F(TinyBpe, RoundTripsInvalidUtf8AndStreamsWholeCharacters) {
  const std::string s = "h\xe2\x82\xac\xff\xc3";
  const std::vector<int32_t> ids = tok_->encode(s, false, false);
  EXPECT_EQ(tok_->decode(ids), s);
  StreamingDetokenizer d(*tok_);
  std::vector<std::string> parts;
  for (const int32_t id : ids) parts.push_back(d.push(id));
  // The euro sign's three byte tokens come out together with the third one.
  EXPECT_EQ(parts[0], "h");
  EXPECT_EQ(parts[1], "");
  EXPECT_EQ(parts[2], "");
  EXPECT_EQ(parts[3], "\xe2\x82\xac");
  EXPECT_EQ(parts[4], "\xff");  // an invalid byte is never pending
  EXPECT_EQ(parts[5], "");      // a lead byte waits for the rest of its character
  EXPECT_EQ(d.flush(), "\xc3");
}

}  // namespace
}  // namespace paddock::tok
