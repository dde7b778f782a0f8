// Scale searches shared by the K-quant and IQ4 quantizers: ggml's nearest_int, make_qx_quants,
// make_q3_quants, make_qkx2_quants and best_index_int8, reproduced operation for operation so
// paddock's quantized files are the ones llama-quantize writes. Internal to quant/.
// Invariants: x holds n finite values; L receives n levels.
//   float d = make_qx_quants(16, 32, x, L, nullptr);  // L in [0, 64), value ~ d * (L - 32)
#pragma once

#include <cstdint>

namespace paddock::quant_detail {

inline constexpr float kGroupMaxEps = 1e-15f;  // groups below this magnitude are all-zero

// Round to nearest (ties to even) for |f| <= 4194303 by the float-addition trick ggml uses.
int nearest_int(float f);

// Symmetric levels L = l + nmax, l in [-nmax, nmax); weights x^2 (ggml rmse_type 1) unless qw
// is given. Returns the scale: value ~ scale * (L - nmax).
float make_qx_quants(int n, int nmax, const float* x, int8_t* L, const float* qw);

// Q3_K's per-group search with an iterative refinement of single levels.
float make_q3_quants(int n, int nmax, const float* x, int8_t* L);

// Asymmetric levels L in [0, nmax] with a minimum: value ~ scale * L - *the_min. Tries nstep + 1
// scales from (nmax + rmin) to (nmax + rmin + nstep * rdelta), least squares for each.
float make_qkx2_quants(int n, int nmax, const float* x, const float* weights, uint8_t* L, float* the_min,
                       uint8_t* Laux, float rmin, float rdelta, int nstep, bool use_mad);

// Index of the level of the sorted table val (n a power of two) closest to x.
int best_index_int8(int n, const int8_t* val, float x);

// The 6-bit scale and min of group j (0..7) of Q4_K / Q5_K's packed 12-byte scales.
void get_scale_min_k4(int j, const uint8_t* q, uint8_t* d, uint8_t* m);

}  // namespace paddock::quant_detail
