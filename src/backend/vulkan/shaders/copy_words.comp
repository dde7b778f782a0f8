#version 450
// dst = src0 for two contiguous tensors of one type whose bytes (count and offsets) are whole
// 32-bit words: adjacent invocations copy adjacent words, 16 bytes at a time where both
// tensors and the count allow, striding by the whole grid (a few thousand workgroups, so a
// CPU device is not swamped by a million), with no index arithmetic (copy.comp's divisions
// per element bound a 1 GiB copy by ALU, not memory). What `paddock bench` times to measure
// a GPU's bandwidth. Op word 0: the word count.
#include "common.glsl"
layout(local_size_x = 256) in;
layout(std430, binding = 1) writeonly buffer DV { uvec4 D_v4[]; };
layout(std430, binding = 2) readonly buffer AV { uvec4 A_v4[]; };

void main() {
  const uint words = pu(0), src = t_off(T_SRC0), dst = t_off(T_DST);
  const uint stride = gl_NumWorkGroups.x * gl_NumWorkGroups.y * 256;
  const uint first = group_index() * 256 + gl_LocalInvocationID.x;
  if (((src | dst | words * 4) & 15) == 0) {
    for (uint i = first; i < words / 4; i += stride) D_v4[(dst >> 4) + i] = A_v4[(src >> 4) + i];
  } else {
    for (uint i = first; i < words; i += stride) D_u[(dst >> 2) + i] = A_u[(src >> 2) + i];
  }
}
