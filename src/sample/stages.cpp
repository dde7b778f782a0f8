#include "sample/stages.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace paddock::sample {

void best_candidates(std::span<const float> logits, std::span<const std::pair<int32_t, float>> changed,
                     size_t keep, std::vector<uint8_t>& mask, std::vector<TokenData>& out) {
  out.clear();
  if (keep == 0) return;
  // A heap of the best so far whose front is the worst of them.
  const auto offer = [&](const TokenData& t) {
    if (!usable(t.logit)) return;
    if (out.size() < keep) {
      out.push_back(t);
      std::push_heap(out.begin(), out.end(), better);
    } else if (better(t, out.front())) {
      std::pop_heap(out.begin(), out.end(), better);
      out.back() = t;
      std::push_heap(out.begin(), out.end(), better);
    }
  };
  mask.resize(logits.size(), 0);
  for (const auto& [id, l] : changed) {
    mask[static_cast<size_t>(id)] = 1;
    offer({id, l, 0});
  }
  constexpr size_t kBlock = 64;
  for (size_t b = 0; b < logits.size(); b += kBlock) {
    const size_t e = std::min(logits.size(), b + kBlock);
    if (out.size() == keep) {
      float m = -INFINITY;
      for (size_t i = b; i < e; ++i) m = m < logits[i] ? logits[i] : m;  // NaN never wins
      if (m < out.front().logit) continue;                               // equal may still win on its id
    }
    for (size_t i = b; i < e; ++i) {
      if (mask[i] == 0) offer({static_cast<int32_t>(i), logits[i], 0});
    }
  }
  for (const auto& [id, l] : changed) mask[static_cast<size_t>(id)] = 0;
  std::sort_heap(out.begin(), out.end(), better);  // best first
}

void sort_candidates(Candidates& c) {
  if (c.sorted) return;
  std::sort(c.items.begin(), c.items.end(), better);
  c.sorted = true;
}

void softmax(Candidates& c) {
  sort_candidates(c);
  if (c.items.empty()) return;
  const float max_logit = c.items.front().logit;
  double sum = 0;
  for (TokenData& t : c.items) {
    t.p = std::exp(t.logit - max_logit);
    sum += t.p;
  }
  for (TokenData& t : c.items) t.p = static_cast<float>(t.p / sum);
}

float penalize(float logit, int count, float repeat, float frequency, float presence) {
  logit = logit <= 0 ? logit * repeat : logit / repeat;
  return logit - static_cast<float>(count) * frequency - (count > 0 ? presence : 0.0f);
}

void top_k(Candidates& c, int32_t k) {
  if (k <= 0 || static_cast<size_t>(k) >= c.items.size()) {
    if (k > 0) sort_candidates(c);
    return;
  }
  if (!c.sorted) {
    std::partial_sort(c.items.begin(), c.items.begin() + k, c.items.end(), better);
    c.sorted = true;
  }
  c.items.resize(static_cast<size_t>(k));
}

void typical(Candidates& c, float p) {
  if (p >= 1.0f || c.items.empty()) return;
  softmax(c);
  double entropy = 0;
  for (const TokenData& t : c.items) {
    if (t.p > 0) entropy -= t.p * std::log(t.p);
  }
  std::vector<double> shifted(c.items.size());
  for (size_t i = 0; i < c.items.size(); ++i) {
    const float q = c.items[i].p;
    shifted[i] = q > 0 ? std::fabs(-std::log(q) - entropy) : INFINITY;
  }
  std::vector<size_t> order(c.items.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return shifted[a] < shifted[b]; });
  double cum = 0;
  size_t keep = order.size();
  for (size_t i = 0; i < order.size(); ++i) {
    cum += c.items[order[i]].p;
    if (cum > p) {
      keep = i + 1;
      break;
    }
  }
  std::vector<TokenData> kept;
  kept.reserve(keep);
  for (size_t i = 0; i < keep; ++i) kept.push_back(c.items[order[i]]);
  c.items = std::move(kept);
  c.sorted = false;
}

void top_p(Candidates& c, float p) {
  if (p >= 1.0f || c.items.empty()) return;
  softmax(c);
  double cum = 0;
  for (size_t i = 0; i < c.items.size(); ++i) {
    cum += c.items[i].p;
    if (cum >= p) {
      c.items.resize(i + 1);
      return;
    }
  }
}

void min_p(Candidates& c, float p) {
  if (p <= 0.0f || c.items.empty()) return;
  float max_logit = c.items.front().logit;
  for (const TokenData& t : c.items) max_logit = std::max(max_logit, t.logit);
  const float threshold = std::min(max_logit, max_logit + std::log(p));
  std::erase_if(c.items, [&](const TokenData& t) { return t.logit < threshold; });
}

void temperature(Candidates& c, float t) {
  if (t <= 0) {
    top_k(c, 1);
    return;
  }
  for (TokenData& d : c.items) d.logit /= t;
}

size_t draw(Candidates& c, double u) {
  softmax(c);
  double total = 0;
  for (const TokenData& t : c.items) total += t.p;
  const double target = u * total;
  double cum = 0;
  for (size_t i = 0; i < c.items.size(); ++i) {
    cum += c.items[i].p;
    if (target < cum) return i;
  }
  return c.items.empty() ? 0 : c.items.size() - 1;
}

}  // namespace paddock::sample
