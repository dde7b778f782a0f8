// A tokenizer vocabulary as llama.cpp loads it from GGUF metadata: token texts, scores and
// attributes, BPE merge ranks, special token ids and the flags that steer encoding. Internal
// to the tokenizer library; others use tokenizer.h.
// Invariants after load_vocab: every id stored here is in [0, n_tokens) or -1 (kNoToken);
// token_to_id holds every token text (the first id wins on duplicates).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"
#include "tokenizer/flat_map.h"

namespace paddock::tok {

inline constexpr int32_t kNoToken = -1;

// llama.cpp's llama_token_attr bits.
enum TokenAttr : uint32_t {
  kAttrUndefined = 0,
  kAttrUnknown = 1 << 0,
  kAttrUnused = 1 << 1,
  kAttrNormal = 1 << 2,
  kAttrControl = 1 << 3,
  kAttrUserDefined = 1 << 4,
  kAttrByte = 1 << 5,
  kAttrLstrip = 1 << 7,
  kAttrRstrip = 1 << 8,
};

enum class VocabType { kSpm, kBpe, kWpm };

struct Vocab {
  VocabType type = VocabType::kSpm;
  std::string pre;  // tokenizer.ggml.pre
  std::vector<std::string> text;
  std::vector<float> score;
  std::vector<uint32_t> attr;
  TextIndex token_to_id;
  PairIndex merge_rank;  // BPE merges: (left id << 32 | right id) -> rank
  // SentencePiece: bytes no multi-byte token contains; a character made of one never merges,
  // so the text can be tokenized in independent pieces around it.
  std::array<bool, 128> spm_isolated{};

  int32_t bos = kNoToken, eos = kNoToken, eot = kNoToken, eom = kNoToken, unk = kNoToken;
  int32_t sep = kNoToken, pad = kNoToken, mask = kNoToken;
  bool add_bos = false, add_eos = false, add_sep = false;
  bool add_space_prefix = false, remove_extra_whitespaces = false, ignore_merges = false;

  std::vector<int32_t> eog;               // end-of-generation ids, sorted
  std::vector<int32_t> special_tokens;    // control/user-defined/unknown ids, longest text first
  std::array<int32_t, 256> byte_token{};  // SPM: <0xXX> (or the raw byte); BPE: the mapped byte
  size_t max_token_len = 0;

  int32_t n_tokens() const { return static_cast<int32_t>(text.size()); }
  int32_t find(std::string_view s) const { return token_to_id.find(s, text); }
  int32_t merge(int32_t left, int32_t right) const {
    if (left < 0 || right < 0) return -1;
    return merge_rank.find((static_cast<uint64_t>(left) << 32) | static_cast<uint32_t>(right));
  }
};

Result<std::unique_ptr<Vocab>> load_vocab(const gguf::File& f);

}  // namespace paddock::tok
