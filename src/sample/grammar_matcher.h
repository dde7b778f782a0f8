// Grammar state machine over Unicode code points (llama.cpp's llama_grammar model): the
// state is a set of stacks of positions in the rules, each topped by a character set (or
// empty = the root rule is complete), plus the bytes of a UTF-8 character that a token left
// unfinished. Token texts are plain byte strings, decoded once per vocabulary (GrammarVocab),
// so no loaded model is needed.
// Invariants: stacks are deduplicated and at most kMaxStacks; a state with no stacks accepts
// nothing. EOG tokens are allowed exactly when the grammar can be complete.
//   GrammarMatcher m(grammar); if (m.allows_token(vocab, id)) PADDOCK_TRY(m.accept_token(vocab, id));
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "sample/gbnf.h"

namespace paddock::sample {

// Bytes of a UTF-8 character that is not complete yet: `value` holds the bits seen so far,
// `remain` the number of continuation bytes still to come, `len` the character's length in
// bytes (2-4; 0 when complete). Only prefixes of well-formed characters are represented:
// overlong encodings, surrogates and code points above U+10FFFF are malformed.
struct PartialUtf8 {
  uint32_t value = 0;
  int remain = 0;
  int len = 0;
};

// Token texts (what the tokenizer's piece(id) returns) and the end-of-generation ids.
class GrammarVocab {
 public:
  GrammarVocab(std::vector<std::string> pieces, const std::vector<int32_t>& eog_ids);

  int32_t size() const { return static_cast<int32_t>(pieces_.size()); }
  bool is_eog(int32_t id) const { return eog_[static_cast<size_t>(id)]; }
  const std::string& piece(int32_t id) const { return pieces_[static_cast<size_t>(id)]; }

  // The token decoded from a clean UTF-8 boundary; `valid` false for malformed UTF-8.
  struct Decoded {
    const uint32_t* cps;
    size_t n;
    PartialUtf8 partial;
    bool valid;
  };
  Decoded decoded(int32_t id) const;
  // Ids of valid, non-empty, non-EOG tokens sorted by code points: tokens sharing a prefix
  // are contiguous.
  const std::vector<int32_t>& trie_order() const { return trie_order_; }
  const std::vector<int32_t>& eog_ids() const { return eog_ids_; }

  // The tokens of trie_order() as a trie over their code points, built once per vocabulary:
  // a node is a shared prefix, its children are contiguous in trie_nodes(), and the tokens
  // whose code points end at it (possibly inside a UTF-8 character) are listed in
  // trie_ends(). Node 0 is the root (the empty prefix). A walk skips a rejected child with
  // every token below it in O(1), instead of scanning them.
  struct TrieNode {
    uint32_t cp = 0;                                // the code point from the parent
    uint32_t children_begin = 0, children_end = 0;  // into trie_nodes()
    uint32_t ends_begin = 0, ends_end = 0;          // into trie_ends()
  };
  const std::vector<TrieNode>& trie_nodes() const { return trie_nodes_; }
  const std::vector<int32_t>& trie_ends() const { return trie_ends_; }

 private:
  // Fills node `node` from trie_order_[lo, hi), whose tokens share their first `depth` code points.
  void build_trie(uint32_t node, size_t lo, size_t hi, size_t depth);

  std::vector<std::string> pieces_;
  std::vector<bool> eog_;
  std::vector<uint32_t> cps_;      // all tokens' code points, back to back
  std::vector<uint32_t> offsets_;  // token id -> start in cps_ (size() + 1 entries)
  std::vector<PartialUtf8> partial_;
  std::vector<bool> valid_;
  std::vector<int32_t> trie_order_;
  std::vector<int32_t> eog_ids_;
  std::vector<TrieNode> trie_nodes_;
  std::vector<int32_t> trie_ends_;
};

class GrammarMatcher {
 public:
  using Stack = std::vector<const Element*>;
  static constexpr size_t kMaxStacks = 4096;

  explicit GrammarMatcher(std::shared_ptr<const Grammar> grammar);

  // Whether the token may come next (EOG: whether the grammar can be complete now).
  bool allows_token(const GrammarVocab& vocab, int32_t id) const;
  // allowed[id] = allows_token(vocab, id) for the whole vocabulary, walking the tokens as a
  // trie so a rejected prefix rejects every token that starts with it at once.
  void allowed_tokens(const GrammarVocab& vocab, std::vector<uint8_t>* allowed) const;
  // Advances over the token; an error when the grammar does not allow it (state unchanged).
  Status accept_token(const GrammarVocab& vocab, int32_t id);
  // Advances over raw bytes; false (state unchanged) when the grammar rejects them.
  bool accept_bytes(std::string_view bytes);

  // The input so far is a complete sentence of the grammar.
  bool can_end() const;
  // Nothing more can be accepted (no stacks left, or only complete ones).
  bool is_finished() const;

 private:
  using StackSet = std::vector<Stack>;
  // Every set of stacks seen so far, interned, with memoised transitions: a DFA built lazily,
  // so repeated states (inside a JSON string, say) cost a hash lookup per code point.
  struct Cache {
    std::vector<StackSet> states;
    std::map<StackSet, uint32_t> ids;
    std::unordered_map<uint64_t, int64_t> next;  // state << 32 | code point -> state, -1 = rejected
  };
  static constexpr size_t kMaxCachedStates = 20000;
  static constexpr size_t kMaxCachedTransitions = size_t{1} << 21;

  uint32_t intern(StackSet s) const;
  int64_t transition(uint32_t state, uint32_t c) const;
  void trim_cache() const;  // starts over when the cache is too large, keeping the current state
  void walk(const GrammarVocab& vocab, const GrammarVocab::TrieNode& node, uint32_t state,
            std::vector<uint8_t>* allowed) const;
  // State after consuming `cps` then checking that `partial` can still continue; -1 if rejected.
  int64_t advance(const uint32_t* cps, size_t n, PartialUtf8 partial) const;

  std::shared_ptr<const Grammar> grammar_;
  mutable Cache cache_;
  mutable uint32_t state_ = 0;  // renumbered by trim_cache
  PartialUtf8 partial_;
};

// Decodes bytes that continue `start`; returns false for malformed UTF-8, including a
// prefix no continuation can make well-formed (C0, E0 80, ED A0, F4 90, F5...).
bool decode_utf8(std::string_view bytes, PartialUtf8 start, std::vector<uint32_t>* cps, PartialUtf8* end);

}  // namespace paddock::sample
