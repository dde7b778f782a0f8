#include "model/blocks.h"

#include <cmath>
#include <cstring>

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

RopeParams rope_params(const HParams& hp, const DecoderWeights& w, RopeMode mode) {
  RopeParams p{.mode = mode,
               .n_dims = static_cast<int32_t>(hp.n_rot),
               .freq_base = hp.rope_freq_base,
               .freq_scale = hp.rope_freq_scale,
               .freq_factors = {}};
  if (w.rope_freqs) {
    p.freq_factors = {static_cast<const float*>(w.rope_freqs->data),
                      static_cast<size_t>(w.rope_freqs->ne[0])};
  }
  return p;
}

TensorView norm(ForwardContext& c, const TensorView& x, const TensorView& weight) {
  TensorView n = c.arena.f32({x.ne[0], x.ne[1], x.ne[2]});  // [n, ...]
  c.be.rms_norm(x, c.hp.rms_eps, n);
  c.be.mul(n, weight, n);  // [n, ...]
  return n;
}

namespace {

// mul_mat plus an optional bias. x [n_in, n_tokens] -> [n_out, n_tokens]
TensorView linear(ForwardContext& c, const TensorView& w, const std::optional<TensorView>& bias,
                  const TensorView& x) {
  TensorView y = c.arena.f32({w.ne[1], x.ne[1]});  // [n_out, n_tokens]
  c.be.mul_mat(w, x, y);
  if (bias) c.be.add(y, *bias, y);
  return y;
}

// Per-head optional norm, then RoPE. x [head_dim * n_heads, n_tokens] -> [head_dim, n_heads, n_tokens]
TensorView heads_with_rope(ForwardContext& c, const TensorView& x, int64_t head_dim,
                           const std::optional<TensorView>& head_norm) {
  TensorView h = x.reshape({head_dim, x.ne[0] / head_dim, x.ne[1]});  // [head_dim, n_heads, n_tokens]
  if (head_norm) h = norm(c, h, *head_norm);                          // [head_dim, n_heads, n_tokens]
  TensorView r = c.arena.f32({h.ne[0], h.ne[1], h.ne[2]});            // [head_dim, n_heads, n_tokens]
  c.be.rope(h, c.pos, c.rope, r);
  return r;
}

// Tokens [first, first + n) of a [d, heads, n_tokens] view: [d, heads, n].
TensorView rows(const TensorView& t, int64_t first, int64_t n) {
  TensorView r = t;
  r.data = t.row(0, first);
  r.ne[2] = n;
  return r;
}

}  // namespace

TensorView attention(ForwardContext& c, int64_t il, const TensorView& x, const LayerWeights& lw) {
  const HParams& hp = c.hp;
  const int64_t n = c.n_tokens();
  TensorView q =
      heads_with_rope(c, linear(c, lw.wq, lw.bq, x), hp.head_dim_k, lw.q_norm);  // [d_k, n_head, n]
  TensorView k =
      heads_with_rope(c, linear(c, lw.wk, lw.bk, x), hp.head_dim_k, lw.k_norm);         // [d_k, n_head_kv, n]
  TensorView v = linear(c, lw.wv, lw.bv, x).reshape({hp.head_dim_v, hp.n_head_kv, n});  // [d_v, n_head_kv, n]
  TensorView out = c.arena.f32({hp.head_dim_v, hp.n_head, n});                          // [d_v, n_head, n]
  const float scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim_k));
  for (const SeqSlice& s : c.seqs) {
    KvCache& kv = *s.kv;
    kv.write_k(c.be, il, s.kv_first, rows(k, s.first, s.n));  // [d_k, n_head_kv, s.n]
    kv.write_v(c.be, il, s.kv_first, rows(v, s.first, s.n));  // [d_v, n_head_kv, s.n]
    const int64_t n_kv = s.kv_first + s.n;
    c.be.attention(rows(q, s.first, s.n), kv.k(il, 0, n_kv), kv.v(il, 0, n_kv),
                   c.pos.subspan(static_cast<size_t>(s.first), static_cast<size_t>(s.n)), scale,
                   rows(out, s.first, s.n));  // [d_v, n_head, s.n]
  }
  return linear(c, lw.wo, std::nullopt, out.reshape({hp.head_dim_v * hp.n_head, n}));  // [n_embd, n]
}

TensorView gated_ffn(ForwardContext& c, const TensorView& x, const LayerWeights& lw) {
  TensorView gate = linear(c, lw.ffn_gate, std::nullopt, x);  // [n_ff, n_tokens]
  TensorView up = linear(c, lw.ffn_up, std::nullopt, x);      // [n_ff, n_tokens]
  TensorView act = c.arena.f32({gate.ne[0], gate.ne[1]});     // [n_ff, n_tokens]
  c.be.swiglu(gate, up, act);
  return linear(c, lw.ffn_down, std::nullopt, act);  // [n_embd, n_tokens]
}

TensorView residual(ForwardContext& c, const TensorView& a, const TensorView& b) {
  TensorView s = c.arena.f32({a.ne[0], a.ne[1]});  // [n, n_tokens]
  c.be.add(a, b, s);
  return s;
}

TensorView lm_head(ForwardContext& c, const TensorView& x, const DecoderWeights& w) {
  const auto n_out = static_cast<int64_t>(c.out_rows.size());
  TensorView picked = x;  // [n_embd, n_tokens]
  if (n_out != x.ne[1]) {
    picked = c.arena.f32({x.ne[0], n_out});  // [n_embd, n_out]
    for (int64_t i = 0; i < n_out; ++i) {
      std::memcpy(picked.row(i), x.row(c.out_rows[static_cast<size_t>(i)]), x.nb[1]);
    }
  }
  TensorView h = norm(c, picked, w.output_norm);  // [n_embd, n_out]
  if (c.head == Head::kHidden) return h;
  return linear(c, w.output, std::nullopt, h);  // [n_vocab, n_out]
}

TensorView decoder_forward(ForwardContext& c, std::span<const int32_t> tokens, const DecoderWeights& w) {
  PADDOCK_CHECK(static_cast<int64_t>(tokens.size()) == c.n_tokens());
  TensorView x = c.arena.f32({c.hp.n_embd, c.n_tokens()});  // [n_embd, n_tokens]
  c.be.get_rows(w.tok_embd, tokens, x);
  for (int64_t il = 0; il < c.hp.n_layer; ++il) {
    const LayerWeights& lw = w.layers[il];
    const size_t mark = c.arena.mark();
    TensorView a = attention(c, il, norm(c, x, lw.attn_norm), lw);   // [n_embd, n_tokens]
    TensorView ffn_inp = residual(c, x, a);                          // [n_embd, n_tokens]
    TensorView f = gated_ffn(c, norm(c, ffn_inp, lw.ffn_norm), lw);  // [n_embd, n_tokens]
    x = residual(c, ffn_inp, f);                                     // [n_embd, n_tokens]
    c.arena.release_since(mark, x);
  }
  return lm_head(c, x, w);  // [n_vocab or n_embd, n_out]
}

}  // namespace paddock
