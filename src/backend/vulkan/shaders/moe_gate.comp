#version 450
// The router's weights per token, as backend/moe.h's moe_gate_column: dst[:, t] is 0 but for
// the k chosen experts of logits src0[:, t]. A workgroup per token: its invocations share the
// experts for the softmax and rank each of theirs against all the others for the top k (a
// decode step has one token, whose routing would otherwise run on one invocation); one
// invocation finishes the chosen k weights.
// Op words: 0 = k, 1 = gating (0: softmax over all, then the top k; 1: the top k logits,
// then softmax over them), 2 = norm (the chosen weights rescaled to sum 1).
#include "common.glsl"
#extension GL_KHR_shader_subgroup_arithmetic : require
const uint WG = 64;
layout(local_size_x = WG) in;

const uint MAX_EXPERTS = 1024, MAX_K = 64;
shared float p[MAX_EXPERTS];
shared uint chosen[MAX_K];
shared float w[MAX_K];

// Workgroup-wide max and sum: each subgroup reduces, then every invocation combines the
// subgroups' results.
shared float by_subgroup[WG];
float reduce_max(float v) {
  v = subgroupMax(v);
  if (subgroupElect()) by_subgroup[gl_SubgroupID] = v;
  barrier();
  float r = by_subgroup[0];
  for (uint i = 1; i < gl_NumSubgroups; ++i) r = max(r, by_subgroup[i]);
  barrier();
  return r;
}
float reduce_sum(float v) {
  v = subgroupAdd(v);
  if (subgroupElect()) by_subgroup[gl_SubgroupID] = v;
  barrier();
  float r = 0.0;
  for (uint i = 0; i < gl_NumSubgroups; ++i) r += by_subgroup[i];
  barrier();
  return r;
}

void main() {
  const uint t = group_index(), n = t_ne(T_SRC0, 0), tid = gl_LocalInvocationID.x;
  if (t >= t_ne(T_SRC0, 1)) return;  // the whole workgroup: every invocation has this t
  const uint k = pu(0), in_row = t_at(T_SRC0, t, 0, 0), out_row = t_at(T_DST, t, 0, 0);
  const uint in_step = t_nb(T_SRC0, 0), out_step = t_nb(T_DST, 0);
  float mx = -1.0 / 0.0;
  for (uint e = tid; e < n; e += WG) {
    p[e] = A_f[(in_row + e * in_step) >> 2];
    mx = max(mx, p[e]);
  }
  mx = reduce_max(mx);
  if (pu(1) == 0) {  // softmax over all experts first
    float sum = 0.0;
    for (uint e = tid; e < n; e += WG) {
      p[e] = exp(p[e] - mx);
      sum += p[e];
    }
    const float scale = 1.0 / reduce_sum(sum);
    for (uint e = tid; e < n; e += WG) p[e] *= scale;
  }
  barrier();
  // The top k, heaviest first, ties to the lower index: an expert's slot is the number of
  // experts that go before it.
  for (uint e = tid; e < n; e += WG) {
    uint rank = 0;
    for (uint f = 0; f < n && rank < k; ++f) {
      if (p[f] > p[e] || (p[f] == p[e] && f < e)) ++rank;
    }
    if (rank < k) {
      chosen[rank] = e;
      w[rank] = p[e];
    }
  }
  barrier();
  if (tid == 0) {
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
  }
  barrier();
  for (uint e = tid; e < n; e += WG) {
    float v = 0.0;
    for (uint s = 0; s < k; ++s) {
      if (chosen[s] == e) v = w[s];
    }
    D_f[(out_row + e * out_step) >> 2] = v;
  }
}
