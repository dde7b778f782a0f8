// Byte-level BPE as llama.cpp's llm_tokenizer_bpe_session: each pre-tokenized word is mapped
// byte by byte to GPT-2's printable codepoints, split into characters, and the adjacent pair
// with the lowest merge rank (ties: leftmost) is merged until no ranked pair is left. With
// ignore_merges (Llama 3) a word that is a token as a whole is emitted directly.
#include <queue>
#include <string>

#include "tokenizer/algorithms.h"
#include "tokenizer/unicode.h"

namespace paddock::tok {

namespace {

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t off;
  uint32_t n;
  int32_t id;  // token of the symbol's text, or kNoToken
};

struct Bigram {
  int32_t rank;
  int32_t left;
  int32_t right;
  uint32_t size;
};

struct BigramOrder {
  bool operator()(const Bigram& l, const Bigram& r) const {
    return l.rank > r.rank || (l.rank == r.rank && l.left > r.left);
  }
};

class BpeWord {
 public:
  explicit BpeWord(const Vocab& v) : v_(v) {}

  void tokenize(std::string_view word, std::vector<int32_t>& out) {
    enc_.clear();
    for (const char c : word) enc_ += byte_to_unicode(static_cast<uint8_t>(c));
    const std::string_view text = enc_;
    if (v_.ignore_merges) {
      if (const int32_t id = v_.find(text); id >= 0) {
        out.push_back(id);
        return;
      }
    }
    sym_.clear();
    for (size_t off = 0; off < text.size();) {
      const size_t n = std::min(utf8_len(static_cast<uint8_t>(text[off])), text.size() - off);
      const auto idx = static_cast<int32_t>(sym_.size());
      sym_.push_back({idx - 1, off + n == text.size() ? -1 : idx + 1, static_cast<uint32_t>(off),
                      static_cast<uint32_t>(n), v_.find(text.substr(off, n))});
      off += n;
    }
    queue_ = {};
    for (size_t i = 1; i < sym_.size(); ++i) add_bigram(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
    while (!queue_.empty()) {
      const Bigram b = queue_.top();
      queue_.pop();
      Symbol& l = sym_[static_cast<size_t>(b.left)];
      Symbol& r = sym_[static_cast<size_t>(b.right)];
      if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;  // outdated
      l.n += r.n;
      r.n = 0;
      l.id = v_.find(text.substr(l.off, l.n));
      l.next = r.next;
      if (r.next >= 0) sym_[static_cast<size_t>(r.next)].prev = b.left;
      add_bigram(l.prev, b.left);
      add_bigram(b.left, l.next);
    }
    for (int32_t i = sym_.empty() ? -1 : 0; i != -1; i = sym_[static_cast<size_t>(i)].next) {
      const Symbol& s = sym_[static_cast<size_t>(i)];
      if (s.n == 0) continue;
      if (s.id >= 0) {
        out.push_back(s.id);
        continue;
      }
      // llama.cpp's fallback: each byte of the (mapped) text as a one-byte token, if any.
      for (const char c : text.substr(s.off, s.n)) {
        if (const int32_t id = v_.find(std::string_view(&c, 1)); id >= 0) out.push_back(id);
      }
    }
  }

 private:
  void add_bigram(int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = sym_[static_cast<size_t>(left)];
    const Symbol& r = sym_[static_cast<size_t>(right)];
    const int32_t rank = v_.merge(l.id, r.id);
    if (rank < 0) return;
    queue_.push({rank, left, right, l.n + r.n});
  }

  const Vocab& v_;
  std::string enc_;
  std::vector<Symbol> sym_;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue_;
};

}  // namespace

void bpe_tokenize(const Vocab& v, const PreTokenizer& pre, std::string_view text, std::vector<int32_t>& out) {
  std::vector<PreTokenizer::Range> words;
  pre.split(text, words);
  BpeWord bpe(v);
  for (const PreTokenizer::Range& w : words) bpe.tokenize(text.substr(w.begin, w.end - w.begin), out);
}

}  // namespace paddock::tok
