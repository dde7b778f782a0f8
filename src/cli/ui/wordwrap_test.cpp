#include "cli/ui/wordwrap.h"

#include <gtest/gtest.h>

#include <vector>

namespace paddock::cli::ui {
namespace {

std::string wrap_pieces(int width, const std::vector<std::string>& pieces) {
  WordWrapper w(width);
  std::string out;
  for (const std::string& p : pieces) out += w.feed(p);
  return out + w.finish();
}

std::string wrap_bytewise(int width, const std::string& text) {
  WordWrapper w(width);
  std::string out;
  for (const char c : text) out += w.feed(std::string(1, c));
  return out + w.finish();
}

TEST(DisplayWidth, CountsColumnsNotBytes) {
  EXPECT_EQ(display_width("hello"), 5u);
  EXPECT_EQ(display_width("héllo"), 5u);
  EXPECT_EQ(display_width("日本"), 4u);
  EXPECT_EQ(display_width("e\xCC\x81"), 1u);  // e + combining acute
  EXPECT_EQ(display_width("\x1b[1mbold\x1b[0m"), 4u);
}

TEST(WordWrap, BreaksBeforeWordsThatDoNotFit) {
  EXPECT_EQ(wrap_pieces(10, {"the quick brown fox jumps"}), "the quick\nbrown fox\njumps");
  EXPECT_EQ(wrap_pieces(10, {"the qu", "ick bro", "wn fox ", "jumps"}), "the quick\nbrown fox\njumps");
  EXPECT_EQ(wrap_bytewise(10, "the quick brown fox jumps"), "the quick\nbrown fox\njumps");
}

TEST(WordWrap, KeepsNewlinesAndResetsColumn) {
  EXPECT_EQ(wrap_pieces(10, {"abc\ndefgh ijklm"}), "abc\ndefgh\nijklm");
  EXPECT_EQ(wrap_pieces(10, {"one two\n\nthree"}), "one two\n\nthree");
}

TEST(WordWrap, CutsWordsLongerThanTheLine) {
  EXPECT_EQ(wrap_pieces(4, {"abcdefghij"}), "abcd\nefgh\nij");
  EXPECT_EQ(wrap_pieces(4, {"x abcdefghij"}), "x\nabcd\nefgh\nij");
}

TEST(WordWrap, Utf8SplitAcrossPiecesAndWideCharacters) {
  EXPECT_EQ(wrap_bytewise(6, "héllo wörld"), "héllo\nwörld");
  EXPECT_EQ(wrap_pieces(5, {"日本 語"}), "日本\n語");
  EXPECT_EQ(wrap_bytewise(5, "日本 日本"), "日本\n日本");
}

TEST(WordWrap, EscapesHaveNoWidth) {
  EXPECT_EQ(wrap_pieces(5, {"\x1b[90mab cd\x1b[0m"}), "\x1b[90mab cd\x1b[0m");
}

TEST(WordWrap, DisabledPassesThrough) {
  EXPECT_EQ(wrap_pieces(0, {"the quick brown fox jumps"}), "the quick brown fox jumps");
}

}  // namespace
}  // namespace paddock::cli::ui
