// SentencePiece BPE as llama.cpp's llm_tokenizer_spm_session: start from UTF-8 characters,
// repeatedly merge the adjacent pair whose concatenation is the highest-scoring token (ties:
// leftmost), then emit each symbol's token or, failing that, its bytes (<0xXX> tokens).
// llama.cpp's rev_merge re-segmentation never fires (every merged symbol is a token), so a
// symbol is either a token or emitted as bytes.
#include <queue>

#include "tokenizer/algorithms.h"
#include "tokenizer/unicode.h"

namespace paddock::tok {

namespace {

struct Symbol {
  int32_t prev;
  int32_t next;
  uint32_t off;
  uint32_t n;
};

struct Bigram {
  float score;
  int32_t left;
  int32_t right;
  uint32_t size;
};

struct BigramOrder {
  bool operator()(const Bigram& l, const Bigram& r) const {
    return l.score < r.score || (l.score == r.score && l.left > r.left);
  }
};

void spm_tokenize_piece(const Vocab& v, std::string_view text, std::vector<int32_t>& out) {
  std::vector<Symbol> sym;
  sym.reserve(text.size());
  for (size_t off = 0; off < text.size();) {
    const size_t n = std::min(utf8_len(static_cast<uint8_t>(text[off])), text.size() - off);
    const auto idx = static_cast<int32_t>(sym.size());
    sym.push_back({idx - 1, off + n == text.size() ? -1 : idx + 1, static_cast<uint32_t>(off),
                   static_cast<uint32_t>(n)});
    off += n;
  }
  std::vector<Bigram> storage;
  storage.reserve(sym.size());
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue(BigramOrder{}, std::move(storage));
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = sym[static_cast<size_t>(left)];
    const uint32_t size = l.n + sym[static_cast<size_t>(right)].n;
    const int32_t id = v.find(text.substr(l.off, size));
    if (id < 0) return;
    queue.push({v.score[static_cast<size_t>(id)], left, right, size});
  };
  for (size_t i = 1; i < sym.size(); ++i) try_add(static_cast<int32_t>(i - 1), static_cast<int32_t>(i));
  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = sym[static_cast<size_t>(b.left)];
    Symbol& r = sym[static_cast<size_t>(b.right)];
    if (l.n == 0 || r.n == 0 || l.n + r.n != b.size) continue;
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }
  for (int32_t i = sym.empty() ? -1 : 0; i != -1; i = sym[static_cast<size_t>(i)].next) {
    const Symbol& s = sym[static_cast<size_t>(i)];
    const std::string_view piece = text.substr(s.off, s.n);
    if (const int32_t id = v.find(piece); id >= 0) {
      out.push_back(id);
      continue;
    }
    for (const char c : piece) {
      // A vocabulary without byte tokens falls back to <unk>; without that, the byte is lost.
      const int32_t id =
          v.byte_token[static_cast<uint8_t>(c)] >= 0 ? v.byte_token[static_cast<uint8_t>(c)] : v.unk;
      if (id >= 0) out.push_back(id);
    }
  }
}

}  // namespace

// Merges never cross a character no multi-byte token contains (e.g. '\n' in Llama 2's
// vocabulary), so the text is cut around such characters: the same result as one pass over
// everything, with small, cache-friendly queues.
void spm_tokenize(const Vocab& v, std::string_view text, std::vector<int32_t>& out) {
  size_t start = 0;
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<uint8_t>(text[i]);
    // Step by characters as the symbol split does, so a cut never lands inside one.
    const size_t n = std::min(utf8_len(c), text.size() - i);
    if (c < 128 && v.spm_isolated[c]) {
      if (i > start) spm_tokenize_piece(v, text.substr(start, i - start), out);
      spm_tokenize_piece(v, text.substr(i, 1), out);
      start = i + 1;
    }
    i += n;
  }
  if (start < text.size()) spm_tokenize_piece(v, text.substr(start), out);
}

}  // namespace paddock::tok
