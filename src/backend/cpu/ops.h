// The CPU backend's op kernels, one free function per op (contracts in backend/backend.h),
// each splitting its work over the pool. CpuBackend (cpu_backend.cpp) only forwards to them.
//   cpu::rms_norm(pool, x, 1e-5f, dst);
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/isa.h"
#include "base/threadpool.h"

namespace paddock::cpu {

// Reused across calls so decode does not allocate per op.
struct Scratch {
  std::vector<uint8_t> activations;
  std::vector<float> dequantized_rows;  // one weight row per thread (dequantize-only types)
  std::vector<int32_t> moe_experts;     // mul_mat_id: each token's experts
  std::vector<float> moe_in, moe_out;   // mul_mat_id: one expert's columns
};

bool can_mul_mat(DType t);
bool can_read_rows(DType t);

// packed: w's interleaved copy (repacked_weights.h) or nullptr.
void mul_mat(ThreadPool& pool, CpuIsa isa, Scratch& scratch, const TensorView& w, const uint8_t* packed,
             const TensorView& x, const TensorView& dst);
// One of several products of mul_mat_grouped: w [K, M] (its interleaved copy or nullptr) times
// columns [first, first + n) of the shared x.
struct MatGroup {
  TensorView w;
  const uint8_t* packed = nullptr;
  int64_t first = 0;
  int64_t n = 0;
};
// Several products of matrices of one type and shape in one pass over the pool (the chosen
// experts of a step): x [K, ncols] and dst [M, ncols], both with contiguous columns.
void mul_mat_grouped(ThreadPool& pool, CpuIsa isa, Scratch& scratch, std::span<const MatGroup> groups,
                     const TensorView& x, const TensorView& dst);
// The interleaved copy of a weight (an expert's matrix) or nullptr.
using PackedFn = std::function<const uint8_t*(const TensorView&)>;
void mul_mat_id(ThreadPool& pool, CpuIsa isa, Scratch& scratch, const TensorView& w, const PackedFn& packed,
                const TensorView& x, const TensorView& gate, const TensorView& dst);
void moe_gate(ThreadPool& pool, const TensorView& logits, const MoeParams& p, const TensorView& dst);
void moe_sum(ThreadPool& pool, const TensorView& experts_out, const TensorView& gate, const TensorView& dst);
void add_id(ThreadPool& pool, const TensorView& x, const TensorView& bias, const TensorView& gate,
            const TensorView& dst);
void get_rows(ThreadPool& pool, const TensorView& table, std::span<const int32_t> ids, const TensorView& dst);
void rms_norm(ThreadPool& pool, const TensorView& x, float eps, const TensorView& dst);
void mul(ThreadPool& pool, const TensorView& a, const TensorView& b, const TensorView& dst);
void add(ThreadPool& pool, const TensorView& a, const TensorView& b, const TensorView& dst);
void rope(ThreadPool& pool, const TensorView& x, std::span<const int32_t> pos, const RopeParams& p,
          const TensorView& dst);
void swiglu_oai(ThreadPool& pool, CpuIsa isa, const TensorView& gate, const TensorView& up, float alpha,
                float limit, const TensorView& dst);
void swiglu(ThreadPool& pool, CpuIsa isa, const TensorView& gate, const TensorView& up,
            const TensorView& dst);
void geglu(ThreadPool& pool, const TensorView& gate, const TensorView& up, const TensorView& dst);
void scale(ThreadPool& pool, const TensorView& x, float s, const TensorView& dst);
void norm(ThreadPool& pool, const TensorView& x, float eps, const TensorView& dst);
void gelu(ThreadPool& pool, const TensorView& x, const TensorView& dst);
void tanh(ThreadPool& pool, const TensorView& x, const TensorView& dst);
// sinks: n_head floats, or nullptr.
void attention(ThreadPool& pool, CpuIsa isa, const TensorView& q, const TensorView& k, const TensorView& v,
               std::span<const int32_t> pos, const AttnParams& p, const float* sinks, const TensorView& dst);
void copy(ThreadPool& pool, CpuIsa isa, const TensorView& src, const TensorView& dst);

}  // namespace paddock::cpu
