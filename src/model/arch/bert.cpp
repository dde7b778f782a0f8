// bert and nomic-bert: the encoders behind embedding models (all-minilm, bge, mxbai-embed,
// nomic-embed-text). Every token sees the whole sequence (non-causal attention); LayerNorm
// with biases after the embeddings and after each residual (post-norm); token-type row 0
// added to the embeddings ("sentence A"). bert: absolute position embeddings, Q/K/V with
// biases, a GELU FFN with biases. nomic-bert: Q, K and V fused in attn_qkv, NeoX RoPE, a
// SiLU-gated FFN, no biases. No LM head: the final hidden states are the embeddings, pooled
// as the file's pooling_type says (engine/embedding.h).
#include "model/arch/archs.h"
#include "model/blocks.h"

namespace paddock {

namespace {

struct LayerNormWeights {
  TensorView weight, bias;  // [n_embd] each
};

struct BertLayer {
  AttnWeights attn;
  LayerNormWeights attn_out_norm;
  FfnWeights ffn;  // bert: no gate
  std::optional<TensorView> ffn_up_b, ffn_down_b;
  LayerNormWeights layer_out_norm;
};

struct BertWeights {
  TensorView tok_embd;                  // [n_embd, n_vocab]
  std::optional<TensorView> type_embd;  // [n_embd, n_types]: row 0 is added
  std::optional<TensorView> pos_embd;   // [n_embd, n_ctx_train] (bert)
  LayerNormWeights embd_norm;
  std::vector<BertLayer> layers;
};

class BertModel final : public Model {
 public:
  BertModel(HParams hp, BertWeights w) : Model(std::move(hp)), w_(std::move(w)) {}
  bool has_lm_head() const override { return false; }

 protected:
  RopeParams rope() const override { return rope_params(hp_, RopeMode::kNeox); }
  std::optional<TensorView> rope_factors(int64_t) const override { return std::nullopt; }
  TensorView compute(ForwardContext& c, std::span<const int32_t> tokens) const override {
    const size_t mark = c.g.mark();  // each layer's end releases all but its output
    TensorView x = c.g.get_rows(w_.tok_embd, tokens, "inp_embd");  // [n_embd, n_tokens]
    if (w_.type_embd) {
      constexpr int32_t kSentenceA[] = {0};
      x = c.g.add(x, c.g.get_rows(*w_.type_embd, kSentenceA, "inp_type_row"),
                  "inp_embd_types");  // [n_embd, 1] repeated
    }
    if (w_.pos_embd) x = c.g.add(x, c.g.get_rows(*w_.pos_embd, c.pos, "inp_pos_embd"), "inp_embd_pos");
    x = layer_norm(c, x, w_.embd_norm.weight, w_.embd_norm.bias, "inp_norm", -1);
    for (int64_t il = 0; il < hp_.n_layer; ++il) {
      c.g.set_layer(il);
      x = layer(c, il, x, w_.layers[static_cast<size_t>(il)]);  // [n_embd, n_tokens; n_out after the last]
      c.g.release_since(mark, x);
    }
    return x;  // [n_embd, n_out]
  }

 private:
  static TensorView layer(ForwardContext& c, int64_t il, const TensorView& x, const BertLayer& w) {
    TensorView residual = x;
    TensorView a = attention(c, il, x, w.attn);  // [n_embd, n_tokens]
    keep_output_rows(c, il, a, residual);
    a = c.g.add(a, residual, layer_name("attn_res", il));
    const TensorView ffn_inp = layer_norm(c, a, w.attn_out_norm.weight, w.attn_out_norm.bias, "ffn_inp", il);
    TensorView f;
    if (w.ffn_up_b) {                                                                            // bert
      const TensorView up = linear(c, w.ffn.up, w.ffn_up_b, ffn_inp, layer_name("ffn_up", il));  // [n_ff, n]
      f = linear(c, w.ffn.down, w.ffn_down_b, c.g.gelu(up, layer_name("ffn_gelu", il)),
                 layer_name("ffn_out", il));  // [n_embd, n]
    } else {
      f = gated_ffn(c, il, ffn_inp, w.ffn);  // [n_embd, n]
    }
    const TensorView out = c.g.add(f, ffn_inp, layer_name("ffn_res", il));
    return layer_norm(c, out, w.layer_out_norm.weight, w.layer_out_norm.bias, "l_out", il);  // [n_embd, n]
  }

  BertWeights w_;
};

enum class Variant : uint8_t { kBert, kNomic };

Result<LayerNormWeights> bind_layer_norm(WeightBinder& b, const HParams& hp, const std::string& prefix) {
  LayerNormWeights w;
  PADDOCK_ASSIGN(w.weight, b.tensor(prefix + ".weight", {hp.n_embd}));
  PADDOCK_ASSIGN(w.bias, b.tensor(prefix + ".bias", {hp.n_embd}));
  return w;
}

Result<BertLayer> bind_layer(WeightBinder& b, const HParams& hp, int64_t il, Variant v) {
  BertLayer l;
  const int64_t n_ff = hp.layer(il).n_ff;
  if (v == Variant::kBert) {
    PADDOCK_ASSIGN(l.attn, bind_attention(b, hp, il, {.qkv_bias = Part::kRequired}));
    PADDOCK_ASSIGN(l.ffn.up, b.tensor(blk(il, "ffn_up.weight"), {hp.n_embd, n_ff}, Use::kMulMat));
    PADDOCK_ASSIGN(l.ffn_up_b, b.tensor(blk(il, "ffn_up.bias"), {n_ff}));
    PADDOCK_ASSIGN(l.ffn.down, b.tensor(blk(il, "ffn_down.weight"), {n_ff, hp.n_embd}, Use::kMulMat));
    PADDOCK_ASSIGN(l.ffn_down_b, b.tensor(blk(il, "ffn_down.bias"), {hp.n_embd}));
  } else {
    PADDOCK_ASSIGN(l.attn, bind_fused_attention(b, hp, il));
    PADDOCK_ASSIGN(l.ffn, bind_gated_ffn(b, hp, il));
  }
  PADDOCK_ASSIGN(l.attn_out_norm, bind_layer_norm(b, hp, blk(il, "attn_output_norm")));
  PADDOCK_ASSIGN(l.layer_out_norm, bind_layer_norm(b, hp, blk(il, "layer_output_norm")));
  return l;
}

Result<std::unique_ptr<Model>> load(const gguf::File& file, Backend& backend, Buffer& weights, Variant v) {
  const std::string_view arch = v == Variant::kBert ? "bert" : "nomic-bert";
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, arch));
  if (!(hp.norm_eps > 0))
    return corrupt("missing key " + std::string(arch) + ".attention.layer_norm_epsilon");
  if (v == Variant::kBert) hp.n_rot = 0;  // positions come from position_embd
  WeightBinder b(file, backend, weights);
  BertWeights w;
  const std::optional<int64_t> n_vocab = b.dim("token_embd.weight", 1);
  if (!n_vocab) return corrupt("missing tensor token_embd.weight");
  PADDOCK_ASSIGN(w.tok_embd, b.tensor("token_embd.weight", {hp.n_embd, *n_vocab}, Use::kGetRows));
  hp.n_vocab = *n_vocab;
  if (const std::optional<int64_t> n_types = b.dim("token_types.weight", 1)) {
    PADDOCK_ASSIGN(w.type_embd, b.tensor("token_types.weight", {hp.n_embd, *n_types}, Use::kGetRows));
  }
  if (v == Variant::kBert) {
    PADDOCK_ASSIGN(w.pos_embd, b.tensor("position_embd.weight", {hp.n_embd, hp.n_ctx_train}, Use::kGetRows));
  }
  PADDOCK_ASSIGN(w.embd_norm, bind_layer_norm(b, hp, "token_embd_norm"));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    PADDOCK_ASSIGN(BertLayer l, bind_layer(b, hp, il, v));
    w.layers.push_back(std::move(l));
  }
  return std::unique_ptr<Model>(std::make_unique<BertModel>(std::move(hp), std::move(w)));
}

}  // namespace

Result<std::unique_ptr<Model>> load_bert(const gguf::File& file, Backend& backend, Buffer& weights) {
  return load(file, backend, weights, Variant::kBert);
}

Result<std::unique_ptr<Model>> load_nomic_bert(const gguf::File& file, Backend& backend, Buffer& weights) {
  return load(file, backend, weights, Variant::kNomic);
}

}  // namespace paddock
