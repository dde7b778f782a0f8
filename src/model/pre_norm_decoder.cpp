#include "model/pre_norm_decoder.h"

namespace paddock {

namespace {

class PreNormDecoder final : public Model {
 public:
  PreNormDecoder(HParams hp, PreNormDecoderWeights w, RopeMode mode)
      : Model(std::move(hp)), w_(std::move(w)), mode_(mode) {}

 protected:
  RopeParams rope() const override { return rope_params(hp_, mode_); }
  std::optional<TensorView> rope_factors(int64_t n_ctx) const override {
    return w_.rope_freqs_long && n_ctx > hp_.n_ctx_orig_yarn ? w_.rope_freqs_long : w_.rope_freqs;
  }
  TensorView compute(ForwardContext& c, std::span<const int32_t> tokens) const override {
    const size_t mark = c.g.mark();  // each layer's end releases all but its output
    TensorView x = c.g.get_rows(w_.embd_head.tok_embd, tokens, "embd");  // [n_embd, n_tokens]
    for (int64_t il = 0; il < hp_.n_layer; ++il) {
      c.g.set_layer(il);
      x = pre_norm_layer(c, il, x,
                         w_.layers[static_cast<size_t>(il)]);  // [n_embd, n_tokens; n_out after the last]
      c.g.release_since(mark, x);
    }
    return lm_head(c, x, w_.embd_head);  // [n_vocab or n_embd, n_out]
  }

 private:
  PreNormDecoderWeights w_;
  RopeMode mode_;
};

}  // namespace

std::unique_ptr<Model> make_pre_norm_decoder(HParams hp, PreNormDecoderWeights w, RopeMode mode) {
  return std::make_unique<PreNormDecoder>(std::move(hp), std::move(w), mode);
}

}  // namespace paddock
