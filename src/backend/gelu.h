// GELU as llama.cpp computes it on the CPU, so GEGLU models (gemma) match its numbers: the
// tanh approximation, read from a table of half-precision inputs and outputs (ggml's
// GGML_GELU_FP16), with x <= -10 giving 0 and x >= 10 giving x. Every backend's kernel
// follows this definition.
//   const float y = gelu_ggml(x) * up;
#pragma once

#include <cmath>
#include <cstdint>

#include "base/fp16.h"

namespace paddock {

// The tanh approximation in float, as ggml's table is built from it.
inline float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoefA = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoefA * x * x)));
}

// An entry of ggml's table: the GELU of a half-precision input, rounded to half precision.
inline float gelu_of_f16(uint16_t h) { return fp16_to_f32(f32_to_fp16(gelu_tanh(fp16_to_f32(h)))); }

inline float gelu_ggml(float x) {
  if (x <= -10.0f) return 0.0f;
  if (x >= 10.0f) return x;
  return gelu_of_f16(f32_to_fp16(x));
}

}  // namespace paddock
