#include "model/blocks.h"

#include <cmath>

#include "base/check.h"

namespace paddock {

Result<DecoderWeights> bind_decoder(const WeightBinder& b, HParams& hp, const DecoderOptions& opt) {
  DecoderWeights w;
  const std::string embd = "token_embd.weight";
  // The vocabulary size comes from the embedding table itself.
  const std::optional<int64_t> n_vocab = b.dim(embd, 1);
  if (!n_vocab) return corrupt("missing tensor " + embd);
  PADDOCK_ASSIGN(w.tok_embd, b.matrix(embd, hp.n_embd, *n_vocab, Op::kGetRows));
  hp.n_vocab = w.tok_embd.ne[1];
  PADDOCK_ASSIGN(w.output_norm, b.vector("output_norm.weight", hp.n_embd));
  if (b.has("output.weight")) {
    PADDOCK_ASSIGN(w.output, b.matrix("output.weight", hp.n_embd, hp.n_vocab));
  } else {
    PADDOCK_ASSIGN(w.output, b.matrix(embd, hp.n_embd, hp.n_vocab));
  }
  PADDOCK_ASSIGN(w.rope_freqs, b.optional_vector("rope_freqs.weight", hp.n_rot / 2));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    LayerWeights& lw = w.layers.emplace_back();
    PADDOCK_ASSIGN(lw.attn_norm, b.vector(blk(il, "attn_norm.weight"), hp.n_embd));
    PADDOCK_ASSIGN(lw.wq, b.matrix(blk(il, "attn_q.weight"), hp.n_embd, hp.n_embd_q()));
    PADDOCK_ASSIGN(lw.wk, b.matrix(blk(il, "attn_k.weight"), hp.n_embd, hp.n_embd_k()));
    PADDOCK_ASSIGN(lw.wv, b.matrix(blk(il, "attn_v.weight"), hp.n_embd, hp.n_embd_v()));
    PADDOCK_ASSIGN(lw.wo, b.matrix(blk(il, "attn_output.weight"), hp.n_head * hp.head_dim_v, hp.n_embd));
    if (opt.qkv_bias) {
      PADDOCK_ASSIGN(lw.bq, b.vector(blk(il, "attn_q.bias"), hp.n_embd_q()));
      PADDOCK_ASSIGN(lw.bk, b.vector(blk(il, "attn_k.bias"), hp.n_embd_k()));
      PADDOCK_ASSIGN(lw.bv, b.vector(blk(il, "attn_v.bias"), hp.n_embd_v()));
    }
    if (opt.qk_norm) {
      PADDOCK_ASSIGN(lw.q_norm, b.vector(blk(il, "attn_q_norm.weight"), hp.head_dim_k));
      PADDOCK_ASSIGN(lw.k_norm, b.vector(blk(il, "attn_k_norm.weight"), hp.head_dim_k));
    }
    PADDOCK_ASSIGN(lw.ffn_norm, b.vector(blk(il, "ffn_norm.weight"), hp.n_embd));
    PADDOCK_ASSIGN(lw.ffn_gate, b.matrix(blk(il, "ffn_gate.weight"), hp.n_embd, hp.n_ff));
    PADDOCK_ASSIGN(lw.ffn_up, b.matrix(blk(il, "ffn_up.weight"), hp.n_embd, hp.n_ff));
    PADDOCK_ASSIGN(lw.ffn_down, b.matrix(blk(il, "ffn_down.weight"), hp.n_ff, hp.n_embd));
  }
  return w;
}

RopeParams rope_params(const HParams& hp, RopeMode mode) {
  return RopeParams{.mode = mode,
                    .n_dims = static_cast<int32_t>(hp.n_rot),
                    .freq_base = hp.rope_freq_base,
                    .freq_scale = hp.rope_freq_scale,
                    .freq_factors = {}};
}

std::string layer_name(std::string_view name, int64_t il) {
  std::string s(name);
  if (il >= 0) s += "-" + std::to_string(il);
  return s;
}

TensorView norm(ForwardContext& c, const TensorView& x, const TensorView& weight, std::string_view name,
                int64_t il) {
  const TensorView n = c.g.rms_norm(x, c.hp.rms_eps, layer_name("norm", il));  // [n, ...]
  return c.g.mul(n, weight, layer_name(name, il));                             // [n, ...]
}

namespace {

// mul_mat plus an optional bias, both named `name`. x [n_in, n] -> [n_out, n]
TensorView linear(ForwardContext& c, const TensorView& w, const std::optional<TensorView>& bias,
                  const TensorView& x, const std::string& name) {
  const TensorView y = c.g.mul_mat(w, x, name);  // [n_out, n]
  return bias ? c.g.add(y, *bias, name) : y;
}

// Per-head optional norm, then RoPE. x [head_dim * n_heads, n_tokens] -> [head_dim, n_heads, n_tokens]
TensorView heads_with_rope(ForwardContext& c, const TensorView& x, int64_t head_dim,
                           const std::optional<TensorView>& head_norm, std::string_view name, int64_t il) {
  TensorView h = x.reshape({head_dim, x.ne[0] / head_dim, x.ne[1]});  // [head_dim, n_heads, n_tokens]
  if (head_norm)
    h = norm(c, h, *head_norm, std::string(name) + "_normed", il);          // [head_dim, n_heads, n_tokens]
  return c.g.rope(h, c.pos, c.rope, c.rope_factors, layer_name(name, il));  // [head_dim, n_heads, n_tokens]
}

// Tokens [first, first + n) of a [d, heads, n_tokens] view: [d, heads, n].
TensorView rows(const TensorView& t, int64_t first, int64_t n) {
  TensorView r = t.shifted(static_cast<size_t>(first) * t.nb[2]);
  r.ne[2] = n;
  return r;
}

}  // namespace

TensorView attention(ForwardContext& c, int64_t il, const TensorView& x, const LayerWeights& lw) {
  const HParams& hp = c.hp;
  const int64_t n = c.n_tokens();
  const TensorView q = heads_with_rope(c, linear(c, lw.wq, lw.bq, x, layer_name("Qcur", il)), hp.head_dim_k,
                                       lw.q_norm, "Qcur", il);  // [d_k, n_head, n]
  const TensorView k = heads_with_rope(c, linear(c, lw.wk, lw.bk, x, layer_name("Kcur", il)), hp.head_dim_k,
                                       lw.k_norm, "Kcur", il);  // [d_k, n_head_kv, n]
  const TensorView v = linear(c, lw.wv, lw.bv, x, layer_name("Vcur", il))
                           .reshape({hp.head_dim_v, hp.n_head_kv, n});            // [d_v, n_head_kv, n]
  const TensorView out = c.g.tensor(DType::kF32, {hp.head_dim_v, hp.n_head, n});  // [d_v, n_head, n]
  const float scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim_k));
  for (const SeqSlice& s : c.seqs) {
    KvCache& kv = *s.kv;
    c.g.copy(rows(k, s.first, s.n), kv.k(il, s.kv_first, s.n),
             layer_name("k_cache", il));  // [d_k, n_head_kv, s.n]
    c.g.copy(rows(v, s.first, s.n), kv.v(il, s.kv_first, s.n),
             layer_name("v_cache", il));  // [d_v, n_head_kv, s.n]
    const int64_t n_kv = s.kv_first + s.n;
    c.g.attention(rows(q, s.first, s.n), kv.k(il, 0, n_kv), kv.v(il, 0, n_kv),
                  c.pos.subspan(static_cast<size_t>(s.first), static_cast<size_t>(s.n)), scale,
                  rows(out, s.first, s.n), layer_name("__fattn__", il));  // [d_v, n_head, s.n]
  }
  return linear(c, lw.wo, std::nullopt, out.reshape({hp.head_dim_v * hp.n_head, n}),
                layer_name("attn_out", il));  // [n_embd, n]
}

TensorView gated_ffn(ForwardContext& c, int64_t il, const TensorView& x, const LayerWeights& lw) {
  const TensorView gate = c.g.mul_mat(lw.ffn_gate, x, layer_name("ffn_gate", il));  // [n_ff, n]
  const TensorView up = c.g.mul_mat(lw.ffn_up, x, layer_name("ffn_up", il));        // [n_ff, n]
  const TensorView act = c.g.swiglu(gate, up, layer_name("ffn_swiglu", il));        // [n_ff, n]
  return c.g.mul_mat(lw.ffn_down, act, layer_name("ffn_out", il));                  // [n_embd, n]
}

TensorView lm_head(ForwardContext& c, const TensorView& x, const DecoderWeights& w) {
  const TensorView h = norm(c, x, w.output_norm, "result_norm", -1);  // [n_embd, n_out]
  if (c.head == Head::kHidden) return h;
  return c.g.mul_mat(w.output, h, "result_output");  // [n_vocab, n_out]
}

TensorView decoder_forward(ForwardContext& c, std::span<const int32_t> tokens, const DecoderWeights& w) {
  PADDOCK_CHECK(static_cast<int64_t>(tokens.size()) == c.n_tokens());
  const bool pick_rows = static_cast<int64_t>(c.out_rows.size()) != c.n_tokens();
  std::vector<int32_t> out_ids(c.out_rows.begin(), c.out_rows.end());
  // Each layer's end releases everything since here but its output, the layer input included.
  const size_t mark = c.g.mark();
  TensorView x = c.g.get_rows(w.tok_embd, tokens, "embd");  // [n_embd, n_tokens]
  for (int64_t il = 0; il < c.hp.n_layer; ++il) {
    const LayerWeights& lw = w.layers[il];
    TensorView a = attention(c, il, norm(c, x, lw.attn_norm, "attn_norm", il), lw);  // [n_embd, n_tokens]
    if (il == c.hp.n_layer - 1 && pick_rows) {
      // From here on every op is row-wise: only the output rows need computing.
      a = c.g.get_rows(a, out_ids, layer_name("attn_out_rows", il));  // [n_embd, n_out]
      x = c.g.get_rows(x, out_ids, layer_name("inp_rows", il));       // [n_embd, n_out]
    }
    const TensorView ffn_inp = c.g.add(x, a, layer_name("ffn_inp", il));                       // [n_embd, n]
    const TensorView f = gated_ffn(c, il, norm(c, ffn_inp, lw.ffn_norm, "ffn_norm", il), lw);  // [n_embd, n]
    x = c.g.add(ffn_inp, f, layer_name("l_out", il));                                          // [n_embd, n]
    c.g.release_since(mark, x);
  }
  return lm_head(c, x, w);  // [n_vocab or n_embd, n_out]
}

}  // namespace paddock
