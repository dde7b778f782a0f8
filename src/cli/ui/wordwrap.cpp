#include "cli/ui/wordwrap.h"

namespace paddock::cli::ui {

namespace {

// Length of the UTF-8 sequence that starts with `lead`, 0 for a continuation/invalid byte.
size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

char32_t decode(std::string_view s) {
  const auto b = [&](size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(s[i])); };
  switch (s.size()) {
    case 1: return b(0);
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

// Length of the ANSI escape sequence at the start of s (CSI "ESC [ ... final" or a
// two-byte ESC X); 0 when s does not hold a complete one yet.
size_t escape_length(std::string_view s) {
  if (s.size() < 2) return 0;
  if (s[1] != '[') return 2;
  for (size_t i = 2; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x40 && c <= 0x7E) return i + 1;
  }
  return 0;
}

// Walks s one unit at a time: fn(bytes, codepoint, is_escape). Returns the bytes of an
// incomplete trailing unit that were not visited.
template <typename Fn>
std::string_view for_each_unit(std::string_view s, Fn&& fn) {
  size_t i = 0;
  while (i < s.size()) {
    const auto lead = static_cast<unsigned char>(s[i]);
    if (lead == 0x1B) {
      const size_t n = escape_length(s.substr(i));
      if (n == 0) return s.substr(i);
      fn(s.substr(i, n), U'\x1B', true);
      i += n;
      continue;
    }
    const size_t n = utf8_length(lead);
    if (n == 0) {  // stray byte: passed through, no width
      fn(s.substr(i, 1), U'\xFFFD', true);
      ++i;
      continue;
    }
    if (i + n > s.size()) return s.substr(i);
    fn(s.substr(i, n), decode(s.substr(i, n)), false);
    i += n;
  }
  return {};
}

}  // namespace

int codepoint_width(char32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp < 0xA0)) return 0;
  // Combining marks and zero-width characters.
  if ((cp >= 0x0300 && cp <= 0x036F) || (cp >= 0x1AB0 && cp <= 0x1AFF) || (cp >= 0x1DC0 && cp <= 0x1DFF) ||
      (cp >= 0x20D0 && cp <= 0x20FF) || (cp >= 0xFE20 && cp <= 0xFE2F) || cp == 0x200B || cp == 0x200C ||
      cp == 0x200D || cp == 0xFEFF || (cp >= 0xFE00 && cp <= 0xFE0F)) {
    return 0;
  }
  // East Asian Wide and Fullwidth blocks, and emoji.
  if ((cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0x303E) || (cp >= 0x3041 && cp <= 0x33FF) ||
      (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0xA000 && cp <= 0xA4CF) ||
      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0xFE30 && cp <= 0xFE4F) ||
      (cp >= 0xFF00 && cp <= 0xFF60) || (cp >= 0xFFE0 && cp <= 0xFFE6) || (cp >= 0x1F300 && cp <= 0x1F64F) ||
      (cp >= 0x1F900 && cp <= 0x1F9FF) || (cp >= 0x20000 && cp <= 0x3FFFD)) {
    return 2;
  }
  return 1;
}

size_t display_width(std::string_view s) {
  size_t w = 0;
  for_each_unit(s, [&](std::string_view, char32_t cp, bool escape) {
    if (!escape) w += static_cast<size_t>(codepoint_width(cp));
  });
  return w;
}

void WordWrapper::place_word(std::string& out) {
  if (word_.empty()) return;
  const auto width = static_cast<size_t>(width_);
  if (column_ > 0 && column_ + pending_spaces_ + word_width_ > width) {
    out += '\n';
    column_ = 0;
  } else {
    out.append(pending_spaces_, ' ');
    column_ += pending_spaces_;
  }
  pending_spaces_ = 0;
  out += word_;
  column_ += word_width_;
  word_.clear();
  word_width_ = 0;
}

void WordWrapper::add_codepoint(std::string_view bytes, char32_t cp, std::string& out) {
  if (cp == U'\n') {
    place_word(out);
    pending_spaces_ = 0;
    out += '\n';
    column_ = 0;
    return;
  }
  if (cp == U' ') {
    place_word(out);
    ++pending_spaces_;
    return;
  }
  const auto w = static_cast<size_t>(codepoint_width(cp));
  const auto width = static_cast<size_t>(width_);
  // A word that cannot fit even on an empty line is cut at the edge.
  if (word_width_ + w > width) {
    if (column_ > 0) {
      out += '\n';
      column_ = 0;
    }
    pending_spaces_ = 0;
    out += word_;
    out += '\n';
    word_.clear();
    word_width_ = 0;
  }
  word_ += bytes;
  word_width_ += w;
}

std::string WordWrapper::feed(std::string_view text) {
  if (width_ <= 0) return std::string(text);
  std::string out;
  const std::string input = partial_ + std::string(text);
  partial_ = std::string(for_each_unit(input, [&](std::string_view bytes, char32_t cp, bool escape) {
    if (escape) {
      word_ += bytes;  // zero width, kept in order with the word it styles
    } else {
      add_codepoint(bytes, cp, out);
    }
  }));
  return out;
}

std::string WordWrapper::finish() {
  std::string out;
  if (width_ > 0) place_word(out);
  out += partial_;
  partial_.clear();
  column_ = 0;
  pending_spaces_ = 0;
  return out;
}

}  // namespace paddock::cli::ui
