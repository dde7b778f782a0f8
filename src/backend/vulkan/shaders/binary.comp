#version 450
// dst = src0 OP src1, src1 repeated along each dim where it is smaller; one invocation per
// element. OP is a build-time define: ADD or MUL. dst may be src0 (in place).
#include "common.glsl"
layout(local_size_x = 256) in;

void main() {
  const uint n0 = t_ne(T_DST, 0), n1 = t_ne(T_DST, 1), n2 = t_ne(T_DST, 2);
  const uint e = group_index() * 256 + gl_LocalInvocationID.x;
  if (e >= n0 * n1 * n2 * t_ne(T_DST, 3)) return;
  const uint i0 = e % n0, i1 = (e / n0) % n1, i2 = (e / (n0 * n1)) % n2, i3 = e / (n0 * n1 * n2);
  const float a = A_f[(t_at(T_SRC0, i1, i2, i3) + i0 * t_nb(T_SRC0, 0)) >> 2];
  const uint b_at = t_at(T_SRC1, i1 % t_ne(T_SRC1, 1), i2 % t_ne(T_SRC1, 2), i3 % t_ne(T_SRC1, 3)) +
                    (i0 % t_ne(T_SRC1, 0)) * t_nb(T_SRC1, 0);
  const float b = B_f[b_at >> 2];
#if defined(OP_ADD)
  const float v = a + b;
#else
  const float v = a * b;
#endif
  D_f[(t_at(T_DST, i1, i2, i3) + i0 * t_nb(T_DST, 0)) >> 2] = v;
}
