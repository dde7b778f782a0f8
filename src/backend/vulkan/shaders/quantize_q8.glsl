// Activations for the integer dot products (mat_vec_idot.glsl, mm_idot.glsl): each column of
// k values as signed bytes with a scale d per 32 values and d x the 32 levels' sum, k / 4 +
// k / 16 words a column (idot.glsl's layout). Rounded as ggml's CPU (its x86 from_float,
// which the golden files went through) quantizes activations for the weight type, so GPU and
// CPU products agree:
// - block_q8_0 (Q4_0, Q5_0, Q8_0 weights): per 32 values, levels x * 127 / max|x| rounded
//   half to even, d = max|x| / 127 kept in half precision, the sum times that d;
// - with Q8_1, block_q8_1 (Q4_1, Q5_1): the same, the sum times the exact d rounded to half
//   precision;
// - with QK_K, block_q8_K (K-quants; k a multiple of 256): per 256 values, d = -m / 127 for
//   the value m of largest magnitude (the first such), levels rounded half to even and at
//   most 127, d in F32 (every 32 of the 256 carry the same d).
// The includer defines WG (its workgroup size, a multiple of 8) and q8_source(i), value i of
// the column being quantized.
layout(std430, binding = 6) writeonly buffer ScratchU { uint S_u[]; };
layout(std430, binding = 6) writeonly buffer ScratchF { float S_f[]; };
#ifdef QK_K
shared float part_amax[WG], part_max[WG];
#endif
float q8_source(uint i);

// Values 32 blk .. 32 blk + 31 of a column of k values, into its words from scratch word
// `at`. Every invocation of the workgroup calls it at once (with QK_K, eight adjacent ones
// share a 256-value block through a barrier); `live` says which have a block.
void quantize_block(bool live, uint blk, uint k, uint at) {
  const uint tid = gl_LocalInvocationID.x;
  float amax = 0.0, max_value = 0.0;
  if (live) {
    [[unroll]] for (uint r = 0; r < 32; ++r) {
      const float v = q8_source(32 * blk + r);
      if (abs(v) > amax) {
        amax = abs(v);
        max_value = v;
      }
    }
  }
#ifdef QK_K
  barrier();  // the previous block's readers are done with part_amax[]
  part_amax[tid] = amax;
  part_max[tid] = max_value;
  barrier();
  amax = 0.0;
  max_value = 0.0;
  for (uint s = tid & ~7u; s < (tid & ~7u) + 8; ++s) {
    if (part_amax[s] > amax) {
      amax = part_amax[s];
      max_value = part_max[s];
    }
  }
  const float inv = amax == 0.0 ? 0.0 : -127.0 / max_value, d = amax == 0.0 ? 0.0 : 1.0 / inv;
#else
  const float exact = amax / 127.0, inv = amax == 0.0 ? 0.0 : 127.0 / amax, d = f16_at(to_f16(exact));
#endif
  if (!live) return;
  int sum = 0;
  [[unroll]] for (uint w = 0; w < 8; ++w) {
    uint word = 0;
    [[unroll]] for (uint b = 0; b < 4; ++b) {
      const int q = min(127, int(roundEven(q8_source(32 * blk + 4 * w + b) * inv)));
      sum += q;
      word |= (uint(q) & 0xFFu) << (8 * b);
    }
    S_u[at + 8 * blk + w] = word;
  }
  S_f[at + k / 4 + 2 * blk] = d;
#ifdef Q8_1
  S_f[at + k / 4 + 2 * blk + 1] = f16_at(to_f16(exact * float(sum)));
#else
  S_f[at + k / 4 + 2 * blk + 1] = d * float(sum);
#endif
}
