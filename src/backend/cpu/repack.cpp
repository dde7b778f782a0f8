#include "backend/cpu/repack.h"

#include <cstring>

#include "backend/cpu/simd_x86.h"
#include "base/check.h"

namespace paddock::cpu {

namespace {

constexpr int kR = kRepackRows;

// 128 six-bit values into the two planes of BlockQ4_Kx8 (see repack.h).
void pack_six_bit_planes(const uint8_t (&v)[128], uint8_t* lo4, uint8_t* hi2) {
  std::memset(hi2, 0, 32);
  for (int i = 0; i < 64; ++i) lo4[i] = static_cast<uint8_t>((v[i] & 0x0F) | ((v[64 + i] & 0x0F) << 4));
  for (int i = 0; i < 128; ++i) hi2[i % 32] |= static_cast<uint8_t>((v[i] >> 4) << (2 * (i / 32)));
}

void repack_q4_K(const BlockQ4_K* const (&rows)[kR], int64_t i, BlockQ4_Kx8& out) {
  uint8_t six[128];
  for (int r = 0; r < kR; ++r) {
    const BlockQ4_K& b = rows[r][i];
    out.d[r] = b.d;
    out.dmin[r] = b.dmin;
    uint8_t sc[8], mn[8];
    detail::unpack_scales_k4(b.scales, sc, mn);
    for (int g = 0; g < 8; ++g) {
      const int v = 16 * (g / 2) + 2 * r + (g & 1);
      six[v] = sc[g];
      six[64 + v] = mn[g];
    }
    for (int c = 0; c < 4; ++c) {
      for (int s = 0; s < 8; ++s) std::memcpy(&out.qs[32 * (8 * c + s) + 4 * r], &b.qs[32 * c + 4 * s], 4);
    }
  }
  pack_six_bit_planes(six, out.lo4, out.hi2);
}

// Row r's 6-bit quant of element e (0..255), in ggml's Q6_K layout.
uint8_t q6_K_quant(const BlockQ6_K& b, int e) {
  const int h = e / 128;  // half
  const int k = (e % 128) / 32;
  const int l = e % 32;
  const uint8_t ql = b.ql[64 * h + l + 32 * (k & 1)];
  const uint8_t low = (k < 2) ? (ql & 0x0F) : (ql >> 4);
  const uint8_t high = (b.qh[32 * h + l] >> (2 * k)) & 3;
  return static_cast<uint8_t>(low | (high << 4));
}

void repack_q6_K(const BlockQ6_K* const (&rows)[kR], int64_t i, BlockQ6_Kx8& out) {
  std::memset(out.q, 0, sizeof(out.q));
  for (int r = 0; r < kR; ++r) {
    const BlockQ6_K& b = rows[r][i];
    out.d[r] = b.d;
    for (int g = 0; g < 16; ++g) out.scales[16 * (g / 2) + 2 * r + (g & 1)] = b.scales[g];
    for (int e = 0; e < kQK_K; ++e) {
      const uint8_t q = q6_K_quant(b, e);
      const int step = e / 4;
      const int byte = 4 * r + e % 4;
      const int g = step / 4;
      const int t = step % 4;  // step within the group
      uint8_t* base = out.q + 96 * g;
      base[32 * (t / 2) + byte] |= static_cast<uint8_t>((q & 0x0F) << (4 * (t & 1)));
      base[64 + byte] |= static_cast<uint8_t>((q >> 4) << (2 * t));
    }
  }
}

void repack_q8_0(const BlockQ8_0* const (&rows)[kR], int64_t i, BlockQ8_0x8& out) {
  for (int r = 0; r < kR; ++r) {
    const BlockQ8_0& b = rows[r][i];
    out.d[r] = b.d;
    for (int s = 0; s < 8; ++s) std::memcpy(&out.qs[32 * s + 4 * r], &b.qs[4 * s], 4);
  }
}

template <typename Block, int QK, typename Block8, void (*Repack)(const Block* const (&)[kR], int64_t, Block8&)>
void repack_groups(const void* src, int64_t k, int64_t r0, int64_t r1, void* dst) {
  const int64_t nb = k / QK;
  const auto* in = static_cast<const Block*>(src);
  auto* out = static_cast<Block8*>(dst);
  for (int64_t g = r0 / kR; g < r1 / kR; ++g) {
    const Block* rows[kR];
    for (int r = 0; r < kR; ++r) rows[r] = in + (g * kR + r) * nb;
    for (int64_t i = 0; i < nb; ++i) Repack(rows, i, out[g * nb + i]);
  }
}

}  // namespace

bool can_repack(DType t) { return t == DType::kQ4_K || t == DType::kQ6_K || t == DType::kQ8_0; }

size_t repacked_bytes(DType t, int64_t k, int64_t m) {
  return dtype_row_bytes(t, k) * static_cast<size_t>(m);
}

void repack_rows(DType t, const void* src, int64_t k, int64_t r0, int64_t r1, void* dst) {
  PADDOCK_CHECK(r0 % kR == 0 && r1 % kR == 0 && r0 <= r1);
  switch (t) {
    case DType::kQ4_K: return repack_groups<BlockQ4_K, kQK_K, BlockQ4_Kx8, repack_q4_K>(src, k, r0, r1, dst);
    case DType::kQ6_K: return repack_groups<BlockQ6_K, kQK_K, BlockQ6_Kx8, repack_q6_K>(src, k, r0, r1, dst);
    case DType::kQ8_0: return repack_groups<BlockQ8_0, kQK8_0, BlockQ8_0x8, repack_q8_0>(src, k, r0, r1, dst);
    default: PADDOCK_CHECK(false && "repack_rows: type has no interleaved layout");
  }
}

}  // namespace paddock::cpu
