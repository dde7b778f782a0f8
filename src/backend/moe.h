// Mixture-of-experts routing shared by every host backend: the router's weights per token
// (kMoeGate) and which expert each of a token's k slots holds (kMulMatId, kMoeSum). The
// gate is a dense [n_expert] column with 0 for experts not chosen, so the chosen set travels
// as an ordinary F32 tensor between nodes and devices.
//   float gate[8];  moe_gate_column(logits, 8, {.k = 2, .norm = true}, gate);
//   int32_t experts[2];  const int n = moe_slots(gate, 8, 2, experts);
#pragma once

#include <cstdint>

#include "backend/backend.h"

namespace paddock {

// Bounds the routing's stack buffers: 4x the most experts a released model has (DeepSeek's 256).
inline constexpr int64_t kMaxExperts = 1024;
inline constexpr int32_t kMaxExpertsPerToken = 64;

// The router weights of one token as llama.cpp's build_moe_ffn computes them: softmax (sum in
// double, then scaled by its float reciprocal), top k by weight with ties to the lower
// index, and for `norm` the chosen weights divided by their sum (at least 2^-14).
void moe_gate_column(const float* logits, int64_t n_expert, const MoeParams& p, float* gate);

// The experts of a token's slots: those with a nonzero gate weight, heaviest first, ties to
// the lower index, at most k. Returns how many (k unless weights underflowed to 0).
int moe_slots(const float* gate, int64_t n_expert, int32_t k, int32_t* experts);

// Expert e's matrix [K, M] of a stack of experts [K, M, n_expert].
TensorView expert_matrix(const TensorView& experts, int64_t e);

}  // namespace paddock
