#version 450
// dst[i0, r] = src0[i0, ids[r]] as F32; one invocation per output element.
// Op words: 0 = the ids' word offset.
#include "common.glsl"
#include "types.glsl"
layout(local_size_x = 256) in;
DEFINE_ELEM(A, TYPE)

void main() {
  const uint n = t_ne(T_DST, 0), rows = t_ne(T_DST, 1);
  const uint e = group_index() * 256 + gl_LocalInvocationID.x;
  if (e >= n * rows) return;
  const uint i0 = e % n, r = e / n;
  const uint src_row = pw(pu(0), r);
  D_f[(t_at(T_DST, r, 0, 0) + i0 * t_nb(T_DST, 0)) >> 2] = A_elem(t_at(T_SRC0, src_row, 0, 0), i0);
}
