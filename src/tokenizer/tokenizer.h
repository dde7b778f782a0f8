// Text <-> token ids, bit-exact with llama.cpp for SentencePiece (`llama`), byte-level BPE
// (`gpt2`, with the pre-tokenizer named by tokenizer.ggml.pre) and WordPiece (`bert`)
// vocabularies loaded from GGUF metadata. A Tokenizer is immutable after load and thread-safe.
// Invalid UTF-8 is split like llama.cpp (each bad byte counts as one U+FFFD character) but its
// bytes are kept, so for byte-level BPE decode(encode(s)) == s for every byte string s.
//   PADDOCK_ASSIGN(auto tok, Tokenizer::load(*gguf_file));
//   std::vector<int32_t> ids = tok->encode("Hello", /*add_special=*/true, /*parse_special=*/false);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"

namespace paddock {

namespace tok {
struct Vocab;
class PreTokenizer;
}  // namespace tok

class Tokenizer {
 public:
  static Result<std::unique_ptr<Tokenizer>> load(const gguf::File& f);
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // add_special: BOS/EOS (SEP for WordPiece) as the vocabulary's add_* flags say.
  // parse_special: control tokens written in text (e.g. "<|eot_id|>") become their ids;
  // user-defined tokens are always recognised, as in llama.cpp.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // Bytes of one token as llama.cpp's token_to_piece: byte tokens give their byte, U+2581
  // becomes a space (SentencePiece), GPT-2 codepoints become bytes (BPE); control tokens give
  // their text when special is true and nothing otherwise. Unknown ids give "".
  std::string piece(int32_t id, bool special = true) const;

  // Concatenated pieces, as llama.cpp's detokenize: remove_special drops a leading BOS and a
  // trailing EOS the vocabulary adds; SentencePiece drops the space it prefixes to the first
  // piece; unparse_special renders control tokens as text.
  std::string decode(std::span<const int32_t> ids, bool remove_special = false,
                     bool unparse_special = false) const;

  int32_t n_vocab() const;
  int32_t bos() const;  // -1 when the vocabulary has none
  int32_t eos() const;
  int32_t eot() const;
  int32_t unk() const;
  int32_t sep() const;
  int32_t pad() const;
  bool add_bos() const;
  bool add_eos() const;
  bool is_eog(int32_t id) const;  // end of generation: eos, eot, eom, <|eot_id|>, <|im_end|>, ...
  std::string_view token_text(int32_t id) const;  // the raw vocabulary entry ("" if out of range)
  std::string_view model() const;                 // "llama", "gpt2" or "bert"
  std::string_view pre() const;                   // tokenizer.ggml.pre

 private:
  Tokenizer();
  void encode_fragment(std::string_view text, bool& prev_special, std::vector<int32_t>& out) const;

  std::unique_ptr<tok::Vocab> vocab_;
  std::unique_ptr<tok::PreTokenizer> pre_;
};

// Turns a stream of token ids into text that only ever contains complete UTF-8 characters:
// bytes of a character split across tokens are held back until it is complete. flush()
// returns whatever is held (possibly an incomplete character) at the end of the stream.
//   StreamingDetokenizer d(tok); for (id : ids) out += d.push(id); out += d.flush();
class StreamingDetokenizer {
 public:
  explicit StreamingDetokenizer(const Tokenizer& t, bool special = false) : tok_(t), special_(special) {}
  std::string push(int32_t id);
  std::string flush();

 private:
  const Tokenizer& tok_;
  bool special_;
  std::string pending_;
};

}  // namespace paddock
