// The matcher keeps every way the input so far can be read as stacks topped by a character
// set; a code point pops matching tops and re-expands rule references beneath them.
#include "sample/grammar_matcher.h"

#include <algorithm>
#include <utility>

namespace paddock::sample {
namespace {

// Bounds the work of one expansion, so a pathological (ambiguous, nullable-heavy) grammar
// costs a rejection instead of unbounded time.
constexpr size_t kExpansionBudget = 200000;

bool is_end(const Element* e) { return e->type == ElemType::kEnd || e->type == ElemType::kAlt; }

// Expands rule references at the top of `start` until every stack is topped by a character
// set or is empty; appends the results to `out`. False when the budget or kMaxStacks ran out.
bool expand(GrammarMatcher::Stack start, const Grammar& g, std::vector<GrammarMatcher::Stack>* out,
            size_t* budget) {
  std::vector<GrammarMatcher::Stack> todo;
  todo.push_back(std::move(start));
  while (!todo.empty()) {
    if ((*budget)-- == 0) return false;
    GrammarMatcher::Stack s = std::move(todo.back());
    todo.pop_back();
    if (s.empty() || s.back()->type != ElemType::kRuleRef) {
      if (std::find(out->begin(), out->end(), s) == out->end()) {
        if (out->size() >= GrammarMatcher::kMaxStacks) return false;
        out->push_back(std::move(s));
      }
      continue;
    }
    const Element* ref = s.back();
    s.pop_back();
    if (!is_end(ref + 1)) s.push_back(ref + 1);
    const std::vector<Element>& rule = g.rules[ref->value];
    const Element* alt = rule.data();
    while (true) {
      GrammarMatcher::Stack next = s;
      if (!is_end(alt)) next.push_back(alt);
      todo.push_back(std::move(next));
      while (!is_end(alt)) ++alt;
      if (alt->type == ElemType::kEnd) break;
      ++alt;
    }
  }
  return true;
}

bool step(const std::vector<GrammarMatcher::Stack>& in, uint32_t c, const Grammar& g,
          std::vector<GrammarMatcher::Stack>* out) {
  out->clear();
  size_t budget = kExpansionBudget;
  for (const auto& s : in) {
    if (s.empty()) continue;
    const Element* after = nullptr;
    if (!char_set_matches(s.back(), c, &after)) continue;
    GrammarMatcher::Stack next(s.begin(), s.end() - 1);
    if (!is_end(after)) next.push_back(after);
    if (!expand(std::move(next), g, out, &budget)) {
      out->clear();
      return false;
    }
  }
  return !out->empty();
}

// The smallest code point a character of each length may encode (shorter ones are overlong).
constexpr uint32_t kMinOfLength[5] = {0, 0, 0x80, 0x800, 0x10000};
constexpr uint32_t kMaxCodePoint = 0x10FFFF;
constexpr uint32_t kSurrogateLo = 0xD800, kSurrogateHi = 0xDFFF;

// The well-formed code points a partial character can still complete to, as at most two
// ranges around the surrogates; returns how many ranges there are (0: it cannot complete).
int completions(PartialUtf8 p, std::pair<uint32_t, uint32_t> out[2]) {
  const int shift = 6 * p.remain;
  const uint64_t first = uint64_t{p.value} << shift;
  const uint64_t lo = std::max<uint64_t>(first, kMinOfLength[p.len]);
  const uint64_t hi = std::min<uint64_t>(first | ((uint64_t{1} << shift) - 1), kMaxCodePoint);
  int n = 0;
  if (lo <= hi && lo < kSurrogateLo)
    out[n++] = {static_cast<uint32_t>(lo), static_cast<uint32_t>(std::min<uint64_t>(hi, kSurrogateLo - 1))};
  if (lo <= hi && hi > kSurrogateHi)
    out[n++] = {static_cast<uint32_t>(std::max<uint64_t>(lo, kSurrogateHi + 1)), static_cast<uint32_t>(hi)};
  return n;
}

bool is_well_formed(uint32_t c, int len) {
  return c >= kMinOfLength[len] && c <= kMaxCodePoint && (c < kSurrogateLo || c > kSurrogateHi);
}

bool partial_possible(const std::vector<GrammarMatcher::Stack>& stacks, PartialUtf8 p) {
  if (p.remain == 0) return true;
  std::pair<uint32_t, uint32_t> ranges[2];
  const int n = completions(p, ranges);
  for (const auto& s : stacks) {
    if (s.empty()) continue;
    for (int i = 0; i < n; ++i) {
      if (char_set_intersects(s.back(), ranges[i].first, ranges[i].second)) return true;
    }
  }
  return false;
}

}  // namespace

bool decode_utf8(std::string_view bytes, PartialUtf8 start, std::vector<uint32_t>* cps, PartialUtf8* end) {
  PartialUtf8 p = start;
  std::pair<uint32_t, uint32_t> ranges[2];
  for (char ch : bytes) {
    auto b = static_cast<uint8_t>(ch);
    if (p.remain > 0) {
      if ((b & 0xC0) != 0x80) return false;
      p.value = (p.value << 6) | (b & 0x3F);
      if (--p.remain == 0) {
        if (!is_well_formed(p.value, p.len)) return false;
        cps->push_back(p.value);
        p = PartialUtf8{};
        continue;
      }
    } else if (b < 0x80) {
      cps->push_back(b);
      continue;
    } else if ((b & 0xE0) == 0xC0) {
      p = PartialUtf8{uint32_t{b} & 0x1F, 1, 2};
    } else if ((b & 0xF0) == 0xE0) {
      p = PartialUtf8{uint32_t{b} & 0x0F, 2, 3};
    } else if ((b & 0xF8) == 0xF0) {
      p = PartialUtf8{uint32_t{b} & 0x07, 3, 4};
    } else {
      return false;
    }
    // Reject a prefix as soon as no continuation can make it well-formed.
    if (completions(p, ranges) == 0) return false;
  }
  *end = p;
  return true;
}

GrammarVocab::GrammarVocab(std::vector<std::string> pieces, const std::vector<int32_t>& eog_ids)
    : pieces_(std::move(pieces)), eog_(pieces_.size(), false) {
  for (int32_t id : eog_ids) {
    if (id >= 0 && static_cast<size_t>(id) < pieces_.size()) eog_[static_cast<size_t>(id)] = true;
  }
  offsets_.reserve(pieces_.size() + 1);
  partial_.reserve(pieces_.size());
  valid_.reserve(pieces_.size());
  for (const std::string& p : pieces_) {
    offsets_.push_back(static_cast<uint32_t>(cps_.size()));
    PartialUtf8 end;
    const size_t before = cps_.size();
    const bool ok = decode_utf8(p, PartialUtf8{}, &cps_, &end);
    if (!ok) cps_.resize(before);
    partial_.push_back(ok ? end : PartialUtf8{});
    valid_.push_back(ok);
  }
  offsets_.push_back(static_cast<uint32_t>(cps_.size()));
  for (int32_t id = 0; id < size(); ++id) {
    const Decoded d = decoded(id);
    if (d.valid && !is_eog(id) && (d.n > 0 || d.partial.remain > 0)) trie_order_.push_back(id);
  }
  std::sort(trie_order_.begin(), trie_order_.end(), [this](int32_t a, int32_t b) {
    const Decoded da = decoded(a), db = decoded(b);
    if (std::lexicographical_compare(da.cps, da.cps + da.n, db.cps, db.cps + db.n)) return true;
    if (std::lexicographical_compare(db.cps, db.cps + db.n, da.cps, da.cps + da.n)) return false;
    return a < b;
  });
  for (int32_t id = 0; id < size(); ++id) {
    if (is_eog(id)) eog_ids_.push_back(id);
  }
  trie_nodes_.emplace_back();
  build_trie(0, 0, trie_order_.size(), 0);
}

void GrammarVocab::build_trie(uint32_t node, size_t lo, size_t hi, size_t depth) {
  // Sorted order puts the tokens that end at this depth first, then one run per next code point.
  size_t i = lo;
  const auto ends_begin = static_cast<uint32_t>(trie_ends_.size());
  for (; i < hi && decoded(trie_order_[i]).n == depth; ++i) trie_ends_.push_back(trie_order_[i]);
  trie_nodes_[node].ends_begin = ends_begin;
  trie_nodes_[node].ends_end = static_cast<uint32_t>(trie_ends_.size());
  std::vector<std::pair<size_t, size_t>> runs;
  while (i < hi) {
    const uint32_t c = decoded(trie_order_[i]).cps[depth];
    size_t j = i + 1;
    while (j < hi && decoded(trie_order_[j]).cps[depth] == c) ++j;
    runs.emplace_back(i, j);
    i = j;
  }
  const auto first = static_cast<uint32_t>(trie_nodes_.size());
  trie_nodes_[node].children_begin = first;
  trie_nodes_[node].children_end = first + static_cast<uint32_t>(runs.size());
  for (const auto& [b, e] : runs) {
    TrieNode child;
    child.cp = decoded(trie_order_[b]).cps[depth];
    trie_nodes_.push_back(child);
  }
  for (size_t k = 0; k < runs.size(); ++k)
    build_trie(first + static_cast<uint32_t>(k), runs[k].first, runs[k].second, depth + 1);
}

GrammarVocab::Decoded GrammarVocab::decoded(int32_t id) const {
  const auto i = static_cast<size_t>(id);
  return Decoded{cps_.data() + offsets_[i], offsets_[i + 1] - offsets_[i], partial_[i], valid_[i]};
}

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar) : grammar_(std::move(grammar)) {
  size_t budget = kExpansionBudget;
  StackSet stacks;
  const Element* root = grammar_->rules[grammar_->root].data();
  while (true) {
    Stack s;
    if (!is_end(root)) s.push_back(root);
    if (!expand(std::move(s), *grammar_, &stacks, &budget)) {
      stacks.clear();
      break;
    }
    while (!is_end(root)) ++root;
    if (root->type == ElemType::kEnd) break;
    ++root;
  }
  state_ = intern(std::move(stacks));
}

uint32_t GrammarMatcher::intern(StackSet s) const {
  std::sort(s.begin(), s.end());
  auto [it, inserted] = cache_.ids.emplace(s, static_cast<uint32_t>(cache_.states.size()));
  if (inserted) cache_.states.push_back(std::move(s));
  return it->second;
}

int64_t GrammarMatcher::transition(uint32_t state, uint32_t c) const {
  const uint64_t key = (uint64_t{state} << 32) | c;
  if (auto it = cache_.next.find(key); it != cache_.next.end()) return it->second;
  StackSet out;
  const int64_t next = step(cache_.states[state], c, *grammar_, &out) ? int64_t{intern(std::move(out))} : -1;
  cache_.next.emplace(key, next);
  return next;
}

void GrammarMatcher::trim_cache() const {
  if (cache_.states.size() <= kMaxCachedStates && cache_.next.size() <= kMaxCachedTransitions) return;
  StackSet current = cache_.states[state_];
  cache_ = Cache{};
  state_ = intern(std::move(current));
}

int64_t GrammarMatcher::advance(const uint32_t* cps, size_t n, PartialUtf8 partial) const {
  int64_t state = state_;
  for (size_t i = 0; i < n && state >= 0; ++i) state = transition(static_cast<uint32_t>(state), cps[i]);
  if (state < 0 || !partial_possible(cache_.states[static_cast<size_t>(state)], partial)) return -1;
  return state;
}

void GrammarMatcher::allowed_tokens(const GrammarVocab& vocab, std::vector<uint8_t>* allowed) const {
  trim_cache();
  allowed->assign(static_cast<size_t>(vocab.size()), 0);
  if (partial_.remain != 0) {
    for (int32_t id = 0; id < vocab.size(); ++id)
      (*allowed)[static_cast<size_t>(id)] = allows_token(vocab, id);
    return;
  }
  if (can_end()) {
    for (const int32_t id : vocab.eog_ids()) (*allowed)[static_cast<size_t>(id)] = 1;
  }
  walk(vocab, vocab.trie_nodes()[0], state_, allowed);
}

// The tokens below `node` share the prefix that led to `state`.
void GrammarMatcher::walk(const GrammarVocab& vocab, const GrammarVocab::TrieNode& node, uint32_t state,
                          std::vector<uint8_t>* allowed) const {
  const std::vector<int32_t>& ends = vocab.trie_ends();
  for (uint32_t e = node.ends_begin; e < node.ends_end; ++e) {
    const int32_t id = ends[e];
    (*allowed)[static_cast<size_t>(id)] = partial_possible(cache_.states[state], vocab.decoded(id).partial);
  }
  const std::vector<GrammarVocab::TrieNode>& nodes = vocab.trie_nodes();
  for (uint32_t c = node.children_begin; c < node.children_end; ++c) {
    const int64_t next = transition(state, nodes[c].cp);
    if (next >= 0) walk(vocab, nodes[c], static_cast<uint32_t>(next), allowed);
  }
}

bool GrammarMatcher::allows_token(const GrammarVocab& vocab, int32_t id) const {
  if (vocab.is_eog(id)) return can_end();
  trim_cache();
  if (partial_.remain == 0) {
    const GrammarVocab::Decoded d = vocab.decoded(id);
    if (!d.valid || (d.n == 0 && d.partial.remain == 0)) return false;
    return advance(d.cps, d.n, d.partial) >= 0;
  }
  std::vector<uint32_t> cps;
  PartialUtf8 end;
  const std::string& piece = vocab.piece(id);
  if (piece.empty() || !decode_utf8(piece, partial_, &cps, &end)) return false;
  return advance(cps.data(), cps.size(), end) >= 0;
}

Status GrammarMatcher::accept_token(const GrammarVocab& vocab, int32_t id) {
  if (vocab.is_eog(id)) {
    if (!can_end()) return invalid_argument("grammar: end of generation before the grammar is complete");
    state_ = intern(StackSet{});
    return Status::ok();
  }
  if (vocab.piece(id).empty() || !accept_bytes(vocab.piece(id))) {
    return invalid_argument("grammar: token " + std::to_string(id) + " is not allowed here");
  }
  return Status::ok();
}

bool GrammarMatcher::accept_bytes(std::string_view bytes) {
  trim_cache();
  std::vector<uint32_t> cps;
  PartialUtf8 end;
  if (!decode_utf8(bytes, partial_, &cps, &end)) return false;
  const int64_t next = advance(cps.data(), cps.size(), end);
  if (next < 0) return false;
  state_ = static_cast<uint32_t>(next);
  partial_ = end;
  return true;
}

bool GrammarMatcher::can_end() const {
  if (partial_.remain != 0) return false;
  const StackSet& stacks = cache_.states[state_];
  return std::any_of(stacks.begin(), stacks.end(), [](const Stack& s) { return s.empty(); });
}

bool GrammarMatcher::is_finished() const {
  const StackSet& stacks = cache_.states[state_];
  return std::all_of(stacks.begin(), stacks.end(), [](const Stack& s) { return s.empty(); });
}

}  // namespace paddock::sample
