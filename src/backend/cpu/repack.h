// Weight layouts the CPU backend's SIMD matmul kernels prefer: eight rows of a quantized matrix
// interleaved block by block, so one 32-byte load holds 4 quants of each of 8 rows. A kernel
// then broadcasts 4 activation bytes to all 8 rows at once and ends with 8 row sums in one
// register: no horizontal sums, no per-row scale unpacking (scales are pre-arranged for SIMD),
// and int16 partial sums that stay exact for a whole sub-block. Each interleaved block is
// exactly 8 original blocks in size, so a repacked matrix takes as much memory as the file's.
// Invariants: rows = 8 * groups; the repacked bytes hold the same values (same quants, same
// fp16 scales), so results equal vec_dot's up to float summation order.
//   std::vector<uint8_t> buf(repacked_bytes(t, k, m));
//   repack_rows(t, w.data, k, m, buf.data());   // m % kRepackRows == 0
#pragma once

#include <cstddef>
#include <cstdint>

#include "quant/blocks.h"
#include "tensor/dtype.h"

namespace paddock::cpu {

inline constexpr int kRepackRows = 8;

// Q4_K x 8 rows. Scales and mins (6 bits) are stored as two planes so AVX2 unpacks all 128 at
// once: value v's low 4 bits are the low nibble of lo4[v] (v < 64) or the high nibble of
// lo4[v - 64]; its top 2 bits are bits 2*(v/32)..+1 of hi2[v % 32]. Value order: scales
// v = 32*(g/4) + 16*(r/4) + 4*(r%4) + g%4 and mins v = 64 + the same, for group g of row r:
// each 32-value run keeps row r's values in the 128-bit half r/4, where in-lane shuffles
// reach them.
// qs: for chunk c (elements 64c..64c+63 of each row), step s (0..7), row r: 4 bytes at
// qs[32*(8c+s) + 4r] = row r's qs[32c + 4s .. +3] (low nibbles: elements 64c+4s..+3, high
// nibbles: elements 64c+32+4s..+3).
struct BlockQ4_Kx8 {
  uint16_t d[kRepackRows];
  uint16_t dmin[kRepackRows];
  uint8_t lo4[64];
  uint8_t hi2[32];
  uint8_t qs[kRepackRows * kQK_K / 2];
};
static_assert(sizeof(BlockQ4_Kx8) == kRepackRows * sizeof(BlockQ4_K));

// Q5_K x 8 rows: Q4_K x 8's fields, and each row's fifth bits laid out as its quants: for step
// s (0..7), qh[32*s + 4r .. +3] = row r's qh[4s .. 4s+3], whose bit 2c is the fifth bit of
// the low nibble at the same place of chunk c's step s, and bit 2c + 1 of the high one.
struct BlockQ5_Kx8 {
  uint16_t d[kRepackRows];
  uint16_t dmin[kRepackRows];
  uint8_t lo4[64];
  uint8_t hi2[32];
  uint8_t qh[kRepackRows * kQK_K / 8];
  uint8_t qs[kRepackRows * kQK_K / 2];
};
static_assert(sizeof(BlockQ5_Kx8) == kRepackRows * sizeof(BlockQ5_K));

// Q2_K and Q3_K x 8 rows, by group g of 16 elements (four steps t of 4): qs[32g + 4r + b]
// holds in bits 2t..2t+1 the low 2 bits of element 16g + 4t + b of row r. Q3_K's third bits
// by pairs of groups: bit t + 4u of hm[32p + 4r + b] is that of element 4t + b of group
// 2p + u; its 16 six-bit scales of each row in the planes Q4_K's scales and mins take (lo4,
// hi2), value v = 16p + 2r + u for group 2p + u of row r. Q2_K's scale bytes (scale | min << 4)
// at sc[16p + 2r + u].
struct BlockQ2_Kx8 {
  uint16_t d[kRepackRows];
  uint16_t dmin[kRepackRows];
  uint8_t sc[kRepackRows * kQK_K / 16];
  uint8_t qs[kRepackRows * kQK_K / 4];
};
static_assert(sizeof(BlockQ2_Kx8) == kRepackRows * sizeof(BlockQ2_K));

struct BlockQ3_Kx8 {
  uint16_t d[kRepackRows];
  uint8_t lo4[64];
  uint8_t hi2[32];
  uint8_t hm[kRepackRows * kQK_K / 8];
  uint8_t qs[kRepackRows * kQK_K / 4];
};
static_assert(sizeof(BlockQ3_Kx8) == kRepackRows * sizeof(BlockQ3_K));

// Q6_K x 8 rows. scales[16*p + 2*r + (g & 1)] = row r's scale of group g (16 elements),
// p = g/2. Quants of group g (steps 4g..4g+3 of 4 elements each): 96 bytes at q[96*g]: two
// nibble registers (step 4g+2i in the low nibbles of q[96g + 32i + 4r + b], step 4g+2i+1 in the
// high ones) and one register of top bits (step 4g+t in bits 2t..2t+1 of q[96g + 64 + 4r + b]).
// Element 4s + b of row r is step s, byte b. Quants stay 0..63 (value = d * scale * (q - 32)).
struct BlockQ6_Kx8 {
  uint16_t d[kRepackRows];
  int8_t scales[kRepackRows * kQK_K / 16];
  uint8_t q[kRepackRows * (kQK_K / 2 + kQK_K / 4)];
};
static_assert(sizeof(BlockQ6_Kx8) == kRepackRows * sizeof(BlockQ6_K));

// Q8_0 x 8 rows: qs[32*s + 4*r + b] = row r's qs[4s + b].
struct BlockQ8_0x8 {
  uint16_t d[kRepackRows];
  int8_t qs[kRepackRows * kQK8_0];
};
static_assert(sizeof(BlockQ8_0x8) == kRepackRows * sizeof(BlockQ8_0));

// Q4_0 x 8 rows, as Q8_0 with 16 bytes a row: qs[32*s + 4*r + b] = row r's qs[4s + b], so step
// s holds elements 4s..4s+3 of each row in its low nibbles and 16+4s..16+4s+3 in its high ones.
struct BlockQ4_0x8 {
  uint16_t d[kRepackRows];
  uint8_t qs[kRepackRows * kQK4_0 / 2];
};
static_assert(sizeof(BlockQ4_0x8) == kRepackRows * sizeof(BlockQ4_0));

// Q5_0 x 8 rows: the nibbles as in BlockQ4_0x8, and row r's 32 fifth bits (its qh, bit j for
// element j) at qh[4r..4r+3], so a register of them holds row r's in lane r as the quants do.
struct BlockQ5_0x8 {
  uint16_t d[kRepackRows];
  uint8_t qh[kRepackRows * 4];
  uint8_t qs[kRepackRows * kQK5_0 / 2];
};
static_assert(sizeof(BlockQ5_0x8) == kRepackRows * sizeof(BlockQ5_0));

// Q4_1 and Q5_1 x 8 rows: as Q4_0 and Q5_0, with each row's fp16 min in m[r].
struct BlockQ4_1x8 {
  uint16_t d[kRepackRows];
  uint16_t m[kRepackRows];
  uint8_t qs[kRepackRows * kQK4_1 / 2];
};
static_assert(sizeof(BlockQ4_1x8) == kRepackRows * sizeof(BlockQ4_1));

struct BlockQ5_1x8 {
  uint16_t d[kRepackRows];
  uint16_t m[kRepackRows];
  uint8_t qh[kRepackRows * 4];
  uint8_t qs[kRepackRows * kQK5_1 / 2];
};
static_assert(sizeof(BlockQ5_1x8) == kRepackRows * sizeof(BlockQ5_1));

// MXFP4 x 8 rows: the nibbles as in BlockQ4_0x8, each row's E8M0 exponent in e[r].
struct BlockMXFP4x8 {
  uint8_t e[kRepackRows];
  uint8_t qs[kRepackRows * kQKMXFP4 / 2];
};
static_assert(sizeof(BlockMXFP4x8) == kRepackRows * sizeof(BlockMXFP4));

// Whether `t` has an interleaved layout (Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_0,
// MXFP4).
bool can_repack(DType t);
// Bytes of the repacked [k, m] matrix: the same as the original's.
size_t repacked_bytes(DType t, int64_t k, int64_t m);
// src: m contiguous rows of k elements of type t; dst: repacked_bytes(t, k, m) bytes.
// Rows [r0, r1) of groups only (r0, r1 multiples of kRepackRows), so threads can split it.
void repack_rows(DType t, const void* src, int64_t k, int64_t r0, int64_t r1, void* dst);

}  // namespace paddock::cpu
