// The matcher keeps every way the input so far can be read as stacks topped by a character
// set; a code point pops matching tops and re-expands rule references beneath them.
#include "sample/grammar_matcher.h"

#include <algorithm>

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

bool partial_possible(const std::vector<GrammarMatcher::Stack>& stacks, PartialUtf8 p) {
  if (p.remain == 0) return true;
  const uint32_t lo = p.value << (6 * p.remain);
  const uint32_t hi = lo | ((uint32_t{1} << (6 * p.remain)) - 1);
  for (const auto& s : stacks) {
    if (!s.empty() && char_set_intersects(s.back(), lo, hi)) return true;
  }
  return false;
}

}  // namespace

bool decode_utf8(std::string_view bytes, PartialUtf8 start, std::vector<uint32_t>* cps, PartialUtf8* end) {
  uint32_t value = start.value;
  int remain = start.remain;
  for (char ch : bytes) {
    auto b = static_cast<uint8_t>(ch);
    if (remain > 0) {
      if ((b & 0xC0) != 0x80) return false;
      value = (value << 6) | (b & 0x3F);
      if (--remain == 0) cps->push_back(value);
      continue;
    }
    if (b < 0x80) {
      cps->push_back(b);
    } else if ((b & 0xE0) == 0xC0) {
      value = b & 0x1F;
      remain = 1;
    } else if ((b & 0xF0) == 0xE0) {
      value = b & 0x0F;
      remain = 2;
    } else if ((b & 0xF8) == 0xF0) {
      value = b & 0x07;
      remain = 3;
    } else {
      return false;
    }
  }
  *end = PartialUtf8{remain > 0 ? value : 0, remain};
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
    for (int32_t id = 0; id < vocab.size(); ++id) {
      if (vocab.is_eog(id)) (*allowed)[static_cast<size_t>(id)] = 1;
    }
  }
  walk(vocab, 0, vocab.trie_order().size(), 0, state_, allowed);
}

// Tokens trie_order()[lo, hi) share their first `depth` code points, which led to `state`.
void GrammarMatcher::walk(const GrammarVocab& vocab, size_t lo, size_t hi, size_t depth, uint32_t state,
                          std::vector<uint8_t>* allowed) const {
  const std::vector<int32_t>& order = vocab.trie_order();
  size_t i = lo;
  while (i < hi) {
    const GrammarVocab::Decoded d = vocab.decoded(order[i]);
    if (d.n == depth) {  // the token ends here (possibly inside a UTF-8 character)
      if (depth > 0 || d.partial.remain > 0) {
        (*allowed)[static_cast<size_t>(order[i])] = partial_possible(cache_.states[state], d.partial);
      }
      ++i;
      continue;
    }
    const uint32_t c = d.cps[depth];
    size_t j = i + 1;
    while (j < hi && vocab.decoded(order[j]).cps[depth] == c) ++j;
    const int64_t next = transition(state, c);
    if (next >= 0) walk(vocab, i, j, depth + 1, static_cast<uint32_t>(next), allowed);
    i = j;
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
