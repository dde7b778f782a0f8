#version 450
// dst[m, j, b] = sum_k src0[k, m] * src1[k, j, b]. A workgroup takes 64 / T weight rows and a
// block of NC columns; the T invocations of a row (T: the row's 4-value quads rounded up to a
// power of two, at most 64; 1 on CPU devices) take consecutive quads in turn, so together they
// read consecutive bytes of the row and of each column. Each dequantizes its quad once and
// uses it for every column; the row's invocations then sum their partial dots.
// Op words: 0 = T.
#include "common.glsl"
#include "types.glsl"
layout(local_size_x = 64) in;
DEFINE_ELEM(A, TYPE)
DEFINE_QUAD(A, TYPE)

const uint NC = 8;
shared float partial[NC][64];

void main() {
  const uint k_len = t_ne(T_SRC0, 0), rows = t_ne(T_SRC0, 1);
  const uint cols = t_ne(T_SRC1, 1), batches = t_ne(T_SRC1, 2);
  const uint lanes = pu(0), rows_per_group = 64 / lanes;
  const uint row_groups = (rows + rows_per_group - 1) / rows_per_group;
  const uint col_blocks = (cols + NC - 1) / NC;
  const uint g = group_index();
  if (g >= row_groups * col_blocks * batches) return;
  const uint tid = gl_LocalInvocationID.x, lane = tid % lanes;
  const uint m = (g % row_groups) * rows_per_group + tid / lanes;
  const uint j0 = ((g / row_groups) % col_blocks) * NC, b = g / (row_groups * col_blocks);
  const uint nc = min(NC, cols - j0);
  const bool live = m < rows;  // rows past the end still take part in the barriers
  const uint w = t_at(T_SRC0, live ? m : 0, 0, 0), xs = t_nb(T_SRC1, 0);
  uint x[NC];
  float acc[NC];
  for (uint c = 0; c < NC; ++c) {
    x[c] = t_at(T_SRC1, j0 + min(c, nc - 1), b, 0);
    acc[c] = 0.0;
  }
  const uint quads = k_len / 4;
  for (uint q = lane; live && q < quads; q += lanes) {
    const vec4 v = A_quad(w, q);
    const uint k = 4 * q;
    for (uint c = 0; c < NC; ++c) {
      if (c >= nc) break;
      const uint xa = x[c] + k * xs;
      acc[c] += dot(v, vec4(B_f[xa >> 2], B_f[(xa + xs) >> 2], B_f[(xa + 2 * xs) >> 2], B_f[(xa + 3 * xs) >> 2]));
    }
  }
  for (uint k = quads * 4 + lane; live && k < k_len; k += lanes) {  // a float row's last values
    const float v = A_elem(w, k);
    for (uint c = 0; c < nc; ++c) acc[c] += v * B_f[(x[c] + k * xs) >> 2];
  }
  for (uint c = 0; c < NC; ++c) partial[c][tid] = acc[c];
  barrier();
  for (uint s = lanes / 2; s > 0; s >>= 1) {
    if (lane < s) {
      for (uint c = 0; c < NC; ++c) partial[c][tid] += partial[c][tid + s];
    }
    barrier();
  }
  for (uint c = lane; live && c < nc; c += lanes) {
    D_f[(t_at(T_DST, j0 + c, b, 0) + m * t_nb(T_DST, 0)) >> 2] = partial[c][tid - lane];
  }
}
