// phi3: Phi-3 and Phi-3.5 (mini, medium). The llama layer with Q, K and V fused in one
// matrix (attn_qkv) and the FFN's gate and up fused in ffn_up (gate rows first), bound as
// row blocks of those matrices; NeoX RoPE. Files with LongRoPE factors (the 128k-context
// variants) are refused: their RoPE also scales attention, which paddock's rope lacks.
#include "model/arch/archs.h"
#include "model/blocks.h"

namespace paddock {

namespace {

struct Phi3Weights {
  EmbdHeadWeights embd_head;
  std::vector<PreNormLayerWeights> layers;
};

class Phi3Model final : public Model {
 public:
  Phi3Model(HParams hp, Phi3Weights w) : Model(std::move(hp)), w_(std::move(w)) {}

 protected:
  RopeParams rope() const override { return rope_params(hp_, RopeMode::kNeox); }
  std::optional<TensorView> rope_factors() const override { return std::nullopt; }
  TensorView compute(ForwardContext& c, std::span<const int32_t> tokens) const override {
    const size_t mark = c.g.mark();  // each layer's end releases all but its output
    TensorView x = c.g.get_rows(w_.embd_head.tok_embd, tokens, "embd");  // [n_embd, n_tokens]
    for (int64_t il = 0; il < hp_.n_layer; ++il) {
      c.g.set_layer(il);
      x = pre_norm_layer(c, il, x, w_.layers[static_cast<size_t>(il)]);  // [n_embd, n_tokens; n_out after the last]
      c.g.release_since(mark, x);
    }
    return lm_head(c, x, w_.embd_head);  // [n_vocab or n_embd, n_out]
  }

 private:
  Phi3Weights w_;
};

Result<PreNormLayerWeights> bind_layer(WeightBinder& b, const HParams& hp, int64_t il) {
  PreNormLayerWeights w;
  PADDOCK_ASSIGN(w.attn_norm, b.tensor(blk(il, "attn_norm.weight"), {hp.n_embd}));
  if (b.has(blk(il, "attn_qkv.weight"))) {
    const int64_t qkv[] = {hp.n_embd_q(il), hp.n_embd_k(il), hp.n_embd_v(il)};
    PADDOCK_ASSIGN(const std::vector<TensorView> parts, b.split_rows(blk(il, "attn_qkv.weight"), hp.n_embd, qkv));
    w.attn.wq = parts[0];
    w.attn.wk = parts[1];
    w.attn.wv = parts[2];
    PADDOCK_ASSIGN(w.attn.wo, b.tensor(blk(il, "attn_output.weight"),
                                       {hp.layer(il).n_head * hp.head_dim_v, hp.n_embd}, Use::kMulMat));
  } else {
    PADDOCK_ASSIGN(w.attn, bind_attention(b, hp, il, {}));
  }
  PADDOCK_ASSIGN(w.ffn_norm, b.tensor(blk(il, "ffn_norm.weight"), {hp.n_embd}));
  const int64_t n_ff = hp.layer(il).n_ff;
  const int64_t gate_up[] = {n_ff, n_ff};
  PADDOCK_ASSIGN(const std::vector<TensorView> ffn, b.split_rows(blk(il, "ffn_up.weight"), hp.n_embd, gate_up));
  w.ffn.gate = ffn[0];
  w.ffn.up = ffn[1];
  PADDOCK_ASSIGN(w.ffn.down, b.tensor(blk(il, "ffn_down.weight"), {n_ff, hp.n_embd}, Use::kMulMat));
  return w;
}

}  // namespace

Result<std::unique_ptr<Model>> load_phi3(const gguf::File& file, Backend& backend, Buffer& weights) {
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, "phi3"));
  WeightBinder b(file, backend, weights);
  if (b.has("rope_factors_long.weight") || b.has("rope_factors_short.weight")) {
    return unsupported("phi3 with LongRoPE factors (the 128k-context models) is not supported yet");
  }
  Phi3Weights w;
  PADDOCK_ASSIGN(w.embd_head, bind_embd_head(b, hp));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PADDOCK_ASSIGN(PreNormLayerWeights l, bind_layer(b, hp, il));
    w.layers.push_back(std::move(l));
  }
  return std::unique_ptr<Model>(std::make_unique<Phi3Model>(std::move(hp), std::move(w)));
}

}  // namespace paddock
