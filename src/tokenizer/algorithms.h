// The three tokenization algorithms over one piece of raw text (special tokens already split
// off). Internal to the tokenizer library; each mirrors llama.cpp's session of the same name.
//   spm_tokenize(vocab, escaped_text, out);  // appends ids to out
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/vocab.h"

namespace paddock::tok {

// SentencePiece BPE (llm_tokenizer_spm): text already has spaces escaped as U+2581.
void spm_tokenize(const Vocab& v, std::string_view text, std::vector<int32_t>& out);
// Byte-level BPE (llm_tokenizer_bpe): pre-tokenize, map bytes to codepoints, merge by rank.
void bpe_tokenize(const Vocab& v, const PreTokenizer& pre, std::string_view text, std::vector<int32_t>& out);
// WordPiece (llm_tokenizer_wpm): normalise and split words, then longest-prefix match.
void wpm_tokenize(const Vocab& v, std::string_view text, std::vector<int32_t>& out);

}  // namespace paddock::tok
