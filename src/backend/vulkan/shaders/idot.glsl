// Integer dot products (SPV_KHR_integer_dot_product's OpSDot) for the kernels' INT_DOT
// variants. Through GL_EXT_spirv_intrinsics: Debian 12's glslang predates
// GL_EXT_integer_dot_product.
#extension GL_EXT_spirv_intrinsics : require

spirv_instruction(extensions = ["SPV_KHR_integer_dot_product"], capabilities = [6019, 6018], id = 4450)
int sdot4_packed(int a, int b, spirv_literal int packed_4x8);
// The dot of two words' four signed bytes.
int sdot4(uint a, uint b) { return sdot4_packed(int(a), int(b), 0); }

// Each byte of levels 0..2k - 1 less k, as signed bytes (no borrow crosses a byte): Q6_K's
// (k = 32), Q3_K's (4).
uint less_bytes(uint q, uint k) { return ((q | 0x80808080u) - k * 0x01010101u) ^ 0x80808080u; }

// Levels that index a table of integers (IQ4_NL's, MXFP4's doubled E2M1 values): four
// nibbles (bits 0..3 of each byte of w) as the signed bytes they index.
#if defined(TYPE_MXFP4)
#define INT_LEVELS MXFP4_LEVELS
#elif defined(TYPE_IQ4_NL) || defined(TYPE_IQ4_XS)
#define INT_LEVELS IQ4_NL_LEVELS
#endif
#ifdef INT_LEVELS
uint level_bytes(uint w) {
  uint packed = 0;
  [[unroll]] for (uint b = 0; b < 4; ++b) packed |= (uint(int(INT_LEVELS[(w >> (8 * b)) & 15])) & 255u) << (8 * b);
  return packed;
}
#endif

// Quantized activations (quantize_q8.glsl) in the scratch binding: per column k / 4 words of
// levels (value v in byte v % 4 of word v / 4), then per 32 values their scale d and d x (sum
// of levels), from xq_column's word.
layout(std430, binding = 6) readonly buffer XQU { uint XQ_u[]; };
layout(std430, binding = 6) readonly buffer XQF { float XQ_f[]; };
