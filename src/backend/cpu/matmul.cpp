// mul_mat and get_rows: the ops that read weights. mul_mat quantizes every activation column
// once to the weight type's vec_dot_type (act_quant.h), then splits the output into (tile of
// kRowTile weight rows) x (block of kColBlock columns) work items that threads claim one at a
// time. Within an item, columns go in groups of kMaxCols past each row of the tile, so the
// tile stays in L1/L2 and each weight block is unpacked once per column group (dot.h).
// Weights with an interleaved copy (repack.h) take the same path 8 rows at a time (gemm.h).
#include <algorithm>
#include <cstring>

#include "backend/cpu/act_quant.h"
#include "backend/cpu/dot.h"
#include "backend/cpu/gemm.h"
#include "backend/cpu/ops.h"
#include "backend/cpu/repack.h"
#include "base/check.h"
#include "quant/quant.h"

namespace paddock::cpu {

namespace {

// A row tile's weights (32 rows of a 2048-wide Q4_K matrix: 37 KB) stay in L1/L2 while the
// column groups of a block pass over them; a block of 64 Q8_K columns of 2048 is 150 KB (L2).
constexpr int64_t kRowTile = 32;
constexpr int64_t kColBlock = 64;

// Column c of a [K, n1, n2, n3] view, columns numbered i1 fastest.
uint8_t* column_row(const TensorView& v, int64_t c) {
  const int64_t n1 = v.ne[1];
  const int64_t n2 = v.ne[2];
  return v.row(c % n1, (c / n1) % n2, c / (n1 * n2));
}

// Whether t has a quantized dot; types that only dequantize (Q8_1, Q8_K) are multiplied by
// dequantizing each weight row to F32 first.
bool has_dot(DType t) {
  const QuantOps* ops = quant_ops(t);
  if (ops == nullptr || ops->vec_dot == nullptr) return false;
  const QuantOps* act = quant_ops(ops->vec_dot_type);
  return act != nullptr && act->quantize_row != nullptr;
}

// Runs fn(r0, r1, c0, ny, dst_cols, thread) over the work items of an m x ncols product into
// dst: (row tile of kRowTile rows) x (block of kColBlock columns) pairs, and within an item
// each group of up to kMaxCols columns c0..c0+ny-1 against rows [r0, r1); dst_cols[j] is
// dst's column c0 + j. Items are claimed one at a time; with one column group (decode) they
// go in guided chunks instead: each thread streams long runs of consecutive rows, which the
// hardware prefetcher follows best, and the chunks shrink to one tile at the end, so neither
// thread waits long for the other (nor for one the OS has paused).
template <typename Fn>
void for_each_tile(ThreadPool& pool, int64_t m, int64_t ncols, const TensorView& dst, Fn&& fn) {
  const int64_t row_tiles = (m + kRowTile - 1) / kRowTile;
  const int64_t col_blocks = (ncols + kColBlock - 1) / kColBlock;
  const auto items = [&](int64_t b, int64_t e, int thread) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t r0 = (item % row_tiles) * kRowTile;
      const int64_t r1 = std::min(r0 + kRowTile, m);
      const int64_t cb0 = (item / row_tiles) * kColBlock;
      const int64_t cb1 = std::min(cb0 + kColBlock, ncols);
      for (int64_t c0 = cb0; c0 < cb1; c0 += kMaxCols) {
        const int ny = static_cast<int>(std::min<int64_t>(kMaxCols, cb1 - c0));
        uint8_t* dst_cols[kMaxCols];
        for (int j = 0; j < ny; ++j) dst_cols[j] = column_row(dst, c0 + j);
        fn(r0, r1, c0, ny, dst_cols, thread);
      }
    }
  };
  if (ncols <= kMaxCols) {
    pool.parallel_for_guided(row_tiles, 1, items);
  } else {
    pool.parallel_for_chunked(row_tiles * col_blocks, 1, items);
  }
}

// mul_mat over interleaved weights: the same work items, walked 8 rows at a time.
void mul_mat_packed(ThreadPool& pool, GemmFn gemm, const uint8_t* packed, const TensorView& w,
                    const uint8_t* act, size_t act_row, int64_t ncols, const TensorView& dst) {
  static_assert(kRowTile % kRepackRows == 0, "row tiles hold whole interleaved groups");
  const int64_t k = w.ne[0];
  const size_t group_bytes = dtype_row_bytes(w.type, k) * kRepackRows;
  const auto tile = [&](int64_t r0, int64_t r1, int64_t c0, int ny, uint8_t* const* dst_cols, int) {
    float out[kMaxCols * kRepackRows];
    const uint8_t* y = act + act_row * static_cast<size_t>(c0);
    for (int64_t r = r0; r < r1; r += kRepackRows) {
      gemm(k, packed + group_bytes * static_cast<size_t>(r / kRepackRows), y, act_row, ny, out);
      for (int j = 0; j < ny; ++j) {
        std::memcpy(dst_cols[j] + r * dst.nb[0], out + kRepackRows * j, sizeof(float) * kRepackRows);
      }
    }
  };
  for_each_tile(pool, w.ne[1], ncols, dst, tile);
}

}  // namespace

bool can_read_rows(DType t) {
  const QuantOps* ops = quant_ops(t);
  return ops != nullptr && ops->dequantize_row != nullptr;
}

bool can_mul_mat(DType t) { return has_dot(t) || can_read_rows(t); }

void get_rows(ThreadPool& pool, const TensorView& table, std::span<const int32_t> ids,
              const TensorView& dst) {
  PADDOCK_CHECK(can_read_rows(table.type) && table.nb[0] == dtype_info(table.type).type_size);
  PADDOCK_CHECK(dst.type == DType::kF32 && dst.nb[0] == sizeof(float));
  PADDOCK_CHECK(dst.ne[0] == table.ne[0] && dst.ne[1] == static_cast<int64_t>(ids.size()));
  const auto dequantize = quant_ops(table.type)->dequantize_row;
  pool.parallel_for(static_cast<int64_t>(ids.size()), [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) {
      PADDOCK_CHECK(ids[i] >= 0 && ids[i] < table.ne[1]);
      dequantize(table.row(ids[i]), reinterpret_cast<float*>(dst.row(i)), table.ne[0]);
    }
  });
}

void mul_mat(ThreadPool& pool, CpuIsa isa, Scratch& scratch, const TensorView& w, const uint8_t* packed,
             const TensorView& x, const TensorView& dst) {
  const int64_t k = w.ne[0];
  const int64_t m = w.ne[1];
  PADDOCK_CHECK(can_mul_mat(w.type));
  PADDOCK_CHECK(w.ne[2] == 1 && w.ne[3] == 1 && w.nb[0] == dtype_info(w.type).type_size);
  PADDOCK_CHECK(x.type == DType::kF32 && x.nb[0] == sizeof(float) && x.ne[0] == k);
  PADDOCK_CHECK(dst.type == DType::kF32 && dst.ne[0] == m && dst.ne[1] == x.ne[1] && dst.ne[2] == x.ne[2] &&
                dst.ne[3] == x.ne[3]);
  const GemmFn gemm = packed != nullptr && dst.nb[0] == sizeof(float) ? gemm_kernel(isa, w.type) : nullptr;
  const bool dequantize_first = !has_dot(w.type);
  const auto dequantize = quant_ops(w.type)->dequantize_row;
  const DType act_type = dequantize_first ? DType::kF32 : quant_ops(w.type)->vec_dot_type;
  const ActQuantFn quantize = act_quantizer(isa, act_type);
  const DotFn dot = dot_kernel(isa, dequantize_first ? DType::kF32 : w.type);
  const size_t act_row = dtype_row_bytes(act_type, k);
  const int64_t ncols = x.ne[1] * x.ne[2] * x.ne[3];
  if (m == 0 || ncols == 0) return;

  scratch.activations.resize(act_row * static_cast<size_t>(ncols));
  uint8_t* act = scratch.activations.data();
  const bool offset = gemm != nullptr && gemm_offsets_activations(isa, w.type);
  pool.parallel_for(ncols, [&](int64_t b, int64_t e, int) {
    for (int64_t c = b; c < e; ++c) {
      uint8_t* col = act + act_row * static_cast<size_t>(c);
      quantize(reinterpret_cast<const float*>(column_row(x, c)), col, k);
      if (offset) offset_activations(col, k);
    }
  });

  if (gemm != nullptr) return mul_mat_packed(pool, gemm, packed, w, act, act_row, ncols, dst);
  if (dequantize_first)
    scratch.dequantized_rows.resize(static_cast<size_t>(k) * static_cast<size_t>(pool.size()));
  const auto tile = [&](int64_t r0, int64_t r1, int64_t c0, int ny, uint8_t* const* dst_cols, int thread) {
    float out[kMaxCols];
    const uint8_t* y = act + act_row * static_cast<size_t>(c0);
    float* row_f32 =
        dequantize_first ? scratch.dequantized_rows.data() + static_cast<size_t>(k) * thread : nullptr;
    for (int64_t r = r0; r < r1; ++r) {
      const void* row = w.row(r);
      if (dequantize_first) {
        dequantize(row, row_f32, k);
        row = row_f32;
      }
      dot(k, row, y, act_row, ny, out);
      for (int j = 0; j < ny; ++j) *reinterpret_cast<float*>(dst_cols[j] + r * dst.nb[0]) = out[j];
    }
  };
  for_each_tile(pool, m, ncols, dst, tile);
}

}  // namespace paddock::cpu
