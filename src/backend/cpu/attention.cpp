// Attention with grouped KV heads, blocked the flash-attention way. A work item is a
// block of query rows (up to kBlockRows: consecutive tokens x the query heads sharing one kv
// head) against the visible cells of a span of kv heads, walked in tiles of 32-64 cells:
// each K/V tile is converted to F32 once per block (not once per token), then the tile
// kernels (attention_kernels.h) compute the score tile, an online-softmax step (running max
// and sum per row, no score vector longer than a tile) and the P.V accumulation.
// Decode and short batches have too few blocks to keep every thread busy, so there the
// visible cells are also split into chunks, whose (max, sum, output) states are merged
// afterwards, chunk by chunk in order, and an item covers several kv heads so K/V rows are
// read in the cache's order; over an F16 or Q8_0 cache a decode block skips the F32 tile and
// its kernels read the cache rows in place. Blocks and chunks depend only on the shapes and
// positions, and every output is computed by one thread in a fixed order, so results do not
// depend on the thread count. The options (AttnParams) act on the score tile between the
// tile kernels: a softcap rewrites the scores, a window masks the cells before it (and skips
// whole tiles), non-causal lanes see every cell; sinks join each row's final normalisation.
// Tagged cells (AttnParams::cells: a sliding-window ring) are masked cell by cell instead.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/attention_kernels.h"
#include "backend/cpu/ops.h"
#include "base/check.h"
#include "base/fp16.h"

namespace paddock::cpu {

namespace {

constexpr int64_t kBlockRows = 32;
// Below kMinItems (block, kv head) items, the cells are split into chunks of at least
// kMinChunkCells (a chunk much shorter than that costs more to merge than it saves).
constexpr int64_t kMinItems = 32;
constexpr int64_t kMinChunkCells = 256;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t a, int64_t b) { return ceil_div(a, b) * b; }

struct Plan {
  int64_t d_k, d_v;
  int64_t dkp, dvp;  // padded to whole 8-float vectors
  int64_t group, n_head_kv, n_tokens;
  int64_t block_tokens, n_blocks;
  int64_t n_chunks, chunk_cells;
  int64_t span, n_spans;  // kv heads per work item
  int tile;
  int64_t block_rows() const { return block_tokens * group; }
  // Score-tile lanes per kv head: rows padded to whole vectors, or to kAttnDotRows for the
  // few-row kernels, so two heads of a decode step share one vector.
  int64_t lanes(int64_t rows) const { return rows <= kAttnDotRows ? kAttnDotRows : round_up(rows, 8); }
  int64_t max_lanes() const { return round_up(span * lanes(block_rows()), 8); }
  // A chunk's partial state: max and sum per row, then the unnormalised output rows.
  int64_t partial_floats() const { return block_rows() * (2 + dvp); }
};

// Blocks and chunks (which decide the summation order) follow from the shapes alone; the
// head span only decides which thread computes what, so it may follow the thread count.
Plan make_plan(int64_t d_k, int64_t d_v, int64_t n_head, int64_t n_head_kv, int64_t n_tokens, int64_t kv_end,
               int threads) {
  Plan p{};
  p.d_k = d_k;
  p.d_v = d_v;
  p.dkp = round_up(d_k, 8);
  p.dvp = round_up(d_v, 8);
  p.group = n_head / n_head_kv;
  p.n_head_kv = n_head_kv;
  p.n_tokens = n_tokens;
  // Tiles of 64 cells keep a K and a V tile of head dim 64 in L1; larger heads take 32.
  p.tile = p.dkp <= 64 && p.dvp <= 64 ? kAttnMaxTile : kAttnMaxTile / 2;
  p.block_tokens = std::min(n_tokens, std::max<int64_t>(1, kBlockRows / p.group));
  p.n_blocks = ceil_div(n_tokens, p.block_tokens);
  p.n_chunks = 1;
  p.span = 1;
  const int64_t items = p.n_blocks * n_head_kv;
  if (items < kMinItems) {
    p.n_chunks = std::clamp<int64_t>(ceil_div(kv_end, kMinChunkCells), 1, ceil_div(kMinItems, p.n_blocks));
    // Few query rows per cell: converting K/V is a large share of the work, and reading a
    // cell's rows of every kv head together streams the cache instead of striding it.
    const int64_t spans = std::clamp<int64_t>(ceil_div(2 * threads, p.n_blocks * p.n_chunks), 1, n_head_kv);
    p.span = ceil_div(n_head_kv, spans);
  }
  p.chunk_cells = round_up(ceil_div(kv_end, p.n_chunks), p.tile);
  p.n_chunks = ceil_div(kv_end, p.chunk_cells);
  p.n_spans = ceil_div(n_head_kv, p.span);
  return p;
}

// One thread's tile buffers, kept across calls so decode does not allocate per layer. Per
// kv head of the item's span: its query rows (row-major or transposed), K and V tiles and
// output rows; the score tile, the softmax state and the visibility limits have one lane
// per (kv head, row).
struct TileScratch {
  std::vector<float> q, qt, k, v, s, acc, m, l, c;
  std::vector<int32_t> lim;
  std::vector<int64_t> lane_last, lane_first;  // each lane's visible cells (last -1: none)
  std::vector<int32_t> lane_pos;                // each lane's position (tagged cells)

  void fit(const Plan& p) {
    auto grow = [](auto& vec, int64_t n) {
      if (static_cast<int64_t>(vec.size()) < n) vec.resize(static_cast<size_t>(n));
    };
    const int64_t lanes = p.max_lanes();
    grow(q, p.span * kAttnDotRows * p.dkp);
    grow(qt, p.span * p.dkp * p.lanes(p.block_rows()));
    grow(k, p.span * kAttnMaxTile * p.dkp);
    grow(v, p.span * kAttnMaxTile * p.dvp);
    grow(s, kAttnMaxTile * lanes);
    grow(acc, p.span * p.block_rows() * p.dvp);
    grow(m, lanes);
    grow(l, lanes);
    grow(c, lanes);
    grow(lim, lanes);
    grow(lane_last, lanes);
    grow(lane_first, lanes);
    grow(lane_pos, lanes);
  }
};

TileScratch& tile_scratch() {
  thread_local TileScratch scratch;
  return scratch;
}

class BlockedAttention {
 public:
  // direct: the cache type's kernels that read it in place in decode blocks, or nullptr.
  BlockedAttention(const AttentionKernels& kernels, TileToF32 convert, const DirectKernels* direct,
                   const Plan& plan, const TensorView& q, const TensorView& k, const TensorView& v,
                   std::span<const int32_t> pos, const AttnParams& params, const float* sinks,
                   const TensorView& dst, float* partials)
      : kern_(kernels),
        convert_(convert),
        direct_(direct),
        p_(plan),
        q_(q),
        k_(k),
        v_(v),
        pos_(pos),
        params_(params),
        sinks_(sinks),
        dst_(dst),
        partials_(partials) {}

  int64_t n_items() const { return p_.n_blocks * p_.n_spans * p_.n_chunks; }

  // Items run later blocks first (they see more cells), so threads claiming items one at a
  // time finish together.
  void run_item(int64_t item) const {
    const int64_t span = item % p_.n_spans;
    const int64_t chunk = item / p_.n_spans % p_.n_chunks;
    const int64_t block = p_.n_blocks - 1 - item / (p_.n_chunks * p_.n_spans);
    const int64_t hk0 = span * p_.span;
    const int64_t heads = std::min(p_.n_head_kv, hk0 + p_.span) - hk0;
    TileScratch& ts = tile_scratch();
    ts.fit(p_);
    const int64_t t0 = block * p_.block_tokens;
    const int64_t t1 = std::min(p_.n_tokens, t0 + p_.block_tokens);
    const int rows = static_cast<int>((t1 - t0) * p_.group);
    const int64_t cs = p_.lanes(rows);           // lanes of one kv head
    const int64_t rs = round_up(heads * cs, 8);  // lanes of the score tile
    // The block's visible cells: [first, end) (tagged cells: any of them).
    const bool tagged = !params_.cells.empty();
    int64_t end = params_.causal && !tagged ? 0 : k_.ne[2];
    int64_t first = tagged ? 0 : k_.ne[2];
    for (int64_t t = t0; t < t1 && !tagged; ++t) {
      if (params_.causal) end = std::max<int64_t>(end, pos_[t] + 1);
      first = std::min(first, first_cell(pos_[t]));
    }
    const int64_t c0 = chunk * p_.chunk_cells;
    const int64_t c1 = std::min(end, c0 + p_.chunk_cells);

    // Row-major for the few-row dot kernels, else transposed (attention_kernels.h).
    const bool dot_rows = rows <= kAttnDotRows;
    for (int64_t hs = 0; hs < heads; ++hs) {
      float* q = query_rows(ts, hs, rows);
      std::fill_n(q, cs * p_.dkp, 0.0f);
      for (int r = 0; r < rows; ++r) {
        const int64_t h = (hk0 + hs) * p_.group + r % p_.group;
        const float* row = reinterpret_cast<const float*>(q_.row(h, t0 + r / p_.group));
        for (int64_t i = 0; i < p_.d_k; ++i) (dot_rows ? q[r * p_.dkp + i] : q[i * cs + r]) = row[i];
      }
    }
    // Each lane's visible cells (last -1: a padding lane, which sees nothing).
    for (int64_t x = 0; x < rs; ++x) {
      const int64_t r = x % cs;
      const bool real = x / cs < heads && r < rows;
      const int64_t pos = real ? pos_[t0 + r / p_.group] : 0;
      ts.lane_last[static_cast<size_t>(x)] = !real ? -1 : params_.causal && !tagged ? pos : k_.ne[2] - 1;
      ts.lane_first[static_cast<size_t>(x)] = tagged ? 0 : first_cell(pos);
      ts.lane_pos[static_cast<size_t>(x)] = static_cast<int32_t>(pos);
    }
    std::fill_n(ts.m.begin(), rs, -INFINITY);
    std::fill_n(ts.l.begin(), rs, 0.0f);
    std::fill_n(ts.acc.begin(), heads * rows * p_.dvp, 0.0f);
    const bool direct = direct_ != nullptr && dot_rows;
    for (int64_t j0 = std::max(c0, first); j0 < c1; j0 += p_.tile) {
      const int nc = static_cast<int>(std::min<int64_t>(p_.tile, c1 - j0));
      const TileRows kt{k_.row(hk0, j0), k_.nb[2], k_.nb[1], static_cast<int>(heads), nc, p_.d_k};
      const TileRows vt{v_.row(hk0, j0), v_.nb[2], v_.nb[1], static_cast<int>(heads), nc, p_.d_v};
      if (!direct) {
        convert_(kt, ts.k.data(), p_.dkp);
        convert_(vt, ts.v.data(), p_.dvp);
      }
      for (int64_t hs = 0; hs < heads; ++hs) {
        float* s = &ts.s[static_cast<size_t>(hs * cs)];
        if (direct) {
          direct_->scores(query_rows(ts, hs, rows), head_rows(kt, hs), rs, params_.scale, s);
        } else {
          kern_.scores(query_rows(ts, hs, rows), query_rows(ts, hs, rows), k_tile(ts, hs, 0), p_.dkp, rows,
                       rs, nc, params_.scale, s);
        }
      }
      if (params_.softcap > 0) {
        const float cap = params_.softcap;
        for (int64_t i = 0; i < nc * rs; ++i) ts.s[static_cast<size_t>(i)] = cap * std::tanh(ts.s[static_cast<size_t>(i)] / cap);
      }
      // Cell j0 + j is visible to a lane iff first - j0 <= j <= lim = last - j0: the kernel
      // takes lim; cells before first get a -inf score (a lane with nothing visible in the
      // tile gets lim -1 instead, so its max stays finite once anything was seen).
      for (int64_t x = 0; x < rs; ++x) {
        if (tagged) {
          ts.lim[static_cast<size_t>(x)] = tagged_limit(ts, x, rs, j0, nc);
          continue;
        }
        int64_t lim = std::min<int64_t>(std::max<int64_t>(ts.lane_last[static_cast<size_t>(x)] - j0, -1), nc);
        const int64_t cut = std::min<int64_t>(ts.lane_first[static_cast<size_t>(x)] - j0, nc);
        if (cut > lim) {
          lim = -1;
        } else {
          for (int64_t j = 0; j < cut; ++j) ts.s[static_cast<size_t>(j * rs + x)] = -INFINITY;
        }
        ts.lim[static_cast<size_t>(x)] = static_cast<int32_t>(lim);
      }
      kern_.softmax(ts.s.data(), rs, nc, ts.lim.data(), ts.m.data(), ts.l.data(), ts.c.data());
      for (int64_t hs = 0; hs < heads; ++hs) {
        const float* s = &ts.s[static_cast<size_t>(hs * cs)];
        const float* c = &ts.c[static_cast<size_t>(hs * cs)];
        float* acc = &ts.acc[static_cast<size_t>(hs * rows * p_.dvp)];
        if (direct) {
          direct_->pv(s, rs, head_rows(vt, hs), rows, c, acc);
        } else {
          kern_.pv(s, rs, v_tile(ts, hs, 0), p_.dvp, rows, nc, c, acc);
        }
      }
    }

    for (int64_t hs = 0; hs < heads; ++hs) {
      const float* m = &ts.m[static_cast<size_t>(hs * cs)];
      const float* l = &ts.l[static_cast<size_t>(hs * cs)];
      const float* acc = &ts.acc[static_cast<size_t>(hs * rows * p_.dvp)];
      if (p_.n_chunks == 1) {
        for (int r = 0; r < rows; ++r) write_output(hk0 + hs, t0, r, acc + r * p_.dvp, m[r], l[r]);
        continue;
      }
      float* part = partial(hk0 + hs, block, chunk);
      std::copy_n(m, rows, part);
      std::copy_n(l, rows, part + p_.block_rows());
      std::copy_n(acc, rows * p_.dvp, part + 2 * p_.block_rows());
    }
  }

  // The chunks of one (kv head, block) merged in chunk order: out = sum_c e^(m_c - M) acc_c /
  // sum_c e^(m_c - M) l_c with M the largest m_c.
  void merge(int64_t hk, int64_t block, std::vector<float>& out) const {
    const int64_t t0 = block * p_.block_tokens;
    const int64_t rows = (std::min(p_.n_tokens, t0 + p_.block_tokens) - t0) * p_.group;
    const int64_t br = p_.block_rows();
    out.resize(static_cast<size_t>(p_.dvp));
    for (int64_t r = 0; r < rows; ++r) {
      float max = -INFINITY;
      for (int64_t c = 0; c < p_.n_chunks; ++c) max = std::max(max, partial(hk, block, c)[r]);
      std::fill(out.begin(), out.end(), 0.0f);
      float sum = 0;
      for (int64_t c = 0; c < p_.n_chunks; ++c) {
        const float* part = partial(hk, block, c);
        if (part[r] == -INFINITY) continue;  // nothing of this chunk is visible to the row
        const float w = std::exp(part[r] - max);
        sum += w * part[br + r];
        const float* acc = part + 2 * br + r * p_.dvp;
        for (int64_t i = 0; i < p_.d_v; ++i) out[static_cast<size_t>(i)] += w * acc[i];
      }
      write_output(hk, t0, static_cast<int>(r), out.data(), max, sum);
    }
  }

 private:
  // One kv head's query rows: kAttnDotRows row-major rows, or lanes(rows) transposed ones.
  float* query_rows(TileScratch& ts, int64_t hs, int rows) const {
    return rows <= kAttnDotRows ? &ts.q[static_cast<size_t>(hs * kAttnDotRows * p_.dkp)]
                                : &ts.qt[static_cast<size_t>(hs * p_.dkp * p_.lanes(rows))];
  }
  // Kv head hs's rows of a tile's cache rows.
  static TileRows head_rows(const TileRows& t, int64_t hs) {
    return {t.src + static_cast<size_t>(hs) * t.head_stride, t.cell_stride, t.head_stride, 1, t.cells, t.n};
  }
  float* k_tile(TileScratch& ts, int64_t hs, int j) const {
    return &ts.k[static_cast<size_t>((hs * kAttnMaxTile + j) * p_.dkp)];
  }
  float* v_tile(TileScratch& ts, int64_t hs, int j) const {
    return &ts.v[static_cast<size_t>((hs * kAttnMaxTile + j) * p_.dvp)];
  }
  float* partial(int64_t hk, int64_t block, int64_t chunk) const {
    return partials_ + ((block * p_.n_head_kv + hk) * p_.n_chunks + chunk) * p_.partial_floats();
  }

  // Lane x's limit over tagged cells j0 .. j0 + nc - 1: the last one it sees (-1: none), with
  // a -inf score for each one before that it does not see.
  int32_t tagged_limit(TileScratch& ts, int64_t x, int64_t rs, int64_t j0, int nc) const {
    if (ts.lane_last[static_cast<size_t>(x)] < 0) return -1;  // a padding lane
    const int32_t pos = ts.lane_pos[static_cast<size_t>(x)];
    int32_t last = -1;
    for (int j = 0; j < nc; ++j) {
      if (attn_visible(params_, pos, params_.cells[static_cast<size_t>(j0 + j)])) {
        for (int u = last + 1; u < j; ++u) ts.s[static_cast<size_t>(u * rs + x)] = -INFINITY;
        last = j;
      }
    }
    return last;
  }

  // The first cell a token at `pos` sees (its window's start).
  int64_t first_cell(int64_t pos) const {
    return params_.window > 0 ? std::max<int64_t>(0, pos - params_.window + 1) : 0;
  }

  // Row r's output: acc / sum, both relative to the row's max m; a sink adds exp(sink) to
  // the sum (rescaled to max(m, sink) so neither overflows).
  void write_output(int64_t hk, int64_t t0, int r, const float* acc, float m, float sum) const {
    const int64_t h = hk * p_.group + r % p_.group;
    const int64_t t = t0 + r / p_.group;
    float scale = sum > 0 ? 1.0f / sum : 0.0f;  // seeing nothing gives 0
    if (sinks_ != nullptr) {
      const float top = std::max(m, sinks_[h]);
      const float f = std::exp(m - top);
      scale = f / (sum * f + std::exp(sinks_[h] - top));
    }
    for (int64_t i = 0; i < p_.d_v; ++i) dst_.f32(i, h, t) = acc[i] * scale;
  }

  const AttentionKernels& kern_;
  TileToF32 convert_;
  const DirectKernels* direct_;
  const Plan& p_;
  const TensorView& q_;
  const TensorView& k_;
  const TensorView& v_;
  std::span<const int32_t> pos_;
  const AttnParams& params_;
  const float* sinks_;
  const TensorView& dst_;
  float* partials_;
};

// Short passes over an F16 cache (f16_rows_apply): one query row at a time with llama.cpp's
// flash-attention roundings (backend/f16_attention_row.h).
void attention_f16_rows(ThreadPool& pool, const F16Ops& ops, const TensorView& q, const TensorView& k,
                        const TensorView& v, std::span<const int32_t> pos, const AttnParams& params,
                        const float* sinks, const TensorView& dst) {
  const int64_t n_head_kv = k.ne[1];
  const auto group = static_cast<int>(q.ne[1] / n_head_kv);
  const bool tagged = !params.cells.empty();
  PADDOCK_CHECK(dst.nb[0] == sizeof(float));
  // A work item: a token, a kv head and a run of the query heads sharing it, which walk its
  // cells together. Runs are whole groups (up to 64, the AVX2 walk's limit) unless there
  // are fewer items than threads (a decode step with one kv head), then split to fill them.
  const int64_t pairs = q.ne[2] * n_head_kv;
  const int64_t threads = static_cast<int64_t>(pool.size());
  const int64_t splits = pairs >= threads ? 1 : std::min<int64_t>(group, ceil_div(threads, pairs));
  const int run = static_cast<int>(std::min<int64_t>(64, ceil_div(group, splits)));
  const int64_t runs = ceil_div(group, run);
  pool.parallel_for(pairs * runs, [&](int64_t begin, int64_t end, int) {
    thread_local F16RowScratch scratch;
    const float* q_rows[64];
    float* out_rows[64];
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / (n_head_kv * runs);
      const int64_t hk = item / runs % n_head_kv;
      const int h0 = static_cast<int>(item % runs) * run;
      const int rows = std::min(run, group - h0);
      int64_t j0 = 0, j1 = k.ne[2];
      if (!tagged && params.causal) {
        j1 = pos[t] + 1;
        if (params.window > 0) j0 = std::max<int64_t>(0, pos[t] - params.window + 1);
      }
      for (int r = 0; r < rows; ++r) {
        q_rows[r] = reinterpret_cast<const float*>(q.row(hk * group + h0 + r, t));
        out_rows[r] = reinterpret_cast<float*>(dst.row(hk * group + h0 + r, t));
      }
      f16_attention_rows(
          ops, q_rows, rows, q.ne[0], v.ne[0], j0, j1,
          [&](int64_t j) { return !tagged || attn_visible(params, pos[t], params.cells[static_cast<size_t>(j)]); },
          [&](int64_t j) { return reinterpret_cast<const uint16_t*>(k.row(hk, j)); },
          [&](int64_t j) { return reinterpret_cast<const uint16_t*>(v.row(hk, j)); }, params.scale, params.softcap,
          sinks != nullptr ? sinks + hk * group + h0 : nullptr, scratch, out_rows);
    }
  });
}

}  // namespace

void attention(ThreadPool& pool, CpuIsa isa, const TensorView& q, const TensorView& k, const TensorView& v,
               std::span<const int32_t> pos, const AttnParams& params, const float* sinks, const TensorView& dst) {
  const int64_t d_k = q.ne[0];
  const int64_t n_head = q.ne[1];
  const int64_t n_tokens = q.ne[2];
  const int64_t n_head_kv = k.ne[1];
  const int64_t n_kv = k.ne[2];
  const int64_t d_v = v.ne[0];
  PADDOCK_CHECK(q.type == DType::kF32 && q.nb[0] == sizeof(float));
  PADDOCK_CHECK(k.ne[0] == d_k && v.ne[1] == n_head_kv && v.ne[2] == n_kv);
  PADDOCK_CHECK(k.type == v.type && (k.type == DType::kF32 || k.type == DType::kF16 ||
                                     k.type == DType::kQ8_0 || k.type == DType::kQ4_0));
  PADDOCK_CHECK(d_k % dtype_info(k.type).block_size == 0 && d_v % dtype_info(v.type).block_size == 0);
  PADDOCK_CHECK(k.nb[0] == dtype_info(k.type).type_size && v.nb[0] == dtype_info(v.type).type_size);
  PADDOCK_CHECK(n_head_kv > 0 && n_head % n_head_kv == 0);
  PADDOCK_CHECK(static_cast<int64_t>(pos.size()) == n_tokens);
  PADDOCK_CHECK(dst.type == DType::kF32 && dst.ne[0] == d_v && dst.ne[1] == n_head && dst.ne[2] == n_tokens);
  const bool tagged = !params.cells.empty();
  PADDOCK_CHECK(!tagged || static_cast<int64_t>(params.cells.size()) == n_kv);
  int64_t kv_end = params.causal && !tagged ? 0 : n_kv;
  for (int32_t p : pos) {
    PADDOCK_CHECK(p >= 0 && (tagged || p < n_kv));
    if (!tagged) kv_end = std::max<int64_t>(kv_end, p + 1);
  }
  if (n_tokens == 0 || d_v == 0) return;

  const AttentionKernels& kernels = attention_kernels(isa);
  if (f16_rows_apply(k.type == DType::kF16, n_tokens, kv_end)) {
    attention_f16_rows(pool, kernels.f16_rows != nullptr ? *kernels.f16_rows : f16_ops_scalar(), q, k, v, pos,
                       params, sinks, dst);
    return;
  }
  TileToF32 convert = kernels.f32_tile;
  switch (k.type) {
    case DType::kF16: convert = kernels.f16_tile; break;
    case DType::kQ8_0: convert = kernels.q8_0_tile; break;
    case DType::kQ4_0: convert = kernels.q4_0_tile; break;
    default: break;
  }
  const Plan plan = make_plan(d_k, d_v, n_head, n_head_kv, n_tokens, kv_end, pool.size());
  thread_local std::vector<float> partials;
  if (plan.n_chunks > 1) {
    partials.resize(static_cast<size_t>(plan.n_blocks * n_head_kv * plan.n_chunks * plan.partial_floats()));
  }
  const DirectKernels* direct = k.type == DType::kF16    ? &kernels.f16_direct
                                : k.type == DType::kQ8_0 ? &kernels.q8_0_direct
                                                         : nullptr;
  if (direct != nullptr && (direct->scores == nullptr || d_k % 8 != 0 || d_v % 8 != 0)) direct = nullptr;
  const BlockedAttention attn(kernels, convert, direct, plan, q, k, v, pos, params, sinks, dst, partials.data());
  pool.parallel_for_chunked(attn.n_items(), 1, [&](int64_t begin, int64_t end, int) {
    for (int64_t item = begin; item < end; ++item) attn.run_item(item);
  });
  if (plan.n_chunks == 1) return;
  pool.parallel_for(plan.n_blocks * n_head_kv, [&](int64_t begin, int64_t end, int) {
    std::vector<float> out;
    for (int64_t i = begin; i < end; ++i) attn.merge(i % n_head_kv, i / n_head_kv, out);
  });
}

}  // namespace paddock::cpu
