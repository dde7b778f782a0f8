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

// How a product of weights of one type runs: the activations' type and row size, and the
// kernel (interleaved gemm, quantized dot, or a dot over rows dequantized to F32 first).
struct Plan {
  int64_t k = 0;
  DType act_type = DType::kF32;
  size_t act_row = 0;
  ActQuantFn quantize = nullptr;
  bool offset = false;  // the gemm wants its activations offset (offset_activations)
  GemmFn gemm = nullptr;
  DotFn dot = nullptr;
  bool dequantize_first = false;
  void (*dequantize)(const void* src, float* dst, int64_t n) = nullptr;
};

Plan make_plan(CpuIsa isa, DType type, int64_t k, bool packed) {
  Plan p;
  p.k = k;
  p.gemm = packed ? gemm_kernel(isa, type) : nullptr;
  p.dequantize_first = !has_dot(type);
  p.dequantize = quant_ops(type)->dequantize_row;
  p.act_type = p.dequantize_first ? DType::kF32 : quant_ops(type)->vec_dot_type;
  p.quantize = act_quantizer(isa, p.act_type);
  p.dot = dot_kernel(isa, p.dequantize_first ? DType::kF32 : type);
  p.act_row = dtype_row_bytes(p.act_type, k);
  p.offset = p.gemm != nullptr && gemm_offsets_activations(isa, type);
  return p;
}

// Quantizes columns [0, ncols) of x (column c at column_row(x, c)) into act.
void quantize_columns(ThreadPool& pool, const Plan& p, const TensorView& x, int64_t ncols, uint8_t* act) {
  pool.parallel_for(ncols, [&](int64_t b, int64_t e, int) {
    for (int64_t c = b; c < e; ++c) {
      uint8_t* col = act + p.act_row * static_cast<size_t>(c);
      p.quantize(reinterpret_cast<const float*>(column_row(x, c)), col, p.k);
      if (p.offset) offset_activations(col, p.k);
    }
  });
}

// Rows [r0, r1) of w (its interleaved copy `packed` when p.gemm) times the ny activation
// columns at y, into dst_cols (stride dst_nb0 between rows). row_f32: k floats of scratch
// for the dequantize-first path.
void run_tile(const Plan& p, const TensorView& w, const uint8_t* packed, const uint8_t* y, int64_t r0, int64_t r1,
              int ny, uint8_t* const* dst_cols, size_t dst_nb0, float* row_f32) {
  // Locals, not p's fields: the stores to dst may alias p as far as the compiler knows.
  const int64_t k = p.k;
  const size_t act_row = p.act_row;
  if (const GemmFn gemm = p.gemm) {
    static_assert(kRowTile % kRepackRows == 0, "row tiles hold whole interleaved groups");
    const size_t group_bytes = dtype_row_bytes(w.type, k) * kRepackRows;
    float out[kMaxCols * kRepackRows];
    for (int64_t r = r0; r < r1; r += kRepackRows) {
      gemm(k, packed + group_bytes * static_cast<size_t>(r / kRepackRows), y, act_row, ny, out);
      for (int j = 0; j < ny; ++j) {
        std::memcpy(dst_cols[j] + r * dst_nb0, out + kRepackRows * j, sizeof(float) * kRepackRows);
      }
    }
    return;
  }
  const DotFn dot = p.dot;
  const auto dequantize = p.dequantize_first ? p.dequantize : nullptr;
  float out[kMaxCols];
  for (int64_t r = r0; r < r1; ++r) {
    const void* row = w.row(r);
    if (dequantize != nullptr) {
      dequantize(row, row_f32, k);
      row = row_f32;
    }
    dot(k, row, y, act_row, ny, out);
    for (int j = 0; j < ny; ++j) *reinterpret_cast<float*>(dst_cols[j] + r * dst_nb0) = out[j];
  }
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
  const Plan p = make_plan(isa, w.type, k, packed != nullptr && dst.nb[0] == sizeof(float));
  const int64_t ncols = x.ne[1] * x.ne[2] * x.ne[3];
  if (m == 0 || ncols == 0) return;
  scratch.activations.resize(p.act_row * static_cast<size_t>(ncols));
  uint8_t* act = scratch.activations.data();
  quantize_columns(pool, p, x, ncols, act);
  if (p.dequantize_first)
    scratch.dequantized_rows.resize(static_cast<size_t>(k) * static_cast<size_t>(pool.size()));
  for_each_tile(pool, m, ncols, dst,
                [&](int64_t r0, int64_t r1, int64_t c0, int ny, uint8_t* const* dst_cols, int thread) {
                  float* row_f32 = p.dequantize_first
                                       ? scratch.dequantized_rows.data() + static_cast<size_t>(k) * thread
                                       : nullptr;
                  run_tile(p, w, packed, act + p.act_row * static_cast<size_t>(c0), r0, r1, ny, dst_cols,
                           dst.nb[0], row_f32);
                });
}

void mul_mat_grouped(ThreadPool& pool, CpuIsa isa, Scratch& scratch, std::span<const MatGroup> groups,
                     const TensorView& x, const TensorView& dst) {
  if (groups.empty()) return;
  const TensorView& w0 = groups[0].w;
  const int64_t k = w0.ne[0];
  const int64_t m = w0.ne[1];
  PADDOCK_CHECK(x.type == DType::kF32 && x.nb[0] == sizeof(float) && x.ne[0] == k && x.ne[2] == 1);
  PADDOCK_CHECK(dst.type == DType::kF32 && dst.nb[0] == sizeof(float) && dst.ne[0] == m &&
                dst.ne[1] == x.ne[1]);
  bool all_packed = true;
  for (const MatGroup& g : groups) {
    PADDOCK_CHECK(g.w.type == w0.type && g.w.ne[0] == k && g.w.ne[1] == m && g.w.ne[2] == 1);
    all_packed = all_packed && g.packed != nullptr;
  }
  const Plan p = make_plan(isa, w0.type, k, all_packed);
  const int64_t ncols = x.ne[1];
  scratch.activations.resize(p.act_row * static_cast<size_t>(ncols));
  uint8_t* act = scratch.activations.data();
  quantize_columns(pool, p, x, ncols, act);
  if (p.dequantize_first)
    scratch.dequantized_rows.resize(static_cast<size_t>(k) * static_cast<size_t>(pool.size()));
  // Work items as for_each_tile's, (row tile) x (block of kColBlock columns), of every group.
  const int64_t row_tiles = (m + kRowTile - 1) / kRowTile;
  std::vector<int64_t> first_item(groups.size() + 1, 0);
  bool decode = true;
  for (size_t i = 0; i < groups.size(); ++i) {
    first_item[i + 1] = first_item[i] + row_tiles * ((groups[i].n + kColBlock - 1) / kColBlock);
    decode = decode && groups[i].n <= kMaxCols;
  }
  const auto items = [&](int64_t b, int64_t e, int thread) {
    float* row_f32 =
        p.dequantize_first ? scratch.dequantized_rows.data() + static_cast<size_t>(k) * thread : nullptr;
    for (int64_t item = b; item < e; ++item) {
      const auto gi = static_cast<size_t>(std::upper_bound(first_item.begin(), first_item.end(), item) -
                                          first_item.begin() - 1);
      const MatGroup& g = groups[gi];
      const int64_t local = item - first_item[gi];
      const int64_t r0 = (local % row_tiles) * kRowTile;
      const int64_t cb0 = g.first + (local / row_tiles) * kColBlock;
      const int64_t cb1 = std::min(cb0 + kColBlock, g.first + g.n);
      for (int64_t c0 = cb0; c0 < cb1; c0 += kMaxCols) {
        const int ny = static_cast<int>(std::min<int64_t>(kMaxCols, cb1 - c0));
        uint8_t* dst_cols[kMaxCols];
        for (int j = 0; j < ny; ++j) dst_cols[j] = dst.row(c0 + j);
        run_tile(p, g.w, g.packed, act + p.act_row * static_cast<size_t>(c0), r0, std::min(r0 + kRowTile, m),
                 ny, dst_cols, dst.nb[0], row_f32);
      }
    }
  };
  // Decode streams long runs of consecutive rows (as for_each_tile does for one column group).
  if (decode) {
    pool.parallel_for_guided(first_item.back(), 1, items);
  } else {
    pool.parallel_for_chunked(first_item.back(), 1, items);
  }
}

}  // namespace paddock::cpu
