// Pre-tokenizer of byte-level BPE: splits text into words with a sequence of regexes, each
// applied to the pieces the previous one produced (text a regex does not match stays a piece
// of its own), exactly as llama.cpp's unicode_regex_split. The two regexes llama.cpp runs with
// hand-written matchers (GPT-2's and Llama 3's) use the same hand-written logic here; every
// other regex runs on PCRE2 (JIT): regexes with \p{..} over a "collapsed" text where each
// non-ASCII codepoint becomes one byte naming its category, others over UTF-8 codepoints.
// Immutable after create(); split() is thread-safe.
//   PADDOCK_ASSIGN(auto pre, PreTokenizer::create(pre_tokenizer_regexes("llama-bpe").value()));
//   pre->split(text, words);  // words: byte ranges of text, in order, covering all of it
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace paddock::tok {

// llama.cpp's regex list for a `tokenizer.ggml.pre` name ("" = the default list); nullopt
// for names llama.cpp does not know.
std::optional<std::vector<std::string>> pre_tokenizer_regexes(std::string_view pre);

class PreTokenizer {
 public:
  static Result<std::unique_ptr<PreTokenizer>> create(std::span<const std::string> regexes);
  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  struct Range {
    uint32_t begin;
    uint32_t end;
  };
  // Appends the words of text (non-empty byte ranges, in order, covering text) to words.
  void split(std::string_view text, std::vector<Range>& words) const;

 private:
  struct Step;
  PreTokenizer();
  std::vector<Step> steps_;
  bool need_collapsed_ = false;
  bool need_utf_ = false;
};

}  // namespace paddock::tok
