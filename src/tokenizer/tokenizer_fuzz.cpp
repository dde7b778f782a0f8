// Fuzz target: random bytes through several vocabularies (the fixture GGUFs from
// PADDOCK_FIXTURES or ../shared/fixtures, else a small byte-level BPE vocabulary built in
// memory). Never crashes; ids are in range; for byte-level BPE whose vocabulary covers every
// byte, decode(encode(s)) == s for every input; the streaming detokenizer only emits complete
// characters and, with flush(), exactly what decode does.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "base/check.h"
#include "gguf/gguf.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace {

using paddock::Tokenizer;

void put_u32(std::string& b, uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
}
void put_u64(std::string& b, uint64_t v) {
  for (int i = 0; i < 8; ++i) b.push_back(static_cast<char>(v >> (8 * i)));
}
void put_str(std::string& b, const std::string& s) {
  put_u64(b, s.size());
  b += s;
}

// A GGUF with a 256-byte GPT-2 vocabulary plus a few merges.
std::string tiny_bpe_gguf() {
  std::vector<std::string> tokens;
  for (int c = 0; c < 256; ++c) tokens.push_back(paddock::tok::byte_to_unicode(static_cast<uint8_t>(c)));
  const std::vector<std::string> merges = {"h e", "l l", "he ll", "hell o", "\xc4\xa0 t", "\xc4\xa0t h"};
  for (const std::string& m : merges) {
    const size_t sp = m.find(' ');
    tokens.push_back(m.substr(0, sp) + m.substr(sp + 1));
  }
  std::string b = "GGUF";
  put_u32(b, 3);
  put_u64(b, 0);  // tensors
  put_u64(b, 3);  // metadata
  put_str(b, "tokenizer.ggml.model");
  put_u32(b, 8);
  put_str(b, "gpt2");
  put_str(b, "tokenizer.ggml.tokens");
  put_u32(b, 9);
  put_u32(b, 8);
  put_u64(b, tokens.size());
  for (const std::string& t : tokens) put_str(b, t);
  put_str(b, "tokenizer.ggml.merges");
  put_u32(b, 9);
  put_u32(b, 8);
  put_u64(b, merges.size());
  for (const std::string& m : merges) put_str(b, m);
  return b;
}

struct Loaded {
  std::string bytes;  // in-memory GGUF, kept alive for its File
  std::unique_ptr<paddock::gguf::File> file;
  std::unique_ptr<Tokenizer> tok;
  bool all_bytes = false;  // byte-level BPE with a token for every byte: round trips exactly
};

// Some vocabularies (falcon's) lack tokens for a few control bytes; llama.cpp drops those
// bytes, so the round trip holds only where every single byte survives.
bool round_trips_every_byte(const Tokenizer& t) {
  if (t.model() != "gpt2") return false;
  for (int b = 0; b < 256; ++b) {
    const std::string s(1, static_cast<char>(b));
    if (t.decode(t.encode(s, false, false)) != s) return false;
  }
  return true;
}

std::vector<Loaded>& tokenizers() {
  static std::vector<Loaded> all = [] {
    std::vector<Loaded> out;
    const char* env = std::getenv("PADDOCK_FIXTURES");
    const std::string dir = std::string(env && *env ? env : "../shared/fixtures") + "/tokenizer/";
    for (const char* name :
         {"vocab-llama3.gguf", "ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf",
          "ggml-vocab-deepseek-llm.gguf", "ggml-vocab-falcon.gguf", "ggml-vocab-bert-bge.gguf"}) {
      auto f = paddock::gguf::File::open(dir + name);
      if (!f.ok()) continue;
      auto t = Tokenizer::load(**f);
      if (!t.ok()) continue;
      const bool all = round_trips_every_byte(**t);
      out.push_back({{}, std::move(*f), std::move(*t), all});
    }
    Loaded tiny;
    tiny.bytes = tiny_bpe_gguf();
    auto f =
        paddock::gguf::File::parse({reinterpret_cast<const uint8_t*>(tiny.bytes.data()), tiny.bytes.size()});
    PADDOCK_CHECK(f.ok());
    tiny.file = std::move(*f);
    auto t = Tokenizer::load(*tiny.file);
    PADDOCK_CHECK(t.ok());
    tiny.tok = std::move(*t);
    tiny.all_bytes = round_trips_every_byte(*tiny.tok);
    PADDOCK_CHECK(tiny.all_bytes);
    out.push_back(std::move(tiny));
    return out;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string s(reinterpret_cast<const char*>(data), size);
  for (const Loaded& l : tokenizers()) {
    for (const bool parse_special : {false, true}) {
      const std::vector<int32_t> ids = l.tok->encode(s, parse_special, parse_special);
      for (const int32_t id : ids) PADDOCK_CHECK(id >= 0 && id < l.tok->n_vocab());
      const std::string decoded = l.tok->decode(ids, false, true);
      if (l.all_bytes && !parse_special) PADDOCK_CHECK(decoded == s);
      paddock::StreamingDetokenizer stream(*l.tok, true);
      std::string streamed;
      std::vector<size_t> cuts;
      for (const int32_t id : ids) {
        streamed += stream.push(id);
        cuts.push_back(streamed.size());
      }
      streamed += stream.flush();
      // No cut between two pushes lands inside a valid multi-byte character.
      const paddock::tok::Utf8Text t = paddock::tok::decode_utf8(streamed);
      for (size_t i = 0; i < t.cpts.size(); ++i) {
        if (t.offs[i + 1] - t.offs[i] < 2) continue;
        for (const size_t c : cuts) PADDOCK_CHECK(c <= t.offs[i] || c >= t.offs[i + 1]);
      }
      // SentencePiece's decode drops the leading space it prefixed; the stream keeps it.
      if (l.tok->model() == "gpt2") PADDOCK_CHECK(streamed == decoded);
    }
  }
  return 0;
}
