// The backend seam: tensor views, the op table, and Backend, which runs whole recorded
// passes (graph.h) on one device. Models record nodes; a backend runs them in order with the
// kernel its table holds for each op, so adding an op = a row in kOpNames + its Graph
// builder + a ref kernel + a row in each backend's table + op-test cases.
// Invariants: views use ggml's order (ne[0] innermost, nb[] byte strides; for block types
// nb[0] is the block size in bytes and rows are whole blocks). A view names the buffer it
// lives in and its byte offset there; `data` is its host address, which only host backends'
// kernels read (a null buffer means plain host memory: weights under test, kernel tests).
// Outputs are F32 unless an op says otherwise and never alias inputs (except add/mul, which
// may write in place). Shape mismatches are caller bugs (PADDOCK_CHECK).
//   Graph g;  TensorView y = g.mul_mat(w, x, "Qcur-0");   // graph.h
//   PADDOCK_TRY(be->compute(g));
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string_view>
#include <vector>

#include "backend/buffer.h"
#include "base/status.h"
#include "tensor/dtype.h"

namespace paddock {

struct TensorView {
  void* data = nullptr;      // host address (host buffers, set when the view is bound)
  Buffer* buffer = nullptr;  // where the bytes live; null: plain host memory at `data`
  size_t offset = 0;         // of byte 0 of the view in `buffer`
  DType type = DType::kF32;
  std::array<int64_t, 4> ne{1, 1, 1, 1};
  std::array<size_t, 4> nb{0, 0, 0, 0};

  // A contiguous view; ne[0] must be a whole number of blocks of `type`.
  static TensorView contiguous(void* data, DType type, std::initializer_list<int64_t> ne);
  // A contiguous view at `offset` in `buffer` (data from the buffer's host address, if any).
  static TensorView in_buffer(Buffer& buffer, size_t offset, DType type, std::initializer_list<int64_t> ne);
  // Weights live in a read-only mapping; backends never write to input views.
  static TensorView weight(const void* data, DType type, std::initializer_list<int64_t> ne) {
    return contiguous(const_cast<void*>(data), type, ne);
  }

  int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  size_t n_bytes() const;  // of a contiguous view
  // Bytes from the view's first byte to just past its last unit (element or block), any strides.
  size_t extent() const;
  bool is_contiguous() const;
  bool same_shape(const TensorView& o) const { return ne == o.ne; }
  // Address of the row (i1, i2, i3): ne[0] elements of `type`.
  uint8_t* row(int64_t i1, int64_t i2 = 0, int64_t i3 = 0) const {
    return static_cast<uint8_t*>(data) + i1 * nb[1] + i2 * nb[2] + i3 * nb[3];
  }
  // Element (i0, i1, i2, i3) of an F32 view.
  float& f32(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const {
    return *reinterpret_cast<float*>(row(i1, i2, i3) + i0 * nb[0]);
  }
  // The same bytes seen with other dimensions (contiguous views only).
  TensorView reshape(std::initializer_list<int64_t> new_ne) const;
  // Byte offset from this view's start, applied to buffer offset and host address alike.
  TensorView shifted(size_t bytes) const;
};

enum class RopeMode : uint8_t {
  kNormal,  // rotates pairs (x[2i], x[2i+1]): Llama
  kNeox,    // rotates pairs (x[i], x[i + n_dims/2]): Qwen2/3, GPT-NeoX
};

// ggml_rope_ext: theta_i = pos * freq_scale * freq_base^(-2i/n_dims) / factor_i, mixed by
// YaRN with the unscaled angle where ext_factor != 0 (backend/rope_angles.h).
struct RopeParams {
  RopeMode mode = RopeMode::kNormal;
  int32_t n_dims = 0;  // leading dims of each head that rotate; the rest pass through
  float freq_base = 10000.0f;
  float freq_scale = 1.0f;
  // Empty, or n_dims/2 divisors (rope_freqs.weight). In a graph node they travel as the
  // rope's second input and the backend fills this in when it runs the node.
  std::span<const float> freq_factors;
  // YaRN (gpt-oss): ext_factor 0 is plain RoPE; otherwise pairs below the beta_fast
  // corner keep their unscaled angle, those past beta_slow take the scaled one (over the
  // n_ctx_orig the model was trained at), and every cos/sin is scaled by attn_factor *
  // (1 + 0.1 ln(1 / freq_scale)).
  float ext_factor = 0.0f;
  float attn_factor = 1.0f;
  float beta_fast = 32.0f;
  float beta_slow = 1.0f;
  int32_t n_ctx_orig = 0;
};

// kAttention's options: llama.cpp's flash_attn_ext with its mask and logit softcap (the
// per-head sinks travel as the node's fourth input).
// One sequence of an attention node over several (AttnParams::seqs): its query tokens
// [token, token + n_tokens) see cells [cell, cell + n_cells) of k and v, that sequence's alone.
struct AttnSeq {
  int32_t token = 0;
  int32_t n_tokens = 0;
  int32_t cell = 0;
  int32_t n_cells = 0;
  bool operator==(const AttnSeq&) const = default;
};

struct AttnParams {
  float scale = 1.0f;    // scores = scale * q.k
  float softcap = 0.0f;  // > 0: scores = softcap * tanh(scores / softcap) (gemma2)
  bool causal = true;    // token t sees cells holding positions <= ids[t]; false: every cell (BERT)
  int32_t window = 0;    // > 0, causal only: ... and positions > ids[t] - window (sliding window)
  // The position each cell holds, -1 for an empty cell (never visible): a ring of
  // sliding-window cells, or cells in any order. Empty: cell j holds position j (j - the
  // sequence's first cell, with seqs). In a graph node the graph keeps a copy.
  std::span<const int32_t> cells;
  // Several sequences in one call, covering the tokens in order (a batch over one cache
  // whose sequences hold disjoint cells). Empty: one sequence, every token over every cell.
  // In a graph node the graph keeps a copy.
  std::span<const AttnSeq> seqs;
};

// How a mixture-of-experts router turns logits into the weights of each token's k experts.
enum class MoeGating : uint8_t {
  kSoftmaxTopK,  // softmax over all experts, keep the top k (qwen3moe; `norm`: rescaled to sum 1)
  kTopKSoftmax,  // keep the top k logits, softmax over them (gpt-oss)
};
struct MoeParams {
  int32_t k = 0;  // experts per token
  MoeGating gating = MoeGating::kSoftmaxTopK;
  bool norm = false;
};

// Whether a token at `pos` sees a cell holding position `cell` (-1: an empty cell).
inline bool attn_visible(const AttnParams& p, int32_t pos, int32_t cell) {
  return cell >= 0 && (!p.causal || cell <= pos) && (p.window == 0 || cell > pos - p.window);
}

// Whether seqs (AttnParams::seqs) cover n_tokens query tokens in order, each over cells
// within [0, n_kv); an empty list always does.
bool attn_seqs_valid(std::span<const AttnSeq> seqs, int64_t n_tokens, int64_t n_kv);

// One sequence's share of an attention call: its query and output rows, its cells, their
// positions, and the params of a single-sequence call over them.
struct AttnSeqViews {
  TensorView q, k, v, dst;
  std::span<const int32_t> pos;
  AttnParams params;
};
// The single-sequence calls an attention call amounts to: one per sequence of p.seqs, or the
// call itself when it has none (what host kernels run a multi-sequence node as).
std::vector<AttnSeqViews> attn_seq_views(const TensorView& q, const TensorView& k, const TensorView& v,
                                         std::span<const int32_t> pos, const AttnParams& p,
                                         const TensorView& dst);

// The op table: names are llama.cpp's (GGML_OP_*) so tensor dumps line up with its own.
enum class Op : uint8_t {
  kGetRows,    // dst[:, i] = src0[:, ids[i]] as F32. src0 [n, n_rows] any type; dst [n, ids.size()]
  kMulMat,     // dst[m, j] = sum_k src0[k, m] * src1[k, j]. src0 [K, M] any type; src1 [K, N, B] F32
  kRmsNorm,    // each row / sqrt(mean(row^2) + eps). F32, same shape
  kMul,        // src0 * src1, src1 repeated along every dim where it is smaller (ne0 % ne1 == 0)
  kAdd,        // src0 + src1, broadcast likewise
  kRope,       // src0 [head_dim, n_head, n_tokens] F32; ids[t] = token t's position; src1 factors
  kSwiglu,     // silu(src0) * src1, all F32 of one shape
  kAttention,  // see below
  kCopy,       // dst = src0 converted to dst's type (F32, F16, BF16, Q8_0, Q4_0), any strides
  kGeglu,      // gelu(src0) * src1 with ggml's GELU (backend/gelu.h), all F32 of one shape
  kScale,      // src0 * scalar, F32, same shape
  kNorm,      // each row: (row - mean) / sqrt(variance + eps) (LayerNorm without its affine). F32, same shape
  kGelu,      // gelu(src0) with ggml's GELU (backend/gelu.h), F32, same shape
  kMoeGate,   // src0 router logits [n_expert, N] -> dst [n_expert, N]: each token's expert weights
              // (MoeParams), 0 off its top k
  kMulMatId,  // see below
  kMoeSum,    // dst[:, t] = sum over slots s of gate weight * src0[:, s, t]. src0 [M, k, N], src1 gate
              // [n_expert, N]
  kAddId,     // dst[:, s, t] = src0[:, s, t] + src1[:, expert of slot s] (the experts' biases).
              // src0 [M, k, N], src1 [M, n_expert], src2 gate [n_expert, N]; slots past the
              // last chosen expert copy src0
  kSwigluOai,  // gpt-oss's clamped SwiGLU: g = min(src0, limit), u = clamp(src1, -limit, limit),
               // dst = g * sigmoid(alpha g) * (u + 1); scalar alpha, scalar2 limit. All F32, one shape
  kTanh,       // tanh(src0) (tanhf), F32, same shape: gemma2's logit softcaps, scale-tanh-scale as ggml
  kCount,
};
// kAttention: attention with grouped KV heads over a KV cache. src0 = q
// [d_k, n_head, n_tokens] F32; src1 = k [d_k, n_head_kv, n_kv], src2 = v [d_v, n_head_kv,
// n_kv] of one KV cache type (is_kv_cache_type; block types need whole blocks per head);
// optional src3 = sinks [n_head] F32; cells 0..n_kv-1 hold the positions AttnParams::cells
// says (cell = position when it is empty); which cells token t sees: AttnParams (causal:
// the cell's position <= ids[t]); query head h uses kv head h / (n_head /
// n_head_kv). dst [d_v, n_head, n_tokens] = softmax(scores) v, where a sink adds
// exp(sinks[h]) to the softmax's denominator (gpt-oss: attention that may go nowhere).
// With AttnParams::seqs each sequence's tokens see only its own cells: the same as one call
// per sequence on the sub-views (attn_seq_views), in one node.
// kMulMatId: each token's chosen experts' matrices (ggml's mul_mat_id). src0 = experts [K,
// M, n_expert] any type; src1 = x [K, 1 or k, N] F32; src2 = gate [n_expert, N] (kMoeGate's
// output). Token t's slots s < k hold its experts in moe_slots order (backend/moe.h);
// dst[:, s, t] = src0[:, :, expert] . x[:, s or 0, t], and 0 past its last chosen expert.
inline constexpr size_t kOpCount = static_cast<size_t>(Op::kCount);
inline constexpr std::array<std::string_view, kOpCount> kOpNames = {
    "GET_ROWS",       "MUL_MAT", "RMS_NORM", "MUL",        "ADD",  "ROPE", "SWIGLU",
    "FLASH_ATTN_EXT", "CPY",     "GEGLU",    "SCALE",      "NORM", "GELU", "TOPK_MOE",
    "MUL_MAT_ID",     "MOE_SUM", "ADD_ID",   "SWIGLU_OAI", "TANH",
};
static_assert(kOpNames.size() == kOpCount, "one name per op");
inline std::string_view op_name(Op op) { return kOpNames[static_cast<size_t>(op)]; }

// The types a KV cache (and so attention's k and v) may hold: F16, F32, Q8_0, Q4_0.
bool is_kv_cache_type(DType t);

class Graph;
struct Node;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // The device its kernels run on: activations and KV cells of its layers live there.
  virtual Device& device() = 0;
  // Whether `op` runs with these input types (in the op's input order).
  virtual bool supports(Op op, std::span<const DType> types) const = 0;
  // Runs g's nodes in order. `after`, when set, sees each node once its output is written
  // (tensor dumps read it there: later nodes may reuse its memory). kUnsupported names the
  // first node whose op and types this backend lacks; nothing runs then.
  Status compute(const Graph& g, const std::function<void(const Node&)>& after = {});
  // The same over a run of a graph's nodes (a split backend hands each backend its runs).
  // `results`: the outputs of these nodes that others read afterwards (later nodes on other
  // backends, the caller): a backend whose nodes compute apart from the views' memory (a GPU
  // mirroring a host compute buffer) must leave their bytes there; the rest may stay apart.
  virtual Status run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                           std::span<const TensorView> results) = 0;
  // The backend that computes a layer's nodes and holds its weights and KV cells: layer -1
  // is the input (token embeddings), n_layer the output (final norm and projection). A
  // single backend computes them all; a split backend (split_backend.h) answers per layer.
  virtual Backend& for_layer(int64_t layer) {
    static_cast<void>(layer);
    return *this;
  }

  // Promises that `bytes` (a model file's tensor data) stay mapped and unchanged for this
  // backend's lifetime, so it may keep faster layouts of weight matrices that lie inside
  // them. release_pages: the bytes are a read-only file mapping, so pages whose weights were
  // copied may be dropped from memory (touching them again re-reads the file).
  virtual void adopt_weight_file(std::span<const uint8_t> bytes, bool release_pages) {
    static_cast<void>(bytes);
    static_cast<void>(release_pages);
  }
  // w, a weight inside adopted bytes, will be src0 of `use` (mul_mat's matrix, get_rows'
  // table) or an F32 parameter (use = Op::kCount): the backend may build its faster layout
  // or its device copy now, at load time, instead of at the first pass that reads it.
  virtual void prepare_weight(const TensorView& w, Op use) {
    static_cast<void>(w);
    static_cast<void>(use);
  }
};

}  // namespace paddock
