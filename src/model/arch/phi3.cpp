// phi3: Phi-3 and Phi-3.5 (mini, medium). The llama layer with Q, K and V fused in one
// matrix (attn_qkv) and the FFN's gate and up fused in ffn_up (gate rows first), bound as
// row blocks of those matrices; NeoX RoPE. The 128k-context variants (phi3.5, phi4-mini)
// carry LongRoPE: short and long per-frequency factors, the long ones for contexts beyond
// rope.scaling.original_context_length, and a magnitude factor (rope.scaling.attn_factor).
#include "model/arch/archs.h"
#include "model/pre_norm_decoder.h"

namespace paddock {

namespace {

Result<PreNormLayerWeights> bind_layer(WeightBinder& b, const HParams& hp, int64_t il) {
  PreNormLayerWeights w;
  PADDOCK_ASSIGN(w.attn_norm, b.tensor(blk(il, "attn_norm.weight"), {hp.n_embd}));
  if (b.has(blk(il, "attn_qkv.weight"))) {
    PADDOCK_ASSIGN(w.attn, bind_fused_attention(b, hp, il));
  } else {
    PADDOCK_ASSIGN(w.attn, bind_attention(b, hp, il, {}));
  }
  PADDOCK_ASSIGN(w.ffn_norm, b.tensor(blk(il, "ffn_norm.weight"), {hp.n_embd}));
  const int64_t n_ff = hp.layer(il).n_ff;
  const int64_t gate_up[] = {n_ff, n_ff};
  PADDOCK_ASSIGN(const std::vector<TensorView> ffn,
                 b.split_rows(blk(il, "ffn_up.weight"), hp.n_embd, gate_up));
  FfnWeights f{.gate = ffn[0], .up = ffn[1], .down = {}};
  PADDOCK_ASSIGN(f.down, b.tensor(blk(il, "ffn_down.weight"), {n_ff, hp.n_embd}, Use::kMulMat));
  w.ffn = f;
  return w;
}

}  // namespace

Result<std::unique_ptr<Model>> load_phi3(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "phi3"));
  WeightBinder b(file, backend, weights);
  PreNormDecoderWeights w;
  PADDOCK_ASSIGN(w.rope_freqs, b.optional("rope_factors_short.weight", {hp.n_rot / 2}));
  PADDOCK_ASSIGN(w.rope_freqs_long, b.optional("rope_factors_long.weight", {hp.n_rot / 2}));
  if (w.rope_freqs.has_value() != w.rope_freqs_long.has_value()) {
    return corrupt(
        "phi3: rope_factors_long.weight and rope_factors_short.weight come together; this file has one");
  }
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PADDOCK_ASSIGN(PreNormLayerWeights l, bind_layer(b, hp, il));
    w.layers.push_back(std::move(l));
  }
  return make_pre_norm_decoder(std::move(hp), std::move(w), RopeMode::kNeox);
}

}  // namespace paddock
