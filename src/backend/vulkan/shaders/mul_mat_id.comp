#version 450
// dst[m, s, t] = sum_k src0[k, m, e] * src1[k, s or 0, t], e the expert of token t's slot s
// (moe.glsl, from the gate src2 [n_expert, t]); 0 for a slot without an expert. src1 has one
// column per slot ([K, k, T], the down product) or one shared by all ([K, 1, T], gate and up).
// A workgroup takes 64 / T rows of one (slot, token), T invocations per row as mul_mat.comp's.
// Op words: 0 = T.
#include "common.glsl"
#include "types.glsl"
#include "moe.glsl"
layout(local_size_x = 64) in;
DEFINE_ELEM(A, TYPE)
DEFINE_QUAD(A, TYPE)
DEFINE_SLOTS(C, T_SRC2)

shared float partial[64];

void main() {
  const uint k_len = t_ne(T_SRC0, 0), rows = t_ne(T_SRC0, 1);
  const uint slots = t_ne(T_DST, 1), tokens = t_ne(T_DST, 2);
  const uint lanes = pu(0), rows_per_group = 64 / lanes;
  const uint row_groups = (rows + rows_per_group - 1) / rows_per_group;
  const uint g = group_index();
  if (g >= row_groups * slots * tokens) return;  // whole workgroups: barriers stay uniform
  const uint tid = gl_LocalInvocationID.x, lane = tid % lanes;
  const uint m = (g % row_groups) * rows_per_group + tid / lanes;
  const uint s = (g / row_groups) % slots, t = g / (row_groups * slots);
  find_slots(t, slots);
  const bool live = m < rows && s < slot_count(slots);
  float acc = 0.0;
  if (live) {
    const uint w = t_at(T_SRC0, m, uint(slot_expert[s]), 0), xs = t_nb(T_SRC1, 0);
    const uint x = t_at(T_SRC1, t_ne(T_SRC1, 1) == 1 ? 0 : s, t, 0);
    const uint quads = k_len / 4;
    for (uint q = lane; q < quads; q += lanes) {
      const uint xa = x + 4 * q * xs;
      acc += dot(A_quad(w, q), vec4(B_f[xa >> 2], B_f[(xa + xs) >> 2], B_f[(xa + 2 * xs) >> 2], B_f[(xa + 3 * xs) >> 2]));
    }
    for (uint k = quads * 4 + lane; k < k_len; k += lanes) acc += A_elem(w, k) * B_f[(x + k * xs) >> 2];
  }
  partial[tid] = acc;
  barrier();
  for (uint h = lanes / 2; h > 0; h >>= 1) {
    if (lane < h) partial[tid] += partial[tid + h];
    barrier();
  }
  if (lane == 0 && m < rows) D_f[(t_at(T_DST, s, t, 0) + m * t_nb(T_DST, 0)) >> 2] = partial[tid];
}
