#include "backend/moe.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"

namespace paddock {

namespace {

// Softmax of v[0..n) in place: exp(v - max), the sum in double, scaled by 1/sum as a float.
void softmax(float* v, int64_t n) {
  const float max = *std::max_element(v, v + n);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    v[i] = std::exp(v[i] - max);
    sum += v[i];
  }
  const auto scale = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) v[i] *= scale;
}

// The k largest of v (ties to the lower index), heaviest first, skipping zeros when
// `skip_zeros`. Returns how many were found.
int top_k(const float* v, int64_t n, int32_t k, bool skip_zeros, int32_t* out) {
  int32_t idx[kMaxExperts];
  int32_t m = 0;
  for (int32_t i = 0; i < n; ++i) {
    if (!skip_zeros || v[i] != 0.0f) idx[m++] = i;
  }
  const int32_t found = std::min(k, m);
  std::partial_sort(idx, idx + found, idx + m,
                    [v](int32_t a, int32_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
  std::copy(idx, idx + found, out);
  return found;
}
}  // namespace

void moe_gate_column(const float* logits, int64_t n_expert, const MoeParams& p, float* gate) {
  PADDOCK_CHECK(p.k > 0 && p.k <= n_expert && p.k <= kMaxExpertsPerToken && n_expert <= kMaxExperts);
  int32_t chosen[kMaxExpertsPerToken];
  float w[kMaxExpertsPerToken];
  if (p.gating == MoeGating::kSoftmaxTopK) {
    std::copy(logits, logits + n_expert, gate);
    softmax(gate, n_expert);
    const int n = top_k(gate, n_expert, p.k, false, chosen);
    for (int s = 0; s < n; ++s) w[s] = gate[chosen[s]];
  } else {
    const int n = top_k(logits, n_expert, p.k, false, chosen);
    for (int s = 0; s < n; ++s) w[s] = logits[chosen[s]];
    softmax(w, n);
  }
  if (p.norm) {
    double sum = 0;
    for (int s = 0; s < p.k; ++s) sum += w[s];
    const float denom = std::max(static_cast<float>(sum), 6.103515625e-5f);
    for (int s = 0; s < p.k; ++s) w[s] /= denom;
  }
  std::fill(gate, gate + n_expert, 0.0f);
  for (int s = 0; s < p.k; ++s) gate[chosen[s]] = w[s];
}

int moe_slots(const float* gate, int64_t n_expert, int32_t k, int32_t* experts) {
  PADDOCK_CHECK(n_expert <= kMaxExperts);
  return top_k(gate, n_expert, k, true, experts);
}

TensorView expert_matrix(const TensorView& experts, int64_t e) {
  PADDOCK_CHECK(e >= 0 && e < experts.ne[2] && experts.ne[3] == 1);
  TensorView v = experts.shifted(experts.nb[2] * static_cast<size_t>(e));
  v.ne[2] = 1;
  return v;
}

}  // namespace paddock
