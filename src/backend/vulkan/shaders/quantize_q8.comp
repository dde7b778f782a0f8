#version 450
// A product's activations quantized for its integer dot products (quantize_q8.glsl): src0
// (F32, dense rows of k values), into its scratch columns (xq_column). One invocation per
// 32 values.
#include "common.glsl"

const uint WG = 64;
layout(local_size_x = WG) in;
uint x;
float q8_source(uint i) { return A_f[x + i]; }
#include "quantize_q8.glsl"

void main() {
  const uint k = t_ne(T_SRC0, 0), cols = t_ne(T_SRC0, 1), per = k / 32;
  const uint i = group_index() * WG + gl_LocalInvocationID.x;
  const bool live = i < per * cols * t_ne(T_SRC0, 2);
  const uint blk = i % per, c = i / per;
  x = live ? (t_at(T_SRC0, c % cols, c / cols, 0) >> 2) : 0;
  quantize_block(live, blk, k, xq_column(c, k));
}
