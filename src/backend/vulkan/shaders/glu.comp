#version 450
// dst = act(src0) * src1, one invocation per element: act = silu, or with GELU ggml's GELU;
// with OAI gpt-oss's clamped form (op words 0 = alpha, 1 = limit):
// min(g, limit) * sigmoid(alpha * min(g, limit)) * (clamp(u, -limit, limit) + 1).
#include "common.glsl"
layout(local_size_x = 256) in;

#include "glu.glsl"

void main() {
  const uint n0 = t_ne(T_DST, 0), n1 = t_ne(T_DST, 1), n2 = t_ne(T_DST, 2);
  const uint e = group_index() * 256 + gl_LocalInvocationID.x;
  if (e >= n0 * n1 * n2 * t_ne(T_DST, 3)) return;
  const uint i0 = e % n0, i1 = (e / n0) % n1, i2 = (e / (n0 * n1)) % n2, i3 = e / (n0 * n1 * n2);
  const float g = A_f[(t_at(T_SRC0, i1, i2, i3) + i0 * t_nb(T_SRC0, 0)) >> 2];
  const float u = B_f[(t_at(T_SRC1, i1, i2, i3) + i0 * t_nb(T_SRC1, 0)) >> 2];
  D_f[(t_at(T_DST, i1, i2, i3) + i0 * t_nb(T_DST, 0)) >> 2] = glu(g, u);
}
