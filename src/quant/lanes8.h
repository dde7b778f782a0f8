// ggml's AVX2 summation order for dot products over 32-element blocks, which the golden files
// were computed in (Debian llama.cpp's haswell build) and which gpt-oss's router turns from a
// last-bit difference into other experts: lane l of a block is the exact integer sum of the
// products of elements 4l..4l+3; each lane keeps its own float sum across blocks, one fused
// multiply-add per block (d * lane + sum); the 8 sums end in hsum_float_8's tree,
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)).
//   Lanes8 s;  for each block: s.fma(dx * dy, lanes);  *out = s.sum();
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace paddock {

struct Lanes8 {
  std::array<float, 8> acc{};

  void fma(float d, const std::array<int32_t, 8>& lane) {
    for (size_t l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lane[l]), acc[l]);
  }
  // Lane-wise: ggml's two-accumulator kernels (MXFP4) add theirs before the one horizontal sum.
  void add(const Lanes8& o) {
    for (size_t l = 0; l < 8; ++l) acc[l] += o.acc[l];
  }
  float sum() const {
    return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
  }
};

}  // namespace paddock
