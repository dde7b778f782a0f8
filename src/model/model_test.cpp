// Models built here with the GGUF writer: a valid tiny model of each architecture computes
// the same logits in one batch as one token at a time (KV cache and causal mask), and
// malformed or unsupported files fail with a message naming the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/graph.h"
#include "backend/ref/ref_backend.h"
#include "gguf/writer.h"
#include "model/registry.h"
#include "model/weights.h"

namespace paddock {
namespace {

struct Spec {
  std::string arch = "llama";
  int64_t n_embd = 16, n_layer = 2, n_head = 4, n_head_kv = 2, n_ff = 24, n_vocab = 40;
  int64_t head_dim = 0;                                // explicit key_length when nonzero
  std::vector<int32_t> n_ff_layers, n_head_kv_layers;  // per-layer array keys when not empty
  bool qkv_bias = false, qk_norm = false, tied = false, rope_freqs = false;
  bool longrope = false;  // phi3's short and long factors, original context 16, attn_factor 1.19
  int64_t n_expert = 0, n_expert_used = 0;  // > 0: a mixture of experts of n_ff each in place of the FFN
  std::map<std::string, std::vector<int64_t>> shape_override;
  std::map<std::string, DType> type_override;
  std::set<std::string> omit;
  std::set<std::string> omit_keys;
};

class TinyModel {
 public:
  explicit TinyModel(const Spec& s, std::unique_ptr<Backend> backend = make_ref_backend())
      : backend_(std::move(backend)) {
    gguf::Writer w;
    const std::string a = s.arch;
    w.set_string("general.architecture", a);
    auto key = [&](const std::string& k, uint32_t v) {
      if (!s.omit_keys.count(k)) w.set_u32(a + "." + k, v);
    };
    key("embedding_length", static_cast<uint32_t>(s.n_embd));
    key("block_count", static_cast<uint32_t>(s.n_layer));
    key("attention.head_count", static_cast<uint32_t>(s.n_head));
    key("attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
    key("feed_forward_length", static_cast<uint32_t>(s.n_ff));
    if (!s.n_ff_layers.empty()) w.set_array_i32(a + ".feed_forward_length", s.n_ff_layers);
    if (!s.n_head_kv_layers.empty()) w.set_array_i32(a + ".attention.head_count_kv", s.n_head_kv_layers);
    key("context_length", 64);
    if (s.n_expert > 0) {
      key("expert_count", static_cast<uint32_t>(s.n_expert));
      key("expert_used_count", static_cast<uint32_t>(s.n_expert_used));
    }
    w.set_f32(a + ".attention.layer_norm_rms_epsilon", 1e-5f);
    w.set_f32(a + ".rope.freq_base", 10000.0f);
    const bool gptoss = a == "gpt-oss";  // sinks, biases everywhere, windows on even layers, YaRN
    if (gptoss) {
      key("attention.sliding_window", 3);
      w.set_string(a + ".rope.scaling.type", "yarn");
      w.set_f32(a + ".rope.scaling.factor", 4.0f);
      key("rope.scaling.original_context_length", 16);
    }
    const int64_t hd = s.head_dim ? s.head_dim : s.n_embd / s.n_head;
    if (s.head_dim) key("attention.key_length", static_cast<uint32_t>(hd));
    const int64_t nq = s.n_head * hd;
    add(w, s, "token_embd.weight", {s.n_embd, s.n_vocab}, 0.5f);
    add(w, s, "output_norm.weight", {s.n_embd}, 0.1f, 1.0f);
    if (!s.tied) add(w, s, "output.weight", {s.n_embd, s.n_vocab}, 0.3f);
    if (s.rope_freqs) add(w, s, "rope_freqs.weight", {hd / 2}, 0.5f, 2.0f);
    if (s.longrope) {
      add(w, s, "rope_factors_short.weight", {hd / 2}, 0.5f, 2.0f);
      add(w, s, "rope_factors_long.weight", {hd / 2}, 3.0f, 8.0f);
      key("rope.scaling.original_context_length", 16);
      w.set_f32(a + ".rope.scaling.attn_factor", 1.19f);
    }
    const bool phi3 = a == "phi3";      // Q, K, V fused in attn_qkv; gate and up in ffn_up
    const bool gemma2 = a == "gemma2";  // sandwich norms, windows on even layers, both softcaps
    if (gemma2) {
      key("attention.sliding_window", 3);
      if (!s.omit_keys.count("attn_logit_softcapping")) w.set_f32(a + ".attn_logit_softcapping", 1.0f);
      if (!s.omit_keys.count("final_logit_softcapping")) w.set_f32(a + ".final_logit_softcapping", 0.5f);
    }
    for (int64_t l = 0; l < s.n_layer; ++l) {
      const std::string p = "blk." + std::to_string(l) + ".";
      const auto li = static_cast<size_t>(l);
      const int64_t n_ff = li < s.n_ff_layers.size() && s.n_ff_layers[li] > 0 ? s.n_ff_layers[li] : s.n_ff;
      const int64_t nk = (li < s.n_head_kv_layers.size() ? s.n_head_kv_layers[li] : s.n_head_kv) * hd;
      add(w, s, p + "attn_norm.weight", {s.n_embd}, 0.1f, 1.0f);
      if (phi3) {
        add(w, s, p + "attn_qkv.weight", {s.n_embd, nq + 2 * nk}, 0.3f);
      } else {
        add(w, s, p + "attn_q.weight", {s.n_embd, nq}, 0.3f);
        add(w, s, p + "attn_k.weight", {s.n_embd, nk}, 0.3f);
        add(w, s, p + "attn_v.weight", {s.n_embd, nk}, 0.3f);
      }
      add(w, s, p + "attn_output.weight", {nq, s.n_embd}, 0.3f);
      if (s.qkv_bias) {
        add(w, s, p + "attn_q.bias", {nq}, 0.2f);
        add(w, s, p + "attn_k.bias", {nk}, 0.2f);
        add(w, s, p + "attn_v.bias", {nk}, 0.2f);
      }
      if (gptoss) {
        add(w, s, p + "attn_output.bias", {s.n_embd}, 0.2f);
        add(w, s, p + "attn_sinks.weight", {s.n_head}, 1.0f);
      }
      if (s.qk_norm) {
        add(w, s, p + "attn_q_norm.weight", {hd}, 0.1f, 1.0f);
        add(w, s, p + "attn_k_norm.weight", {hd}, 0.1f, 1.0f);
      }
      add(w, s, p + (gptoss ? "post_attention_norm.weight" : "ffn_norm.weight"), {s.n_embd}, 0.1f, 1.0f);
      if (gemma2) {
        add(w, s, p + "post_attention_norm.weight", {s.n_embd}, 0.1f, 1.0f);
        add(w, s, p + "post_ffw_norm.weight", {s.n_embd}, 0.1f, 1.0f);
      }
      if (s.n_expert > 0) {
        add(w, s, p + "ffn_gate_inp.weight", {s.n_embd, s.n_expert}, 0.5f);
        add(w, s, p + "ffn_gate_exps.weight", {s.n_embd, n_ff, s.n_expert}, 0.3f);
        add(w, s, p + "ffn_up_exps.weight", {s.n_embd, n_ff, s.n_expert}, 0.3f);
        add(w, s, p + "ffn_down_exps.weight", {n_ff, s.n_embd, s.n_expert}, 0.3f);
        if (gptoss) {
          add(w, s, p + "ffn_gate_inp.bias", {s.n_expert}, 0.3f);
          add(w, s, p + "ffn_gate_exps.bias", {n_ff, s.n_expert}, 0.3f);
          add(w, s, p + "ffn_up_exps.bias", {n_ff, s.n_expert}, 0.3f);
          add(w, s, p + "ffn_down_exps.bias", {s.n_embd, s.n_expert}, 0.3f);
        }
        continue;
      }
      if (!phi3) add(w, s, p + "ffn_gate.weight", {s.n_embd, n_ff}, 0.3f);
      add(w, s, p + "ffn_up.weight", {s.n_embd, phi3 ? 2 * n_ff : n_ff}, 0.3f);
      add(w, s, p + "ffn_down.weight", {n_ff, s.n_embd}, 0.3f);
    }
    Result<std::vector<uint8_t>> bytes = w.write_buffer();
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    if (bytes.ok()) bytes_ = std::move(*bytes);
  }

  Result<std::unique_ptr<Model>> load() {
    Result<std::unique_ptr<gguf::File>> f = gguf::File::parse(bytes_);
    if (!f.ok()) return f.status();
    file_ = std::move(*f);
    return load_model(*file_, *backend_);
  }
  Backend& backend() { return *backend_; }
  const gguf::File& file() const { return *file_; }

 private:
  void add(gguf::Writer& w, const Spec& s, const std::string& name, std::vector<int64_t> ne, float scale,
           float center = 0.0f) {
    if (s.omit.count(name)) return;
    if (auto it = s.shape_override.find(name); it != s.shape_override.end()) ne = it->second;
    DType type = DType::kF32;
    if (auto it = s.type_override.find(name); it != s.type_override.end()) type = it->second;
    int64_t n = 1;
    for (int64_t d : ne) n *= d;
    std::uniform_real_distribution<float> dist(center - scale, center + scale);
    std::vector<uint8_t> data(static_cast<size_t>(n) * dtype_info(type).type_size);
    if (type == DType::kF32) {
      for (int64_t i = 0; i < n; ++i) {
        const float v = dist(rng_);
        std::memcpy(&data[static_cast<size_t>(i) * 4], &v, 4);
      }
    }
    const Status st = w.add_tensor(name, type, std::span<const int64_t>(ne), data);
    EXPECT_TRUE(st.is_ok()) << st.message();
  }

  std::mt19937 rng_{42};
  std::vector<uint8_t> bytes_;
  std::unique_ptr<gguf::File> file_;
  std::unique_ptr<Backend> backend_;
};

std::vector<int32_t> iota_positions(int64_t first, size_t n) {
  std::vector<int32_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(first + static_cast<int64_t>(i));
  return p;
}

// All-token logits of one batch equal the logits of feeding the tokens one at a time.
void expect_batch_matches_incremental(const Spec& spec) {
  TinyModel tm(spec);
  Result<std::unique_ptr<Model>> m = tm.load();
  ASSERT_TRUE(m.ok()) << m.status().message();
  const Model& model = **m;
  const int64_t n_vocab = model.hparams().n_vocab;
  ASSERT_EQ(n_vocab, spec.n_vocab);
  const std::vector<int32_t> tokens = {1, 7, 3, 39, 0, 12};
  for (DType kv_type : {DType::kF32, DType::kF16}) {
    Result<KvCache> kv = KvCache::create(kv_config(model.hparams(), 16, kv_type), host_device());
    ASSERT_TRUE(kv.ok());
    Result<std::vector<float>> all =
        model.forward(tm.backend(), *kv, tokens, iota_positions(0, tokens.size()), true);
    ASSERT_TRUE(all.ok()) << all.status().message();
    ASSERT_EQ(all->size(), tokens.size() * static_cast<size_t>(n_vocab));
    EXPECT_EQ(kv->used(), static_cast<int64_t>(tokens.size()));
    kv->clear();
    double spread = 0;
    for (size_t t = 0; t < tokens.size(); ++t) {
      const std::vector<int32_t> pos = iota_positions(static_cast<int64_t>(t), 1);
      Result<std::vector<float>> one = model.forward(tm.backend(), *kv, std::span(&tokens[t], 1), pos, false);
      ASSERT_TRUE(one.ok()) << one.status().message();
      ASSERT_EQ(one->size(), static_cast<size_t>(n_vocab));
      for (int64_t i = 0; i < n_vocab; ++i) {
        const float batched = (*all)[t * static_cast<size_t>(n_vocab) + static_cast<size_t>(i)];
        EXPECT_TRUE(std::isfinite(batched));
        EXPECT_NEAR((*one)[i], batched, 1e-4) << "token " << t << " logit " << i;
        spread = std::max(spread, std::abs(double(batched) - (*all)[static_cast<size_t>(i)]));
      }
    }
    EXPECT_GT(spread, 1e-3);  // later tokens really do see different contexts
  }
}

TEST(Model, LlamaBatchEqualsIncremental) { expect_batch_matches_incremental(Spec{}); }
TEST(Model, LlamaTiedOutputWithRopeFactors) {
  expect_batch_matches_incremental(Spec{.tied = true, .rope_freqs = true});
}
TEST(Model, Qwen2WithBiases) { expect_batch_matches_incremental(Spec{.arch = "qwen2", .qkv_bias = true}); }
TEST(Model, Qwen3WithQkNormAndExplicitHeadDim) {
  expect_batch_matches_incremental(Spec{.arch = "qwen3", .head_dim = 6, .qk_norm = true});
}
TEST(Model, Qwen3MoeRoutesEachTokenAsInABatch) {
  expect_batch_matches_incremental(
      Spec{.arch = "qwen3moe", .qk_norm = true, .n_expert = 6, .n_expert_used = 2});
}
TEST(Model, GptOssWithSinksWindowsYarnAndExpertBiases) {
  expect_batch_matches_incremental(
      Spec{.arch = "gpt-oss", .qkv_bias = true, .n_expert = 6, .n_expert_used = 2});
}
// The cpu backend's grouped expert products (and biases, clamped SwiGLU) equal ref's.
void expect_cpu_matches_ref(const Spec& spec) {
  TinyModel ref(spec);
  Result<std::unique_ptr<Backend>> cpu_be = make_cpu_backend(2);
  ASSERT_TRUE(cpu_be.ok());
  TinyModel cpu(spec, std::move(*cpu_be));
  Result<std::unique_ptr<Model>> mr = ref.load();
  Result<std::unique_ptr<Model>> mc = cpu.load();
  ASSERT_TRUE(mr.ok() && mc.ok()) << mr.status().message() << mc.status().message();
  const std::vector<int32_t> tokens = {1, 7, 3, 39, 0, 12, 5, 5, 21};
  Result<KvCache> kv_ref = KvCache::create(kv_config((*mr)->hparams(), 16, DType::kF32), host_device());
  Result<KvCache> kv_cpu = KvCache::create(kv_config((*mc)->hparams(), 16, DType::kF32), host_device());
  ASSERT_TRUE(kv_ref.ok() && kv_cpu.ok());
  Result<std::vector<float>> a =
      (*mr)->forward(ref.backend(), *kv_ref, tokens, iota_positions(0, tokens.size()), true);
  Result<std::vector<float>> b =
      (*mc)->forward(cpu.backend(), *kv_cpu, tokens, iota_positions(0, tokens.size()), true);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->size(), b->size());
  for (size_t i = 0; i < a->size(); ++i) EXPECT_NEAR((*a)[i], (*b)[i], 1e-3) << "logit " << i;
}
TEST(Model, Qwen3MoeOnTheCpuBackendGroupsTokensByExpertAsRefDoes) {
  expect_cpu_matches_ref(Spec{.arch = "qwen3moe", .qk_norm = true, .n_expert = 6, .n_expert_used = 2});
}
TEST(Model, GptOssOnTheCpuBackendAsRef) {
  expect_cpu_matches_ref(Spec{.arch = "gpt-oss", .qkv_bias = true, .n_expert = 6, .n_expert_used = 2});
}
TEST(Model, Phi3FusedWithLongRope) {
  expect_batch_matches_incremental(Spec{.arch = "phi3", .longrope = true});
}

// phi3's LongRoPE: the short factors up to the original context (16 cells), the long ones
// beyond it, as llama.cpp chooses by the context per sequence; the magnitude factor and
// the original context are read without a scaling type.
TEST(Model, Phi3TakesTheLongRopeFactorsBeyondTheOriginalContext) {
  TinyModel tm(Spec{.arch = "phi3", .longrope = true});
  Result<std::unique_ptr<Model>> m = tm.load();
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FLOAT_EQ((*m)->hparams().yarn_attn_factor, 1.19f);
  EXPECT_EQ((*m)->hparams().n_ctx_orig_yarn, 16);
  const std::vector<int32_t> tokens = {1, 7, 3, 39, 0, 12};
  const auto logits = [&](int64_t n_ctx) {
    Result<KvCache> kv = KvCache::create(kv_config((*m)->hparams(), n_ctx, DType::kF32), host_device());
    EXPECT_TRUE(kv.ok());
    Result<std::vector<float>> out =
        (*m)->forward(tm.backend(), *kv, tokens, iota_positions(0, tokens.size()), false);
    EXPECT_TRUE(out.ok()) << out.status().message();
    return out.ok() ? *out : std::vector<float>{};
  };
  const std::vector<float> short8 = logits(8), short16 = logits(16), long32 = logits(32);
  EXPECT_EQ(short8, short16);
  double diff = 0;
  for (size_t i = 0; i < short16.size() && i < long32.size(); ++i)
    diff = std::max(diff, double(std::abs(short16[i] - long32[i])));
  EXPECT_GT(diff, 1e-3);
}

TEST(ModelErrors, Phi3LongRopeNeedsBothFactorSets) {
  TinyModel tm(Spec{.arch = "phi3", .longrope = true, .omit = {"rope_factors_long.weight"}});
  const Result<std::unique_ptr<Model>> m = tm.load();
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("rope_factors_long.weight"), std::string::npos) << m.status().message();
}

TEST(Model, Gemma2WithWindowsAndSoftcaps) {
  expect_batch_matches_incremental(Spec{.arch = "gemma2", .n_layer = 3});
}

// gemma2's final cap bounds every logit (0.5 here); without the keys, llama.cpp's defaults
// hold (caps 50 and 30, a window of 4096 on even layers).
TEST(Model, Gemma2CapsTheLogitsAndDefaultsAsLlamaCpp) {
  TinyModel tm(Spec{.arch = "gemma2", .n_layer = 3});
  Result<std::unique_ptr<Model>> m = tm.load();
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ((*m)->hparams().layer(0).window, 3);
  EXPECT_EQ((*m)->hparams().layer(1).window, 0);
  EXPECT_EQ((*m)->hparams().layer(2).window, 3);
  const std::vector<int32_t> tokens = {1, 7, 3, 39, 0, 12};
  Result<KvCache> kv = KvCache::create(kv_config((*m)->hparams(), 16, DType::kF32), host_device());
  ASSERT_TRUE(kv.ok());
  Result<std::vector<float>> out =
      (*m)->forward(tm.backend(), *kv, tokens, iota_positions(0, tokens.size()), true);
  ASSERT_TRUE(out.ok()) << out.status().message();
  float lo = 1, hi = -1;
  for (float v : *out) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GE(lo, -0.5f);
  EXPECT_LE(hi, 0.5f);
  EXPECT_GT(hi - lo, 0.1f);
  TinyModel defaults(
      Spec{.arch = "gemma2",
           .omit_keys = {"attention.sliding_window", "attn_logit_softcapping", "final_logit_softcapping"}});
  Result<std::unique_ptr<Model>> d = defaults.load();
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ((*d)->hparams().attn_softcap, 50.0f);
  EXPECT_EQ((*d)->hparams().final_softcap, 30.0f);
  EXPECT_EQ((*d)->hparams().layer(0).window, 4096);
  EXPECT_EQ((*d)->hparams().layer(1).window, 0);
}

TEST(Model, PerLayerFfnSizes) { expect_batch_matches_incremental(Spec{.n_ff_layers = {24, 40}}); }
TEST(Model, PerLayerKvHeads) { expect_batch_matches_incremental(Spec{.n_head_kv_layers = {4, 1}}); }

// The same sizes as one value or as one per layer: the same model, the same logits.
TEST(Model, PerLayerArrayOfEqualSizesEqualsScalar) {
  std::vector<float> logits[2];
  const Spec specs[2] = {Spec{}, Spec{.n_ff_layers = {24, 24}, .n_head_kv_layers = {2, 2}}};
  for (int i = 0; i < 2; ++i) {
    TinyModel tm(specs[i]);
    Result<std::unique_ptr<Model>> m = tm.load();
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ((*m)->hparams().layer(1).n_ff, 24);
    Result<KvCache> kv = KvCache::create(kv_config((*m)->hparams(), 8, DType::kF32), host_device());
    ASSERT_TRUE(kv.ok());
    const std::vector<int32_t> tokens = {3, 9, 27};
    Result<std::vector<float>> out = (*m)->forward(tm.backend(), *kv, tokens, iota_positions(0, 3), true);
    ASSERT_TRUE(out.ok()) << out.status().message();
    logits[i] = *out;
  }
  EXPECT_EQ(logits[0], logits[1]);
}

// What fit_offload weighs: each layer's tensors, and the output's (token_embd too when tied).
TEST(WeightBinder, OffloadWeightsPerLayerAndOutput) {
  for (bool tied : {false, true}) {
    TinyModel tm(Spec{.tied = tied});
    ASSERT_TRUE(tm.load().ok());
    const FitRequest r = offload_weights(tm.file(), 2);
    // A layer's F32 tensors: two norms of 16, wq and wo 16x16, wk and wv 16x8, three FFN 16x24.
    const uint64_t layer = 4 * (2 * 16 + 2 * 16 * 16 + 2 * 16 * 8 + 3 * 16 * 24);
    EXPECT_EQ(r.layer_weights, (std::vector<uint64_t>{layer, layer}));
    const uint64_t head = 4 * (16 + 16 * 40);  // output_norm, output (or token_embd, tied)
    EXPECT_EQ(r.output_weights, head) << (tied ? "tied" : "untied");
  }
}

// The binder's seams: n-D shapes with or without trailing 1s, a second binding of one file
// tensor only when declared duplicated, optional tensors.
TEST(WeightBinder, ShapesDuplicatesAndOptional) {
  TinyModel tm(Spec{});
  ASSERT_TRUE(tm.load().ok());
  std::unique_ptr<Buffer> bytes = wrap_host_memory(tm.file().bytes());
  WeightBinder b(tm.file(), tm.backend(), *bytes);
  Result<TensorView> gate = b.tensor(blk(0, "ffn_gate.weight"), {16, 24, 1, 1}, Use::kMulMat);
  ASSERT_TRUE(gate.ok()) << gate.status().message();
  EXPECT_EQ(gate->ne, (std::array<int64_t, 4>{16, 24, 1, 1}));
  EXPECT_EQ(gate->buffer, bytes.get());
  EXPECT_EQ(b.tensor(blk(0, "ffn_up.weight"), {16, 12, 2}, Use::kMulMat).status().message(),
            "tensor blk.0.ffn_up.weight: expected [16, 12, 2], found [16, 24]");
  EXPECT_EQ(b.tensor(blk(0, "ffn_gate.weight"), {16, 24}, Use::kMulMat).status().code(), Code::kInternal);
  EXPECT_TRUE(b.tensor(blk(0, "ffn_gate.weight"), {16, 24}, Use::kGetRows, Bind::kDuplicated).ok());
  Result<std::optional<TensorView>> absent = b.optional("blk.0.attn_q.bias", {16});
  ASSERT_TRUE(absent.ok());
  EXPECT_FALSE(absent->has_value());
  EXPECT_EQ(b.optional(blk(1, "ffn_norm.weight"), {15}).status().message(),
            "tensor blk.1.ffn_norm.weight: expected [15], found [16]");
}

// The ref backend, recording the weight seams: which matrices the loader hands to
// prepare_weight for mul_mat, and whether the backend adopted the file's bytes first.
class RecordingBackend final : public Backend {
 public:
  std::string_view name() const override { return inner_->name(); }
  bool supports(Op op, std::span<const DType> types) const override { return inner_->supports(op, types); }
  Device& device() override { return inner_->device(); }
  Status run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                   std::span<const TensorView> results) override {
    return inner_->run_nodes(nodes, after, results);
  }
  void adopt_weight_file(std::span<const uint8_t> bytes, bool) override { pinned_ = bytes; }
  // Weights name the buffer over the adopted bytes; offsets count from their start.
  void prepare_weight(const TensorView& w, Op use) override {
    if (use != Op::kMulMat) return;
    if (pinned_.empty() || w.buffer == nullptr || w.buffer->size() != pinned_.size() ||
        w.offset >= pinned_.size()) {
      unpinned_ = true;
    }
    prepared_.insert(w.offset);
  }

  std::span<const uint8_t> pinned_;
  std::set<size_t> prepared_;
  bool unpinned_ = false;

 private:
  std::unique_ptr<Backend> inner_ = make_ref_backend();
};

// Every matrix the model multiplies is prepared for mul_mat at load, inside pinned bytes; an
// embedding table only read by get_rows is not (the cpu backend would interleave it for nothing).
TEST(Model, LoadPreparesEveryMulMatWeightInPinnedBytes) {
  for (bool tied : {false, true}) {
    auto backend = std::make_unique<RecordingBackend>();
    RecordingBackend& rec = *backend;
    TinyModel tm(Spec{.tied = tied}, std::move(backend));
    Result<std::unique_ptr<Model>> m = tm.load();
    ASSERT_TRUE(m.ok()) << m.status().message();
    const gguf::File& f = tm.file();
    EXPECT_FALSE(rec.unpinned_);
    std::set<std::string> prepared;
    for (const gguf::TensorInfo& t : f.tensors()) {
      const auto offset = static_cast<size_t>(f.tensor_data(t).data() - f.bytes().data());
      if (rec.prepared_.count(offset)) prepared.insert(std::string(t.name));
    }
    std::set<std::string> want = {"output.weight"};
    for (const char* l : {"blk.0.", "blk.1."}) {
      for (const char* w : {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"})
        want.insert(std::string(l) + w + ".weight");
    }
    if (tied) {
      want.erase("output.weight");
      want.insert("token_embd.weight");
    }
    EXPECT_EQ(prepared, want) << "tied " << tied;
  }
}

// The ref backend without products of F16 matrices or of experts' stacks: a GPU backend that
// lacks a weight type's kernel.
class NoF16Products final : public Backend {
 public:
  std::string_view name() const override { return "no-f16"; }
  bool supports(Op op, std::span<const DType> types) const override {
    if (op == Op::kMulMatId || (op == Op::kMulMat && types[0] == DType::kF16)) return false;
    return inner_->supports(op, types);
  }
  Device& device() override { return inner_->device(); }
  Status run_nodes(std::span<const Node> nodes, const std::function<void(const Node&)>& after,
                   std::span<const TensorView> results) override {
    return inner_->run_nodes(nodes, after, results);
  }

 private:
  std::unique_ptr<Backend> inner_ = make_ref_backend();
};

// num_gpu's count of layers from the top (then the output) whose matrices a backend multiplies.
TEST(OffloadableLayers, StopBelowTheHighestLayerWithATypeTheBackendLacks) {
  const auto limit = [](const Spec& spec, std::string* blocker) {
    TinyModel tm(spec);
    EXPECT_TRUE(tm.load().ok());
    return offloadable_layers(tm.file(), spec.n_layer, NoF16Products(), blocker);
  };
  std::string blocker = "unset";
  EXPECT_EQ(limit(Spec{.n_layer = 3}, &blocker), 4);  // every layer and the output
  EXPECT_EQ(blocker, "");
  EXPECT_EQ(limit(Spec{.n_layer = 3, .type_override = {{"blk.0.ffn_down.weight", DType::kF16}}}, &blocker),
            2);
  EXPECT_EQ(blocker, "blk.0.ffn_down.weight (F16)");
  EXPECT_EQ(limit(Spec{.n_layer = 3,
                       .type_override = {{"blk.0.attn_q.weight", DType::kF16},
                                         {"blk.1.attn_v.weight", DType::kF16}}},
                  &blocker),
            1);
  EXPECT_EQ(blocker, "blk.1.attn_v.weight (F16)");
  EXPECT_EQ(limit(Spec{.n_layer = 3, .type_override = {{"blk.2.ffn_up.weight", DType::kF16}}}, &blocker), 0);
  EXPECT_EQ(limit(Spec{.n_layer = 3, .type_override = {{"output.weight", DType::kF16}}}, &blocker), 3);
  EXPECT_EQ(blocker, "output.weight (F16)");
  // The token embeddings are gathered on the CPU, unless the output multiplies by them.
  EXPECT_EQ(limit(Spec{.n_layer = 3, .type_override = {{"token_embd.weight", DType::kF16}}}, &blocker), 4);
  EXPECT_EQ(limit(Spec{.n_layer = 3, .tied = true, .type_override = {{"token_embd.weight", DType::kF16}}},
                  &blocker),
            3);
  EXPECT_EQ(limit(Spec{.arch = "qwen3moe", .qk_norm = true, .n_expert = 6, .n_expert_used = 2}, &blocker), 0);
  EXPECT_EQ(blocker, "blk.1.ffn_gate_exps.weight (F32)");
}

Status load_error(const Spec& spec) {
  TinyModel tm(spec);
  return tm.load().status();
}

TEST(ModelErrors, UnknownArchitectureNamesTheSupportedOnes) {
  const Status s = load_error(Spec{.arch = "gemma"});
  EXPECT_EQ(s.code(), Code::kUnsupported);
  EXPECT_EQ(
      s.message(),
      "architecture \"gemma\" is not supported (supported: bert, gemma2, gemma3, gpt-oss, llama, nomic-bert, "
      "phi3, qwen2, qwen3, qwen3moe)");
}

TEST(ModelErrors, WrongShapeNamesTensorAndShapes) {
  const Status s = load_error(Spec{.shape_override = {{"blk.1.attn_q.weight", {16, 8}}}});
  EXPECT_EQ(s.code(), Code::kCorrupt);
  EXPECT_EQ(s.message(), "tensor blk.1.attn_q.weight: expected [16, 16], found [16, 8]");
}

TEST(ModelErrors, UnsupportedTypeNamesTypeAndTensor) {
  const Status s = load_error(Spec{.type_override = {{"blk.0.ffn_up.weight", DType::kF64}}});
  EXPECT_EQ(s.code(), Code::kUnsupported);
  EXPECT_NE(s.message().find("blk.0.ffn_up.weight"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("F64"), std::string::npos) << s.message();
}

TEST(ModelErrors, NormMustBeF32) {
  const Status s = load_error(Spec{.type_override = {{"output_norm.weight", DType::kF16}}});
  EXPECT_EQ(s.message(), "tensor output_norm.weight: expected type F32, found F16");
}

TEST(ModelErrors, MissingTensorAndKey) {
  EXPECT_EQ(load_error(Spec{.omit = {"blk.1.ffn_up.weight"}}).message(),
            "missing tensor blk.1.ffn_up.weight");
  EXPECT_EQ(load_error(Spec{.arch = "qwen2"}).message(), "missing tensor blk.0.attn_q.bias");
  EXPECT_EQ(load_error(Spec{.omit_keys = {"block_count"}}).message(), "missing key llama.block_count");
}

TEST(ModelErrors, InconsistentHeads) {
  const Status s = load_error(Spec{.n_head = 4, .n_head_kv = 3});
  EXPECT_EQ(s.code(), Code::kCorrupt);
  EXPECT_NE(s.message().find("head_count_kv"), std::string::npos) << s.message();
}

TEST(ModelErrors, PerLayerKeys) {
  EXPECT_EQ(load_error(Spec{.n_ff_layers = {24, 24, 24}}).message(),
            "key llama.feed_forward_length: expected one value or 2 (one per layer), found 3");
  EXPECT_EQ(load_error(Spec{.n_ff_layers = {24, 0}}).message(),
            "key llama.feed_forward_length[1]: expected 1..16777216, found 0");
  EXPECT_EQ(
      load_error(Spec{.n_head_kv_layers = {2, 3}}).message(),
      "llama.attention.head_count (4, layer 1): expected a multiple of attention.head_count_kv, found 3");
}

TEST(ModelErrors, ForwardRejectsBadInputsAndFullContext) {
  TinyModel tm(Spec{});
  Result<std::unique_ptr<Model>> m = tm.load();
  ASSERT_TRUE(m.ok()) << m.status().message();
  Result<KvCache> kv = KvCache::create(kv_config((*m)->hparams(), 4, DType::kF16), host_device());
  ASSERT_TRUE(kv.ok());
  const std::vector<int32_t> five = {1, 2, 3, 4, 5};
  const Status full = (*m)->forward(tm.backend(), *kv, five, iota_positions(0, 5), false).status();
  EXPECT_EQ(full.code(), Code::kOutOfRange);
  EXPECT_EQ(full.message(), "context full: 5 tokens of 4");
  const std::vector<int32_t> bad = {40};
  EXPECT_EQ((*m)->forward(tm.backend(), *kv, bad, iota_positions(0, 1), false).status().code(),
            Code::kInvalidArgument);
  const std::vector<int32_t> ok = {1};
  EXPECT_EQ((*m)->forward(tm.backend(), *kv, ok, iota_positions(2, 1), false).status().code(),
            Code::kInvalidArgument);  // positions must continue the cache
  EXPECT_EQ(kv->used(), 0);
}

}  // namespace
}  // namespace paddock
