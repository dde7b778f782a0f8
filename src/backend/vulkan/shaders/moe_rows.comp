#version 450
// Per-token ops over the slots of a mixture-of-experts layer (moe.glsl's slots), a
// workgroup per (block of 256 rows, token):
//   SUM:    dst[r, t] = sum over slots s of src0[r, s, t] * gate[expert(s), t], in slot
//           order (the gate is src1);
//   ADD_ID: dst[r, s, t] = src0[r, s, t] + src1[r, expert(s)] for slots with an expert, else
//           src0[r, s, t] (the gate is src2).
#include "common.glsl"
#include "moe.glsl"
layout(local_size_x = 256) in;
#if defined(SUM)
DEFINE_SLOTS(B, T_SRC1)
#else
DEFINE_SLOTS(C, T_SRC2)
#endif

void main() {
  const uint rows = t_ne(T_SRC0, 0), slots = t_ne(T_SRC0, 1), tokens = t_ne(T_SRC0, 2);
  const uint blocks = (rows + 255) / 256, g = group_index();
  if (g >= blocks * tokens) return;
  const uint t = g / blocks, r = (g % blocks) * 256 + gl_LocalInvocationID.x;
  find_slots(t, slots);
  if (r >= rows) return;
  const uint used = slot_count(slots);
#if defined(SUM)
  float acc = 0.0;
  for (uint s = 0; s < used; ++s) {
    const uint e = uint(slot_expert[s]);
    acc += A_f[(t_at(T_SRC0, s, t, 0) + r * t_nb(T_SRC0, 0)) >> 2] * B_f[(t_at(T_SRC1, t, 0, 0) + e * t_nb(T_SRC1, 0)) >> 2];
  }
  D_f[(t_at(T_DST, t, 0, 0) + r * t_nb(T_DST, 0)) >> 2] = acc;
#else
  for (uint s = 0; s < slots; ++s) {
    float v = A_f[(t_at(T_SRC0, s, t, 0) + r * t_nb(T_SRC0, 0)) >> 2];
    if (s < used) v += B_f[(t_at(T_SRC1, uint(slot_expert[s]), 0, 0) + r * t_nb(T_SRC1, 0)) >> 2];
    D_f[(t_at(T_DST, s, t, 0) + r * t_nb(T_DST, 0)) >> 2] = v;
  }
#endif
}
