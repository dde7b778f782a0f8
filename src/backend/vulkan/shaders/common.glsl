// What every kernel shares: the node's parameter block and its tensors' bindings.
// The pass writes one block of 32-bit words per node into binding 0 and the push constant
// says where it starts. Words 0..44 describe five tensors (0 = dst, 1..4 = src0..src3), nine
// words each: the byte offset of element 0 in its binding, ne[4], nb[4] (bytes). Words from
// 45 on are the op's own (pu/pf); ids and tables lie further on, at a word offset the op's
// words give. Tensors are bound at bindings 1..5 as raw bytes, seen as floats, 32-, 16- and
// 8-bit words through aliases of one binding.
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_control_flow_attributes : require

layout(push_constant) uniform Push { uint base; } pc;
layout(std430, binding = 0) readonly buffer ParamWords { uint P[]; };

#define TENSOR_BINDING(b, name) \
  layout(std430, binding = b) buffer name##F { float name##_f[]; }; \
  layout(std430, binding = b) buffer name##U { uint name##_u[]; }; \
  layout(std430, binding = b) buffer name##H { uint16_t name##_h[]; }; \
  layout(std430, binding = b) buffer name##B { uint8_t name##_b[]; };

TENSOR_BINDING(1, D)
TENSOR_BINDING(2, A)
TENSOR_BINDING(3, B)
TENSOR_BINDING(4, C)
TENSOR_BINDING(5, E)

const uint T_DST = 0, T_SRC0 = 1, T_SRC1 = 2, T_SRC2 = 3, T_SRC3 = 4;

uint t_off(uint t) { return P[pc.base + 9 * t]; }
uint t_ne(uint t, uint d) { return P[pc.base + 9 * t + 1 + d]; }
uint t_nb(uint t, uint d) { return P[pc.base + 9 * t + 5 + d]; }
uint t_at(uint t, uint i1, uint i2, uint i3) {
  return t_off(t) + i1 * t_nb(t, 1) + i2 * t_nb(t, 2) + i3 * t_nb(t, 3);
}
uint pu(uint i) { return P[pc.base + 45 + i]; }
float pf(uint i) { return uintBitsToFloat(P[pc.base + 45 + i]); }
// Word i of the node's table that starts `at` words after its block.
uint pw(uint at, uint i) { return P[pc.base + at + i]; }

// Columns of quantized activations (quantize_q8.glsl, idot.glsl) lie in the scratch binding
// from the word in op word OP_XQ, k / 4 + k / 16 words a column of k values.
const uint OP_XQ = 1;
uint xq_column(uint c, uint k) { return pu(OP_XQ) + c * (k / 4 + k / 16); }

// Workgroups are dispatched as a 2-D grid (one dimension's count is limited to 65535):
// this is the group's linear index.
uint group_index() { return gl_WorkGroupID.x + gl_NumWorkGroups.x * gl_WorkGroupID.y; }

float f16_at(uint16_t h) { return unpackHalf2x16(uint(h)).x; }
float bf16_at(uint16_t h) { return uintBitsToFloat(uint(h) << 16); }

// To half precision, nearest even (packHalf2x16's rounding is the driver's choice).
uint16_t to_f16(float v) {
  const uint x = floatBitsToUint(v), sign = (x >> 16) & 0x8000u, ax = x & 0x7FFFFFFFu;
  if (ax >= 0x7F800000u) return uint16_t(sign | 0x7C00u | (ax > 0x7F800000u ? 0x200u : 0u));
  if (ax >= 0x477FF000u) return uint16_t(sign | 0x7C00u);                   // rounds past 65504
  if (ax < 0x38800000u) return uint16_t(sign | uint(roundEven(uintBitsToFloat(ax) * 16777216.0)));
  const uint m = ax - 0x38000000u;  // exponent rebased from 127 to 15
  return uint16_t(sign | ((m + 0x0FFFu + ((m >> 13) & 1u)) >> 13));
}

// ggml's GELU (backend/gelu.h): the tanh approximation of a half-precision input, rounded to
// half precision; 0 below -10 and x above 10.
float gelu_ggml(float g) {
  if (g <= -10.0) return 0.0;
  if (g >= 10.0) return g;
  const float x = f16_at(to_f16(g));
  return f16_at(to_f16(0.5 * x * (1.0 + tanh(0.79788456080286535587989211986876 * x * (1.0 + 0.044715 * x * x)))));
}
