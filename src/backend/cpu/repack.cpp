#include "backend/cpu/repack.h"

#include <cstring>
#include <type_traits>

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

// Q4_K and Q5_K (whose fifth bits go as their quants do, repack.h).
template <typename Block, typename Block8>
void repack_k4(const Block* const (&rows)[kR], int64_t i, Block8& out) {
  uint8_t six[128];
  for (int r = 0; r < kR; ++r) {
    const Block& b = rows[r][i];
    out.d[r] = b.d;
    out.dmin[r] = b.dmin;
    uint8_t sc[8], mn[8];
    detail::unpack_scales_k4(b.scales, sc, mn);
    for (int g = 0; g < 8; ++g) {
      const int v = 32 * (g / 4) + 16 * (r / 4) + 4 * (r % 4) + g % 4;
      six[v] = sc[g];
      six[64 + v] = mn[g];
    }
    for (int c = 0; c < 4; ++c) {
      for (int s = 0; s < 8; ++s) std::memcpy(&out.qs[32 * (8 * c + s) + 4 * r], &b.qs[32 * c + 4 * s], 4);
    }
    if constexpr (std::is_same_v<Block, BlockQ5_K>) {
      for (int s = 0; s < 8; ++s) std::memcpy(&out.qh[32 * s + 4 * r], &b.qh[4 * s], 4);
    }
  }
  pack_six_bit_planes(six, out.lo4, out.hi2);
}

// Q2_K and Q3_K: element e's 2-bit level, from byte e % 32 of the block's 32-byte run e / 128,
// bits 2 * ((e % 128) / 32).
uint8_t low_level(const uint8_t* qs, int e) {
  return static_cast<uint8_t>((qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3);
}

template <typename Block, typename Block8>
void repack_k23(const Block* const (&rows)[kR], int64_t i, Block8& out) {
  constexpr bool kQ3 = std::is_same_v<Block, BlockQ3_K>;
  std::memset(out.qs, 0, sizeof(out.qs));
  [[maybe_unused]] uint8_t six[128];  // Q3_K's scales
  if constexpr (kQ3) std::memset(out.hm, 0, sizeof(out.hm));
  for (int r = 0; r < kR; ++r) {
    const Block& b = rows[r][i];
    out.d[r] = b.d;
    if constexpr (kQ3) {
      int8_t sc[16];
      unpack_q3_k_scales(b.scales, sc);
      for (int g = 0; g < 16; ++g) six[16 * (g / 2) + 2 * r + g % 2] = static_cast<uint8_t>(sc[g]);
    } else {
      out.dmin[r] = b.dmin;
      for (int g = 0; g < 16; ++g) out.sc[16 * (g / 2) + 2 * r + g % 2] = b.scales[g];
    }
    for (int e = 0; e < kQK_K; ++e) {
      const int g = e / 16, t = (e % 16) / 4, x = e % 4;
      out.qs[32 * g + 4 * r + x] |= static_cast<uint8_t>(low_level(b.qs, e) << (2 * t));
      if constexpr (kQ3) {
        const int third = (b.hmask[e % 32] >> (e / 32)) & 1;
        out.hm[32 * (g / 2) + 4 * r + x] |= static_cast<uint8_t>(third << (t + 4 * (g % 2)));
      }
    }
  }
  if constexpr (kQ3) pack_six_bit_planes(six, out.lo4, out.hi2);
}

// The 256 six-bit quants of a Q6_K block in element order (ggml's layout: per half of 128,
// ql holds the low nibbles of 4 runs of 32 and qh their top 2 bits).
void q6_K_quants(const BlockQ6_K& b, uint8_t (&q)[kQK_K]) {
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = b.ql + 64 * h;
    const uint8_t* qh = b.qh + 32 * h;
    uint8_t* out = q + 128 * h;
    for (int l = 0; l < 32; ++l) {
      out[l] = static_cast<uint8_t>((ql[l] & 0x0F) | ((qh[l] & 3) << 4));
      out[l + 32] = static_cast<uint8_t>((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4));
      out[l + 64] = static_cast<uint8_t>((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
      out[l + 96] = static_cast<uint8_t>((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
    }
  }
}

void repack_q6_K(const BlockQ6_K* const (&rows)[kR], int64_t i, BlockQ6_Kx8& out) {
  for (int r = 0; r < kR; ++r) {
    const BlockQ6_K& b = rows[r][i];
    out.d[r] = b.d;
    for (int g = 0; g < 16; ++g) out.scales[16 * (g / 2) + 2 * r + (g & 1)] = b.scales[g];
    uint8_t q[kQK_K];
    q6_K_quants(b, q);
    for (int g = 0; g < 16; ++g) {
      uint8_t* base = out.q + 96 * g + 4 * r;
      const uint8_t* e = q + 16 * g;  // steps 4g..4g+3 of 4 elements each
      for (int x = 0; x < 4; ++x) {
        base[x] = static_cast<uint8_t>((e[x] & 0x0F) | ((e[4 + x] & 0x0F) << 4));
        base[32 + x] = static_cast<uint8_t>((e[8 + x] & 0x0F) | ((e[12 + x] & 0x0F) << 4));
        base[64 + x] = static_cast<uint8_t>((e[x] >> 4) | ((e[4 + x] >> 4) << 2) | ((e[8 + x] >> 4) << 4) |
                                            ((e[12 + x] >> 4) << 6));
      }
    }
  }
}

// Q8_0, Q4_0, Q4_1, Q5_0, Q5_1 and MXFP4: each row's qs in runs of 4 bytes, one run of every
// row per 32-byte step; the scales (fp16 d, or MXFP4's exponent e) and mins one per row; the
// fifth bits' qh per row.
template <typename Block, typename Block8>
void repack_32(const Block* const (&rows)[kR], int64_t i, Block8& out) {
  for (int r = 0; r < kR; ++r) {
    const Block& b = rows[r][i];
    if constexpr (std::is_same_v<Block, BlockMXFP4>) {
      out.e[r] = b.e;
    } else {
      out.d[r] = b.d;
    }
    if constexpr (std::is_same_v<Block, BlockQ4_1> || std::is_same_v<Block, BlockQ5_1>) out.m[r] = b.m;
    if constexpr (std::is_same_v<Block, BlockQ5_0> || std::is_same_v<Block, BlockQ5_1>) {
      std::memcpy(&out.qh[4 * r], b.qh, 4);
    }
    for (size_t s = 0; s < sizeof(b.qs) / 4; ++s) std::memcpy(&out.qs[32 * s + 4 * r], &b.qs[4 * s], 4);
  }
}

// The block types a repack function takes.
template <typename F>
struct RepackTypes;
template <typename B, typename B8>
struct RepackTypes<void (*)(const B* const (&)[kR], int64_t, B8&)> {
  using Block = B;
  using Block8 = B8;
};

template <auto Repack>
void repack_groups(const void* src, int64_t nb, int64_t r0, int64_t r1, void* dst) {
  using Types = RepackTypes<decltype(Repack)>;
  const auto* in = static_cast<const typename Types::Block*>(src);
  auto* out = static_cast<typename Types::Block8*>(dst);
  for (int64_t g = r0 / kR; g < r1 / kR; ++g) {
    const typename Types::Block* rows[kR];
    for (int r = 0; r < kR; ++r) rows[r] = in + (g * kR + r) * nb;
    for (int64_t i = 0; i < nb; ++i) Repack(rows, i, out[g * nb + i]);
  }
}

}  // namespace

bool can_repack(DType t) {
  return t == DType::kQ4_0 || t == DType::kQ4_1 || t == DType::kQ5_0 || t == DType::kQ5_1 ||
         t == DType::kQ2_K || t == DType::kQ3_K || t == DType::kQ4_K || t == DType::kQ5_K ||
         t == DType::kQ6_K || t == DType::kQ8_0 || t == DType::kMXFP4;
}

size_t repacked_bytes(DType t, int64_t k, int64_t m) {
  return dtype_row_bytes(t, k) * static_cast<size_t>(m);
}

void repack_rows(DType t, const void* src, int64_t k, int64_t r0, int64_t r1, void* dst) {
  PADDOCK_CHECK(r0 % kR == 0 && r1 % kR == 0 && r0 <= r1);
  const int64_t nb = k / dtype_info(t).block_size;
  switch (t) {
    case DType::kQ2_K: return repack_groups<repack_k23<BlockQ2_K, BlockQ2_Kx8>>(src, nb, r0, r1, dst);
    case DType::kQ3_K: return repack_groups<repack_k23<BlockQ3_K, BlockQ3_Kx8>>(src, nb, r0, r1, dst);
    case DType::kQ4_K: return repack_groups<repack_k4<BlockQ4_K, BlockQ4_Kx8>>(src, nb, r0, r1, dst);
    case DType::kQ5_K: return repack_groups<repack_k4<BlockQ5_K, BlockQ5_Kx8>>(src, nb, r0, r1, dst);
    case DType::kQ6_K: return repack_groups<repack_q6_K>(src, nb, r0, r1, dst);
    case DType::kQ4_0: return repack_groups<repack_32<BlockQ4_0, BlockQ4_0x8>>(src, nb, r0, r1, dst);
    case DType::kQ4_1: return repack_groups<repack_32<BlockQ4_1, BlockQ4_1x8>>(src, nb, r0, r1, dst);
    case DType::kQ5_0: return repack_groups<repack_32<BlockQ5_0, BlockQ5_0x8>>(src, nb, r0, r1, dst);
    case DType::kQ5_1: return repack_groups<repack_32<BlockQ5_1, BlockQ5_1x8>>(src, nb, r0, r1, dst);
    case DType::kQ8_0: return repack_groups<repack_32<BlockQ8_0, BlockQ8_0x8>>(src, nb, r0, r1, dst);
    case DType::kMXFP4: return repack_groups<repack_32<BlockMXFP4, BlockMXFP4x8>>(src, nb, r0, r1, dst);
    default: PADDOCK_CHECK(false && "repack_rows: type has no interleaved layout");
  }
}

}  // namespace paddock::cpu
