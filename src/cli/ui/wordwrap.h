// Word wrapping for streamed model output. Text arrives in token-sized pieces; WordWrapper
// holds back only the word being typed, and breaks the line before a word that would not
// fit in `width` columns (a word wider than the line is cut at the edge). Widths count
// terminal columns: UTF-8 aware, East Asian wide characters take 2, combining marks and
// ANSI escape sequences take 0. A UTF-8 character split across pieces is kept whole.
//   WordWrapper w(80); out << w.feed(chunk); ... out << w.finish();
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace paddock::cli::ui {

// Columns a string takes on a terminal (escape sequences and invalid bytes excluded).
size_t display_width(std::string_view s);
// Columns of one Unicode code point: 0, 1 or 2.
int codepoint_width(char32_t cp);

class WordWrapper {
 public:
  // width <= 0 disables wrapping: feed() returns its input unchanged.
  explicit WordWrapper(int width) : width_(width) {}
  // Returns what can be printed now.
  std::string feed(std::string_view text);
  // Flushes the word being held back; the wrapper can be reused for a new answer.
  std::string finish();

 private:
  void place_word(std::string& out);
  void add_codepoint(std::string_view bytes, char32_t cp, std::string& out);

  int width_;
  size_t column_ = 0;          // columns already printed on the current line
  size_t pending_spaces_ = 0;  // spaces between the printed text and the held word
  std::string word_;           // the held word
  size_t word_width_ = 0;
  std::string partial_;  // an incomplete UTF-8 sequence or ANSI escape
};

}  // namespace paddock::cli::ui
