#version 450
// The router's weights per token, as backend/moe.h's moe_gate_column: dst[:, t] is 0 but for
// the k chosen experts of logits src0[:, t]. One invocation per token (the work is a few
// passes over at most 1024 logits).
// Op words: 0 = k, 1 = gating (0: softmax over all, then the top k; 1: the top k logits,
// then softmax over them), 2 = norm (the chosen weights rescaled to sum 1).
#include "common.glsl"
layout(local_size_x = 1) in;

const uint MAX_EXPERTS = 1024, MAX_K = 64;
shared float p[MAX_EXPERTS];

void main() {
  const uint t = group_index(), n = t_ne(T_SRC0, 0);
  if (t >= t_ne(T_SRC0, 1)) return;
  const uint k = pu(0), in_row = t_at(T_SRC0, t, 0, 0), out_row = t_at(T_DST, t, 0, 0);
  const uint in_step = t_nb(T_SRC0, 0), out_step = t_nb(T_DST, 0);
  float mx = A_f[in_row >> 2];
  for (uint e = 0; e < n; ++e) {
    p[e] = A_f[(in_row + e * in_step) >> 2];
    mx = max(mx, p[e]);
  }
  if (pu(1) == 0) {  // softmax over all experts first
    float sum = 0.0;
    for (uint e = 0; e < n; ++e) {
      p[e] = exp(p[e] - mx);
      sum += p[e];
    }
    const float scale = 1.0 / sum;
    for (uint e = 0; e < n; ++e) p[e] *= scale;
  }
  // The top k, heaviest first, ties to the lower index: each pick is the heaviest after the
  // previous one in that order.
  uint chosen[MAX_K];
  float w[MAX_K];
  for (uint s = 0; s < k; ++s) {
    int best = -1;
    for (uint e = 0; e < n; ++e) {
      const bool after = s == 0 || p[e] < w[s - 1] || (p[e] == w[s - 1] && e > chosen[s - 1]);
      if (after && (best < 0 || p[e] > p[best])) best = int(e);
    }
    chosen[s] = uint(best);
    w[s] = p[best];
  }
  if (pu(1) == 1) {  // softmax over the chosen logits
    const float top = w[0];
    float sum = 0.0;
    for (uint s = 0; s < k; ++s) {
      w[s] = exp(w[s] - top);
      sum += w[s];
    }
    const float scale = 1.0 / sum;
    for (uint s = 0; s < k; ++s) w[s] *= scale;
  }
  if (pu(2) != 0) {
    float sum = 0.0;
    for (uint s = 0; s < k; ++s) sum += w[s];
    const float denom = max(sum, 6.103515625e-5);
    for (uint s = 0; s < k; ++s) w[s] /= denom;
  }
  for (uint e = 0; e < n; ++e) D_f[(out_row + e * out_step) >> 2] = 0.0;
  for (uint s = 0; s < k; ++s) D_f[(out_row + chosen[s] * out_step) >> 2] = w[s];
}
