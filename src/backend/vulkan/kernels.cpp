#include "backend/vulkan/kernels.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "backend/host_exec.h"
#include "backend/rope_angles.h"
#include "base/check.h"

namespace paddock {

uint32_t ParamWriter::begin_node(const Node& n, const std::array<uint32_t, 5>& starts) {
  base_ = static_cast<uint32_t>(words_.size());
  words_.resize(words_.size() + kTensorWords + kOpWords, 0);
  const auto put = [&](size_t t, const TensorView& v) {
    uint32_t* w = &words_[base_ + 9 * t];
    w[0] = starts[t];
    for (int d = 0; d < 4; ++d) {
      PADDOCK_CHECK(v.ne[d] < (int64_t{1} << 32) && v.nb[d] < (size_t{1} << 32));
      w[1 + d] = static_cast<uint32_t>(v.ne[d]);
      w[5 + d] = static_cast<uint32_t>(v.nb[d]);
    }
  };
  put(0, n.dst);
  for (int i = 0; i < n.n_src; ++i) put(static_cast<size_t>(i) + 1, n.src[static_cast<size_t>(i)]);
  return base_;
}

void ParamWriter::op(uint32_t i, float v) {
  uint32_t u;
  std::memcpy(&u, &v, sizeof u);
  op(i, u);
}

uint32_t ParamWriter::table(std::span<const uint32_t> values) {
  const auto at = static_cast<uint32_t>(words_.size());
  words_.insert(words_.end(), values.begin(), values.end());
  return at - base_;
}

uint32_t ParamWriter::table(std::span<const int32_t> values) {
  const auto at = static_cast<uint32_t>(words_.size());
  for (int32_t v : values) words_.push_back(static_cast<uint32_t>(v));
  return at - base_;
}

uint32_t ParamWriter::shared_table(const std::string& key,
                                   const std::function<std::vector<uint32_t>()>& make) {
  for (const auto& [k, at] : shared_) {
    if (k == key) return at - base_;  // may lie before the block: the shader's sum wraps back
  }
  const std::vector<uint32_t> values = make();
  const uint32_t rel = table(values);
  shared_.emplace_back(key, rel + base_);
  return rel;
}

std::optional<uint32_t> ParamWriter::scratch_counters(uint32_t n) {
  if (n > kScratchCounters - counters_used_) return std::nullopt;
  counters_used_ += n;
  return counters_used_ - n;
}

uint32_t ParamWriter::scratch_words(uint32_t n) {
  scratch_used_ += n;
  return kScratchCounters + scratch_used_ - n;
}

uint32_t ParamWriter::reused_scratch_words(uint32_t n) {
  for (auto it = released_.begin(); it != released_.end(); ++it) {
    auto& [first, count] = *it;
    const bool last = first + count == kScratchCounters + scratch_used_;
    if (count < n && !last) continue;
    const uint32_t at = first;
    if (count < n) scratch_words(n - count);  // the top range, grown
    if (count <= n) {
      released_.erase(it);
    } else {
      first += n;
      count -= n;
    }
    return at;
  }
  return scratch_words(n);
}

void ParamWriter::release_scratch(uint32_t first, uint32_t n) {
  auto it = std::lower_bound(released_.begin(), released_.end(), std::make_pair(first, n));
  it = released_.insert(it, {first, n});
  if (std::next(it) != released_.end() && it->first + it->second == std::next(it)->first) {
    it->second += std::next(it)->second;
    released_.erase(std::next(it));
  }
  if (it != released_.begin() && std::prev(it)->first + std::prev(it)->second == it->first) {
    std::prev(it)->second += it->second;
    released_.erase(it);
  }
}

namespace {

// The types with a dequantizing reader in shaders/types.glsl.
bool readable(DType t) {
  switch (t) {
    case DType::kF32:
    case DType::kF16:
    case DType::kBF16:
    case DType::kQ4_0:
    case DType::kQ4_1:
    case DType::kQ5_0:
    case DType::kQ5_1:
    case DType::kQ8_0:
    case DType::kIQ4_NL:
    case DType::kMXFP4:
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kIQ4_XS:
    case DType::kQ4_K:
    case DType::kQ5_K:
    case DType::kQ6_K: return true;
    default: return false;
  }
}

std::string type_suffix(DType t) {
  std::string s(dtype_name(t));
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

uint32_t groups_of(int64_t invocations, int64_t per_group) {
  return static_cast<uint32_t>((invocations + per_group - 1) / per_group);
}

uint32_t ceil_div(int64_t a, int64_t b) { return static_cast<uint32_t>((a + b - 1) / b); }

bool rows_then_f32(std::span<const DType> types) {
  return !types.empty() && readable(types[0]) && all_f32(types.subspan(1));
}
bool copy_types(std::span<const DType> types) { return types.size() == 1 && supports_copy(types); }

std::string typed(const char* shader, const Node& n) { return shader + ("_" + type_suffix(n.src[0].type)); }

Result<uint32_t> encode_get_rows(const Node& n, const DeviceTraits&, ParamWriter& w) {
  w.op(0, w.table(n.ids));
  return groups_of(n.dst.ne[0] * n.dst.ne[1], 256);
}

// The weight types shaders/mat_vec_idot.glsl and mm_idot.glsl take: every block type.
bool int_dot_type(DType t) { return readable(t) && dtype_info(t).block_size > 1; }

// Whether n's activations can be quantized for its weights' integer dot products: dense
// rows of floats, weights of a type with integer levels.
bool int_dot_operands(const Node& n, const DeviceTraits& d) {
  return d.int_dot && int_dot_type(n.src[0].type) && n.src[1].nb[0] == sizeof(float);
}

// mul_mat's three kernels. On GPUs: decode's products (one column) of block-quantized weights
// take mul_mat_vec.comp, which reads each row's words once with a whole workgroup, and so do
// a few columns with integer dot products (several sequences' decode: a workgroup per row and
// column, so activations are rounded as the CPU rounds them whatever the count); prompts
// (more than one mul_mat.comp block of columns) take mul_mm.comp's tiles. The rest, and every
// product on CPU devices, take mul_mat.comp.
enum class MulMatKernel { kVec, kTiles, kColumns };

constexpr int64_t kMulMatColumns = 8;                                  // shaders/mul_mat.comp NC
constexpr int64_t kTileRows = 64, kTileColumns = 64, kTileDepth = 32;  // shaders/mul_mm.comp BM, BN, BK

MulMatKernel mul_mat_kernel(const Node& n, const DeviceTraits& d) {
  if (d.cpu) return MulMatKernel::kColumns;
  const int64_t cols = n.src[1].ne[1];
  if (cols > kMulMatColumns && n.src[0].ne[0] % kTileDepth == 0) return MulMatKernel::kTiles;
  // Every block-quantized type has a mul_mat_vec kernel; float rows take mul_mat.comp.
  const bool blocks = dtype_info(n.src[0].type).block_size > 1;
  const bool vec = cols == 1 || (int_dot_operands(n, d) && cols <= kMulMatColumns);
  return blocks && vec ? MulMatKernel::kVec : MulMatKernel::kColumns;
}

// The shader of kernel k for n's weight type; `id`: its MUL_MAT_ID variant.
std::string mul_mat_variant(MulMatKernel k, const Node& n, bool id) {
  const char* shader = "mul_mat";
  if (k == MulMatKernel::kVec) shader = "mul_mat_vec";
  if (k == MulMatKernel::kTiles) shader = "mul_mm";
  return (id ? std::string(shader) + "_id" : std::string(shader)) + "_" + type_suffix(n.src[0].type);
}

// mul_mat_vec.comp for n's weights, fused (backend/vulkan/fusion.h) with the node after it:
// "add", "swiglu", "geglu", or none ("").
std::string mat_vec_shader(const Node& n, const DeviceTraits& d, const std::string& fused) {
  return std::string("mul_mat_vec_") + (int_dot_product(n, d) ? "idot_" : "") +
         (fused.empty() ? "" : fused + "_") + type_suffix(n.src[0].type);
}

std::string mul_mat_shader(const Node& n, const DeviceTraits& d) {
  const MulMatKernel k = mul_mat_kernel(n, d);
  if (k == MulMatKernel::kTiles && int_dot_product(n, d)) return "mul_mm_idot_" + type_suffix(n.src[0].type);
  if (k != MulMatKernel::kVec) return mul_mat_variant(k, n, false);
  return mat_vec_shader(n, d, n.n_src == 3 ? "add" : "");  // src[2]: the tensor added
}

constexpr int64_t kRowGroup = 64;  // mul_mat.comp's and mul_mat_id.comp's local size

// Invocations per weight row: on GPUs a power of two covering the row's 4-value quads
// (coalesced reads; short rows do not idle most invocations); on CPU devices one, with no
// barrier.
int64_t row_lanes(const Node& n, const DeviceTraits& d) {
  int64_t lanes = 1;
  while (!d.cpu && lanes < kRowGroup && lanes * 4 < n.src[0].ne[0]) lanes *= 2;
  return lanes;
}

Result<uint32_t> encode_mul_mat(const Node& n, const DeviceTraits& d, ParamWriter& w) {
  const int64_t rows = n.src[0].ne[1], cols = n.src[1].ne[1], batches = n.src[1].ne[2];
  switch (mul_mat_kernel(n, d)) {
    case MulMatKernel::kVec: return static_cast<uint32_t>(rows * cols * batches);
    case MulMatKernel::kTiles:
      return static_cast<uint32_t>(ceil_div(rows, kTileRows) * ceil_div(cols, kTileColumns) * batches);
    case MulMatKernel::kColumns: break;
  }
  const int64_t lanes = row_lanes(n, d);
  w.op(0, static_cast<uint32_t>(lanes));
  return static_cast<uint32_t>(ceil_div(rows, kRowGroup / lanes) * ceil_div(cols, kMulMatColumns) * batches);
}

// The most experts per token the MoE kernels take (shaders/moe.glsl slot_expert,
// shaders/moe_gate.comp MAX_K).
constexpr int64_t kMaxSlots = 64;

Status check_slots(int64_t slots) {
  if (slots <= kMaxSlots) return Status::ok();
  return unsupported("vulkan: " + std::to_string(slots) + " experts per token, more than the " +
                     std::to_string(kMaxSlots) + " the MoE kernels take");
}

// MUL_MAT_ID on a GPU: prompts grouped by expert into mul_mm.comp's tiles (ID), other
// block-quantized products mul_mat_vec.comp's rows (ID); otherwise mul_mat_id.comp's.
MulMatKernel mul_mat_id_kernel(const Node& n, const DeviceTraits& d) {
  if (d.cpu) return MulMatKernel::kColumns;
  if (n.dst.ne[2] > kMulMatColumns && n.src[0].ne[0] % kTileDepth == 0) return MulMatKernel::kTiles;
  return dtype_info(n.src[0].type).block_size > 1 ? MulMatKernel::kVec : MulMatKernel::kColumns;
}

std::string mul_mat_id_shader(const Node& n, const DeviceTraits& d) {
  const MulMatKernel k = mul_mat_id_kernel(n, d);
  if (int_dot_product(n, d)) {
    return (k == MulMatKernel::kTiles ? "mul_mm_idot_id_" : "mul_mat_vec_idot_id_") +
           type_suffix(n.src[0].type);
  }
  return mul_mat_variant(k, n, true);
}

// shaders/mul_mm.comp with ID: a workgroup per (row tile, column tile, expert + 1);
// shaders/mul_mat_vec.comp with ID: one per (row, slot, token); shaders/mul_mat_id.comp:
// mul_mat.comp's rows for one (slot, token) each.
Result<uint32_t> encode_mul_mat_id(const Node& n, const DeviceTraits& d, ParamWriter& w) {
  PADDOCK_TRY(check_slots(n.dst.ne[1]));
  const int64_t rows = n.src[0].ne[1], tokens = n.dst.ne[2];
  switch (mul_mat_id_kernel(n, d)) {
    case MulMatKernel::kTiles: {
      const int64_t col_tiles = ceil_div(tokens, kTileColumns);  // an expert takes each token once at most
      w.op(0, static_cast<uint32_t>(col_tiles));
      return static_cast<uint32_t>(ceil_div(rows, kTileRows) * col_tiles * (n.src[0].ne[2] + 1));
    }
    case MulMatKernel::kVec: return static_cast<uint32_t>(rows * n.dst.ne[1] * tokens);
    case MulMatKernel::kColumns: break;
  }
  const int64_t lanes = row_lanes(n, d);
  w.op(0, static_cast<uint32_t>(lanes));
  return static_cast<uint32_t>(ceil_div(n.src[0].ne[1], kRowGroup / lanes) * n.dst.ne[1] * n.dst.ne[2]);
}

Result<uint32_t> encode_moe_gate(const Node& n, const DeviceTraits&, ParamWriter& w) {
  constexpr int64_t kMaxExpertsHere = 1024;  // shaders/moe_gate.comp MAX_EXPERTS
  PADDOCK_TRY(check_slots(n.moe.k));
  if (n.src[0].ne[0] > kMaxExpertsHere || n.moe.k < 1 || n.moe.k > n.src[0].ne[0]) {
    return unsupported("vulkan: moe_gate of " + std::to_string(n.moe.k) + " of " +
                       std::to_string(n.src[0].ne[0]) + " experts (at most 1024 experts)");
  }
  w.op(0, static_cast<uint32_t>(n.moe.k));
  w.op(1, n.moe.gating == MoeGating::kSoftmaxTopK ? 0u : 1u);
  w.op(2, n.moe.norm ? 1u : 0u);
  return static_cast<uint32_t>(n.src[0].ne[1]);
}

// shaders/moe_rows.comp: a workgroup per (256 rows, token).
Result<uint32_t> encode_moe_rows(const Node& n, const DeviceTraits&, ParamWriter&) {
  PADDOCK_TRY(check_slots(n.src[0].ne[1]));
  return static_cast<uint32_t>(ceil_div(n.src[0].ne[0], 256) * n.src[0].ne[2]);
}

Result<uint32_t> encode_norm(const Node& n, const DeviceTraits&, ParamWriter& w) {
  w.op(0, n.scalar);
  return static_cast<uint32_t>(n.src[0].ne[1] * n.src[0].ne[2] * n.src[0].ne[3]);
}

Result<uint32_t> encode_elementwise(const Node& n, const DeviceTraits&, ParamWriter&) {
  return groups_of(n.dst.n_elements(), 256);
}

Result<uint32_t> encode_scale(const Node& n, const DeviceTraits& d, ParamWriter& w) {
  w.op(0, n.scalar);
  return encode_elementwise(n, d, w);
}

Result<uint32_t> encode_swiglu_oai(const Node& n, const DeviceTraits& d, ParamWriter& w) {
  w.op(0, n.scalar);
  w.op(1, n.scalar2);
  return encode_elementwise(n, d, w);
}

// Reads an F32 vector (rope's frequency factors) wherever it lies.
std::vector<float> read_f32(const TensorView& v) {
  std::vector<float> out(static_cast<size_t>(v.ne[0]));
  if (v.data != nullptr) {
    std::memcpy(out.data(), v.data, out.size() * sizeof(float));
  } else {
    v.buffer->get(v.offset, {reinterpret_cast<uint8_t*>(out.data()), out.size() * sizeof(float)});
  }
  return out;
}

// The angles' cosines and sines from rope_angles, as the host backends use them, so kernels
// on every device rotate by the same angles.
std::vector<uint32_t> rope_table(const Node& n) {
  const RopeParams& p = n.rope;
  const int64_t half = p.n_dims / 2;
  const std::vector<float> factors = n.n_src == 2 ? read_f32(n.src[1]) : std::vector<float>();
  RopeParams with_factors = p;
  with_factors.freq_factors = factors;
  std::vector<float> cs(static_cast<size_t>(p.n_dims));  // (cos, sin) per pair
  std::vector<uint32_t> out(n.ids.size() * static_cast<size_t>(half) * 2);
  for (size_t t = 0; t < n.ids.size(); ++t) {
    rope_angles(n.ids[t], with_factors, cs.data());
    std::memcpy(out.data() + t * cs.size(), cs.data(), cs.size() * sizeof(float));
  }
  return out;
}

// A shared table's key: the raw bytes of what the table is made from, which is exact and cheap
// (a decode pass looks one up for every rope and attention node; formatting floats took
// microseconds each and rounded them to six decimals).
class TableKey {
 public:
  explicit TableKey(char kind) : bytes_(1, kind) {}
  template <typename T>
  TableKey& add(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
    return *this;
  }
  TableKey& add(const void* p) { return add(reinterpret_cast<uintptr_t>(p)); }
  const std::string& str() const { return bytes_; }

 private:
  std::string bytes_;
};

Result<uint32_t> encode_rope(const Node& n, const DeviceTraits&, ParamWriter& w) {
  const RopeParams& p = n.rope;
  w.op(0, static_cast<uint32_t>(p.n_dims));
  w.op(1, p.mode == RopeMode::kNeox ? 1u : 0u);
  // q and k of every layer share one pass's positions: one table serves them all.
  TableKey key('r');
  key.add(n.ids.data()).add(n.ids.size()).add(p.n_dims).add(p.freq_base).add(p.freq_scale).add(p.ext_factor);
  key.add(p.attn_factor).add(p.beta_fast).add(p.beta_slow).add(p.n_ctx_orig);
  if (n.n_src == 2) key.add(n.src[1].buffer).add(n.src[1].offset).add(n.src[1].data);
  w.op(2, w.shared_table(key.str(), [&] { return rope_table(n); }));
  return groups_of((n.dst.ne[0] + 1) / 2 * n.dst.ne[1] * n.dst.ne[2], 256);
}

// A table of the node's (positions, ring cells) uploaded once per pass: a graph keeps equal
// tables once (Graph::keep), so every layer's node points at the same one.
uint32_t shared_ids(ParamWriter& w, std::span<const int32_t> ids) {
  const TableKey key = TableKey('i').add(ids.data()).add(ids.size());
  return w.shared_table(key.str(), [&] { return std::vector<uint32_t>(ids.begin(), ids.end()); });
}

// Workgroups per (head, token) for attention.comp: on a GPU, when heads x tokens are too few
// to fill it (decode), enough to come near kFill in all, at most one per 64-cell chunk and
// kMaxSplits; else 1. The partials need scratch counters; without them, 1.
uint32_t attention_splits(const Node& n, const DeviceTraits& d, ParamWriter& w, uint32_t& counters,
                          uint32_t& partials) {
  constexpr int64_t kFill = 512, kMaxSplits = 32, kChunk = 64;  // attention.comp WG
  const int64_t rows = n.src[0].ne[1] * n.src[0].ne[2], chunks = (n.src[1].ne[2] + kChunk - 1) / kChunk;
  if (d.cpu || rows >= kFill || chunks < 2) return 1;
  const auto splits = static_cast<uint32_t>(std::min({chunks, (kFill + rows - 1) / rows, kMaxSplits}));
  const std::optional<uint32_t> first = w.scratch_counters(static_cast<uint32_t>(rows));
  if (!first) return 1;
  counters = *first;
  partials = w.scratch_words(static_cast<uint32_t>(rows * splits * (n.src[2].ne[0] + 2)));
  return splits;
}

Result<uint32_t> encode_attention(const Node& n, const DeviceTraits& d, ParamWriter& w) {
  constexpr int64_t kMaxHeadDim = 256;  // shaders/attention.comp MAX_D
  if (n.src[0].ne[0] > kMaxHeadDim || n.src[2].ne[0] > kMaxHeadDim) {
    return unsupported("vulkan: attention over heads of more than 256 dims");
  }
  w.op(0, shared_ids(w, n.ids));
  w.op(1, n.attn.scale);
  w.op(2, n.attn.softcap);
  w.op(3, n.attn.causal ? 1u : 0u);
  w.op(4, static_cast<uint32_t>(n.attn.window));
  w.op(5, n.n_src == 4 ? 1u : 0u);
  w.op(6, n.attn.cells.empty() ? 0u : shared_ids(w, n.attn.cells));  // a table never starts at word 0
  if (!n.attn.seqs.empty()) {
    w.op(7, w.shared_table(TableKey('s').add(n.attn.seqs.data()).str(), [&] {
      std::vector<uint32_t> cells;  // per token: its sequence's first cell and cell count
      for (const AttnSeq& s : n.attn.seqs) {
        for (int32_t t = 0; t < s.n_tokens; ++t) {
          cells.push_back(static_cast<uint32_t>(s.cell));
          cells.push_back(static_cast<uint32_t>(s.n_cells));
        }
      }
      return cells;
    }));
  }
  uint32_t counters = 0, partials = 0;
  const uint32_t splits = attention_splits(n, d, w, counters, partials);
  w.op(8, splits);
  w.op(9, counters);
  w.op(10, partials);
  return static_cast<uint32_t>(n.src[0].ne[1] * n.src[0].ne[2] * splits);
}

// shaders/copy_words.comp: a copy of one type between contiguous tensors of whole words.
bool word_copy(const Node& n) {
  return n.src[0].type == n.dst.type && n.src[0].is_contiguous() && n.dst.is_contiguous() &&
         n.dst.extent() % 4 == 0 && n.src[0].offset % 4 == 0 && n.dst.offset % 4 == 0;
}

std::string copy_shader(const Node& n, const DeviceTraits&) {
  return word_copy(n) ? "copy_words" : typed("copy", n) + "_" + type_suffix(n.dst.type);
}

Result<uint32_t> encode_copy(const Node& n, const DeviceTraits&, ParamWriter& w) {
  if (word_copy(n)) {
    constexpr uint32_t kMaxGroups = 4096;  // shaders/copy_words.comp strides over the grid
    const auto words = static_cast<int64_t>(n.dst.extent() / 4);
    w.op(0, static_cast<uint32_t>(words));
    return std::min(groups_of(words, 256), kMaxGroups);
  }
  const int64_t block = dtype_info(n.dst.type).block_size;
  return groups_of(n.dst.n_elements() / block, 256);
}

bool attention_kernel_types(std::span<const DType> types) {
  return attention_types(types) && types[1] != DType::kBF16;
}

// A GLU node, or one fused with the two products before it (src: gate weights, their input,
// up weights): mul_mat_vec.comp's GLU variant, a workgroup per row as for the gate product.
std::string glu_shader(const Node& n, const DeviceTraits& d, const std::string& glu) {
  return n.n_src == 3 ? mat_vec_shader(n, d, glu) : glu;
}
Result<uint32_t> encode_glu(const Node& n, const DeviceTraits& d, ParamWriter& w) {
  return n.n_src == 3 ? encode_mul_mat(n, d, w) : encode_elementwise(n, d, w);
}

const std::array<VulkanKernel, kOpCount> kKernels = {{
    {rows_then_f32, [](const Node& n, const DeviceTraits&) { return typed("get_rows", n); }, encode_get_rows},
    {rows_then_f32, mul_mat_shader, encode_mul_mat},
    {all_f32,
     [](const Node& n, const DeviceTraits&) {
       return std::string(n.n_src == 2 ? "rms_norm_mul" : "rms_norm");
     },
     encode_norm},
    {all_f32, [](const Node&, const DeviceTraits&) { return std::string("mul"); }, encode_elementwise},
    {all_f32, [](const Node&, const DeviceTraits&) { return std::string("add"); }, encode_elementwise},
    {all_f32,
     [](const Node& n, const DeviceTraits&) {
       return std::string(n.dst.type == DType::kF16 ? "rope_f16" : "rope");  // fused with a copy
     },
     encode_rope},
    {all_f32, [](const Node& n, const DeviceTraits& d) { return glu_shader(n, d, "swiglu"); }, encode_glu},
    {attention_kernel_types,
     [](const Node& n, const DeviceTraits&) { return "attention_" + type_suffix(n.src[1].type); },
     encode_attention},
    {copy_types, copy_shader, encode_copy},
    {all_f32, [](const Node& n, const DeviceTraits& d) { return glu_shader(n, d, "geglu"); }, encode_glu},
    {all_f32, [](const Node&, const DeviceTraits&) { return std::string("scale"); }, encode_scale},
    {all_f32,
     [](const Node& n, const DeviceTraits&) { return std::string(n.n_src == 2 ? "norm_mul" : "norm"); },
     encode_norm},
    {all_f32, [](const Node&, const DeviceTraits&) { return std::string("gelu"); }, encode_elementwise},
    {all_f32, [](const Node&, const DeviceTraits&) { return std::string("moe_gate"); }, encode_moe_gate},
    {rows_then_f32, mul_mat_id_shader, encode_mul_mat_id},
    {all_f32, [](const Node&, const DeviceTraits&) { return std::string("moe_sum"); }, encode_moe_rows},
    {all_f32, [](const Node&, const DeviceTraits&) { return std::string("add_id"); }, encode_moe_rows},
    {all_f32, [](const Node&, const DeviceTraits&) { return std::string("swiglu_oai"); }, encode_swiglu_oai},
    {all_f32, [](const Node&, const DeviceTraits&) { return std::string("tanh"); }, encode_elementwise},
}};

}  // namespace

bool mat_vec_product(const Node& n, const DeviceTraits& d) {
  return mul_mat_kernel(n, d) == MulMatKernel::kVec;
}

std::string activation_quantizer(const Node& n) {
  const DType t = n.src[0].type;
  if (dtype_info(t).block_size == 256) return "quantize_q8_k";
  return t == DType::kQ4_1 || t == DType::kQ5_1 ? "quantize_q8_1" : "quantize_q8_0";
}

bool int_dot_product(const Node& n, const DeviceTraits& d) {
  const bool glu = (n.op == Op::kSwiglu || n.op == Op::kGeglu) && n.n_src == 3;  // fused: decode's
  const bool quantized_kernel =
      (n.op == Op::kMulMat && mul_mat_kernel(n, d) != MulMatKernel::kColumns) ||
      (n.op == Op::kMulMatId && mul_mat_id_kernel(n, d) != MulMatKernel::kColumns) ||
      (glu && mat_vec_product(n, d));
  return quantized_kernel && int_dot_operands(n, d);
}

const VulkanKernel& vulkan_kernel(Op op) {
  PADDOCK_CHECK(op < Op::kCount);
  return kKernels[static_cast<size_t>(op)];
}

}  // namespace paddock
