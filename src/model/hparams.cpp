#include "model/hparams.h"

#include <algorithm>
#include <cmath>

#include "backend/moe.h"

#include "gguf/keys.h"

namespace paddock {

namespace {

Status load_experts(const gguf::File& file, const gguf::KeyReader& r, HParams& hp) {
  PADDOCK_ASSIGN(hp.n_expert, r.optional_int("expert_count", 0));
  if (hp.n_expert == 0) return Status::ok();
  if (hp.n_expert < 0 || hp.n_expert > kMaxExperts) {
    return corrupt("key " + r.name("expert_count") + ": expected 0.." + std::to_string(kMaxExperts) +
                   ", found " + std::to_string(hp.n_expert));
  }
  PADDOCK_ASSIGN(hp.n_expert_used, r.required_int("expert_used_count"));
  if (hp.n_expert_used < 1 || hp.n_expert_used > std::min<int64_t>(hp.n_expert, kMaxExpertsPerToken)) {
    return corrupt("key " + r.name("expert_used_count") + ": expected 1.." +
                   std::to_string(std::min<int64_t>(hp.n_expert, kMaxExpertsPerToken)) + ", found " +
                   std::to_string(hp.n_expert_used));
  }
  PADDOCK_ASSIGN(hp.n_ff_exp, r.optional_int("expert_feed_forward_length", hp.layer(0).n_ff));
  if (hp.n_ff_exp < 1) return corrupt("key " + r.name("expert_feed_forward_length") + ": expected > 0");
  if (r.has("expert_weights_norm")) {
    const std::optional<bool> norm = file.get_bool(r.name("expert_weights_norm"));
    if (!norm) return corrupt("key " + r.name("expert_weights_norm") + ": expected a bool");
    hp.expert_weights_norm = *norm;
  }
  return Status::ok();
}

// rope.scaling.*: linear divides every angle by the factor; YaRN (gpt-oss) blends scaled
// and unscaled angles and sets the magnitude factor as llama.cpp's llama_context does. Any
// model may carry a magnitude factor (attn_factor: phi3's LongRoPE files, with no scaling
// type) and the context its factors were trained for (original_context_length: YaRN's
// corners, phi3's choice between its long and short factors).
Status load_rope_scaling(const gguf::KeyReader& r, HParams& hp) {
  const std::string_view scaling = r.string("rope.scaling.type").value_or("none");
  PADDOCK_ASSIGN(const float factor, r.optional_float("rope.scaling.factor", 0.0f));
  if (scaling != "none" && scaling != "linear" && scaling != "yarn") {
    return unsupported("rope scaling type \"" + std::string(scaling) +
                       "\" is not supported (supported: none, linear, yarn)");
  }
  PADDOCK_ASSIGN(const float attn_factor, r.optional_float("rope.scaling.attn_factor", 1.0f));
  if (!(attn_factor > 0) || !std::isfinite(attn_factor)) {
    return corrupt("key " + r.name("rope.scaling.attn_factor") + ": expected a positive number");
  }
  PADDOCK_ASSIGN(hp.n_ctx_orig_yarn, r.optional_int("rope.scaling.original_context_length", hp.n_ctx_train));
  if (hp.n_ctx_orig_yarn < 1 || hp.n_ctx_orig_yarn > (int64_t{1} << 30)) {
    return corrupt("key " + r.name("rope.scaling.original_context_length") + ": expected 1..2^30");
  }
  hp.yarn_attn_factor = attn_factor;
  if (scaling == "none" || !(factor > 0)) return Status::ok();
  hp.rope_freq_scale = 1.0f / factor;
  if (scaling != "yarn") return Status::ok();
  hp.yarn_ext_factor = 1.0f;
  PADDOCK_ASSIGN(hp.yarn_beta_fast, r.optional_float("rope.scaling.yarn_beta_fast", 32.0f));
  PADDOCK_ASSIGN(hp.yarn_beta_slow, r.optional_float("rope.scaling.yarn_beta_slow", 1.0f));
  PADDOCK_ASSIGN(const float log_mul, r.optional_float("rope.scaling.yarn_log_multiplier", 0.0f));
  const auto mscale = [](float scale, float m) {
    return scale <= 1.0f ? 1.0f : 0.1f * m * std::log(scale) + 1.0f;
  };
  hp.yarn_attn_factor =
      log_mul != 0.0f ? mscale(factor, 1.0f) / mscale(factor, log_mul) : mscale(factor, 1.0f);
  // The rope kernel scales by 1 + 0.1 ln(factor) again (ggml_rope_yarn): cancel it once here.
  hp.yarn_attn_factor *= 1.0f / (1.0f + 0.1f * std::log(factor));
  hp.yarn_attn_factor *= attn_factor;
  return Status::ok();
}

}  // namespace

Result<HParams> load_hparams(const gguf::File& file, std::string_view arch) {
  const gguf::KeyReader r(file, arch);
  HParams hp;
  hp.arch = std::string(arch);
  PADDOCK_ASSIGN(hp.n_embd, r.required_int("embedding_length"));
  PADDOCK_ASSIGN(hp.n_layer, r.required_int("block_count"));
  if (hp.n_layer > gguf::kMaxLayers) {
    return corrupt("key " + r.name("block_count") + ": expected 1.." + std::to_string(gguf::kMaxLayers) +
                   ", found " + std::to_string(hp.n_layer));
  }
  PADDOCK_ASSIGN(const std::vector<int64_t> n_head, r.per_layer_int("attention.head_count", hp.n_layer));
  PADDOCK_ASSIGN(const std::vector<int64_t> n_head_kv,
                 r.per_layer_int("attention.head_count_kv", hp.n_layer, n_head));
  PADDOCK_ASSIGN(const std::vector<int64_t> n_ff, r.per_layer_int("feed_forward_length", hp.n_layer));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const auto i = static_cast<size_t>(il);
    hp.layers.push_back(LayerParams{.n_head = n_head[i], .n_head_kv = n_head_kv[i], .n_ff = n_ff[i]});
    if (n_head[i] % n_head_kv[i] != 0) {
      return corrupt(r.name("attention.head_count") + " (" + std::to_string(n_head[i]) + ", layer " +
                     std::to_string(il) + "): expected a multiple of attention.head_count_kv, found " +
                     std::to_string(n_head_kv[i]));
    }
  }
  PADDOCK_ASSIGN(hp.n_ctx_train, r.optional_int("context_length", 2048));
  if (hp.n_embd % n_head[0] != 0 && !r.has("attention.key_length")) {
    return corrupt(r.name("embedding_length") + " (" + std::to_string(hp.n_embd) +
                   "): not a multiple of attention.head_count and no attention.key_length");
  }
  PADDOCK_ASSIGN(hp.head_dim_k, r.optional_int("attention.key_length", hp.n_embd / n_head[0]));
  PADDOCK_ASSIGN(hp.head_dim_v, r.optional_int("attention.value_length", hp.head_dim_k));
  PADDOCK_ASSIGN(hp.n_rot, r.optional_int("rope.dimension_count", hp.head_dim_k));
  if (hp.n_rot % 2 != 0 || hp.n_rot > hp.head_dim_k) {
    return corrupt(r.name("rope.dimension_count") + ": expected an even number <= head dim " +
                   std::to_string(hp.head_dim_k) + ", found " + std::to_string(hp.n_rot));
  }
  PADDOCK_ASSIGN(hp.norm_eps, r.optional_float("attention.layer_norm_epsilon", 0.0f));
  const float rms_default = hp.norm_eps > 0 ? 0.0f : -1.0f;
  PADDOCK_ASSIGN(hp.rms_eps, r.optional_float("attention.layer_norm_rms_epsilon", rms_default));
  if (hp.rms_eps < 0 || hp.norm_eps < 0 || (hp.rms_eps == 0 && hp.norm_eps == 0) || std::isnan(hp.rms_eps) ||
      std::isnan(hp.norm_eps)) {
    return corrupt("missing or non-positive key " + r.name("attention.layer_norm_rms_epsilon") + " (or " +
                   r.name("attention.layer_norm_epsilon") + ")");
  }
  if (r.has("attention.causal")) {
    const std::optional<bool> causal = file.get_bool(r.name("attention.causal"));
    if (!causal) return corrupt("key " + r.name("attention.causal") + ": expected a bool");
    hp.causal = *causal;
  }
  PADDOCK_ASSIGN(hp.rope_freq_base, r.optional_float("rope.freq_base", 10000.0f));
  if (!(hp.rope_freq_base > 0)) return corrupt("key " + r.name("rope.freq_base") + ": expected > 0");

  PADDOCK_TRY(load_rope_scaling(r, hp));
  for (LayerParams& l : hp.layers) {
    l.rope_freq_base = hp.rope_freq_base;
    l.rope_freq_scale = hp.rope_freq_scale;
  }
  if (r.has("pooling_type")) {
    const std::optional<int64_t> pooling = file.get_int(r.name("pooling_type"));
    if (!pooling || *pooling < 0 || *pooling > 3) {
      return unsupported("key " + r.name("pooling_type") + ": expected 0..3 (none, mean, cls, last), found " +
                         (pooling ? std::to_string(*pooling) : std::string("a non-integer")));
    }
    hp.pooling = static_cast<Pooling>(*pooling);
  }
  PADDOCK_TRY(load_experts(file, r, hp));
  return hp;
}

}  // namespace paddock
