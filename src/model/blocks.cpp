#include "model/blocks.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "base/check.h"

namespace paddock {

Result<EmbdHeadWeights> bind_embd_head(WeightBinder& b, HParams& hp) {
  EmbdHeadWeights w;
  const std::string embd = "token_embd.weight";
  // The vocabulary size comes from the embedding table itself.
  const std::optional<int64_t> n_vocab = b.dim(embd, 1);
  if (!n_vocab) return corrupt("missing tensor " + embd);
  PADDOCK_ASSIGN(w.tok_embd, b.tensor(embd, {hp.n_embd, *n_vocab}, Use::kGetRows));
  hp.n_vocab = w.tok_embd.ne[1];
  PADDOCK_ASSIGN(w.output_norm, b.tensor("output_norm.weight", {hp.n_embd}));
  if (b.has("output.weight")) {
    PADDOCK_ASSIGN(w.output, b.tensor("output.weight", {hp.n_embd, hp.n_vocab}, Use::kMulMat));
  } else {
    PADDOCK_ASSIGN(w.output, b.tensor(embd, {hp.n_embd, hp.n_vocab}, Use::kMulMat, Bind::kDuplicated));
  }
  return w;
}

namespace {

// A weight group an arch asks for: required, optional, or not bound at all.
Result<std::optional<TensorView>> bind_part(WeightBinder& b, Part part, const std::string& name,
                                            std::initializer_list<int64_t> ne) {
  if (part == Part::kAbsent) return std::optional<TensorView>();
  if (part == Part::kOptional) return b.optional(name, ne);
  PADDOCK_ASSIGN(TensorView v, b.tensor(name, ne));
  return std::optional<TensorView>(v);
}

}  // namespace

Result<AttnWeights> bind_attention(WeightBinder& b, const HParams& hp, int64_t il, const AttnParts& parts) {
  AttnWeights w;
  const int64_t n_q = hp.n_embd_q(il), n_k = hp.n_embd_k(il), n_v = hp.n_embd_v(il);
  PADDOCK_ASSIGN(w.wq, b.tensor(blk(il, "attn_q.weight"), {hp.n_embd, n_q}, Use::kMulMat));
  PADDOCK_ASSIGN(w.wk, b.tensor(blk(il, "attn_k.weight"), {hp.n_embd, n_k}, Use::kMulMat));
  PADDOCK_ASSIGN(w.wv, b.tensor(blk(il, "attn_v.weight"), {hp.n_embd, n_v}, Use::kMulMat));
  PADDOCK_ASSIGN(w.wo, b.tensor(blk(il, "attn_output.weight"),
                                {hp.layer(il).n_head * hp.head_dim_v, hp.n_embd}, Use::kMulMat));
  PADDOCK_ASSIGN(w.bq, bind_part(b, parts.qkv_bias, blk(il, "attn_q.bias"), {n_q}));
  PADDOCK_ASSIGN(w.bk, bind_part(b, parts.qkv_bias, blk(il, "attn_k.bias"), {n_k}));
  PADDOCK_ASSIGN(w.bv, bind_part(b, parts.qkv_bias, blk(il, "attn_v.bias"), {n_v}));
  PADDOCK_ASSIGN(w.bo, b.optional(blk(il, "attn_output.bias"), {hp.n_embd}));
  PADDOCK_ASSIGN(w.q_norm, bind_part(b, parts.qk_norm, blk(il, "attn_q_norm.weight"), {hp.head_dim_k}));
  PADDOCK_ASSIGN(w.k_norm, bind_part(b, parts.qk_norm, blk(il, "attn_k_norm.weight"), {hp.head_dim_k}));
  PADDOCK_ASSIGN(w.sinks, bind_part(b, parts.sinks, blk(il, "attn_sinks.weight"), {hp.layer(il).n_head}));
  return w;
}

Result<AttnWeights> bind_fused_attention(WeightBinder& b, const HParams& hp, int64_t il) {
  AttnWeights w;
  const int64_t qkv[] = {hp.n_embd_q(il), hp.n_embd_k(il), hp.n_embd_v(il)};
  PADDOCK_ASSIGN(const std::vector<TensorView> parts,
                 b.split_rows(blk(il, "attn_qkv.weight"), hp.n_embd, qkv));
  w.wq = parts[0];
  w.wk = parts[1];
  w.wv = parts[2];
  PADDOCK_ASSIGN(w.wo, b.tensor(blk(il, "attn_output.weight"),
                                {hp.layer(il).n_head * hp.head_dim_v, hp.n_embd}, Use::kMulMat));
  PADDOCK_ASSIGN(w.bo, b.optional(blk(il, "attn_output.bias"), {hp.n_embd}));
  return w;
}

Result<FfnWeights> bind_gated_ffn(WeightBinder& b, const HParams& hp, int64_t il) {
  FfnWeights w;
  const int64_t n_ff = hp.layer(il).n_ff;
  PADDOCK_ASSIGN(w.gate, b.tensor(blk(il, "ffn_gate.weight"), {hp.n_embd, n_ff}, Use::kMulMat));
  PADDOCK_ASSIGN(w.up, b.tensor(blk(il, "ffn_up.weight"), {hp.n_embd, n_ff}, Use::kMulMat));
  PADDOCK_ASSIGN(w.down, b.tensor(blk(il, "ffn_down.weight"), {n_ff, hp.n_embd}, Use::kMulMat));
  return w;
}

Result<MoeWeights> bind_moe_ffn(WeightBinder& b, const HParams& hp, int64_t il, const MoeParams& params,
                                Part biases) {
  if (hp.n_expert == 0)
    return corrupt("layer " + std::to_string(il) + " has experts but the file has no expert_count");
  MoeWeights w;
  w.params = params;
  const int64_t n_ff = hp.n_ff_exp;
  PADDOCK_ASSIGN(w.gate_inp,
                 b.tensor(blk(il, "ffn_gate_inp.weight"), {hp.n_embd, hp.n_expert}, Use::kMulMat));
  PADDOCK_ASSIGN(w.gate_exps,
                 b.tensor(blk(il, "ffn_gate_exps.weight"), {hp.n_embd, n_ff, hp.n_expert}, Use::kMulMatId));
  PADDOCK_ASSIGN(w.up_exps,
                 b.tensor(blk(il, "ffn_up_exps.weight"), {hp.n_embd, n_ff, hp.n_expert}, Use::kMulMatId));
  PADDOCK_ASSIGN(w.down_exps,
                 b.tensor(blk(il, "ffn_down_exps.weight"), {n_ff, hp.n_embd, hp.n_expert}, Use::kMulMatId));
  PADDOCK_ASSIGN(w.gate_inp_b, bind_part(b, biases, blk(il, "ffn_gate_inp.bias"), {hp.n_expert}));
  PADDOCK_ASSIGN(w.gate_exps_b, bind_part(b, biases, blk(il, "ffn_gate_exps.bias"), {n_ff, hp.n_expert}));
  PADDOCK_ASSIGN(w.up_exps_b, bind_part(b, biases, blk(il, "ffn_up_exps.bias"), {n_ff, hp.n_expert}));
  PADDOCK_ASSIGN(w.down_exps_b,
                 bind_part(b, biases, blk(il, "ffn_down_exps.bias"), {hp.n_embd, hp.n_expert}));
  return w;
}

Result<PreNormLayerWeights> bind_pre_norm_layer(WeightBinder& b, const HParams& hp, int64_t il,
                                                const AttnParts& parts) {
  PreNormLayerWeights w;
  PADDOCK_ASSIGN(w.attn_norm, b.tensor(blk(il, "attn_norm.weight"), {hp.n_embd}));
  PADDOCK_ASSIGN(w.attn, bind_attention(b, hp, il, parts));
  PADDOCK_ASSIGN(w.ffn_norm, b.tensor(blk(il, "ffn_norm.weight"), {hp.n_embd}));
  if (parts.moe) {
    PADDOCK_ASSIGN(w.ffn, bind_moe_ffn(b, hp, il,
                                       {.k = static_cast<int32_t>(hp.n_expert_used),
                                        .gating = MoeGating::kSoftmaxTopK,
                                        .norm = hp.expert_weights_norm}));
  } else {
    PADDOCK_ASSIGN(w.ffn, bind_gated_ffn(b, hp, il));
  }
  return w;
}

RopeParams rope_params(const HParams& hp, RopeMode mode) {
  return RopeParams{.mode = mode,
                    .n_dims = static_cast<int32_t>(hp.n_rot),
                    .freq_base = hp.rope_freq_base,
                    .freq_scale = hp.rope_freq_scale,
                    .freq_factors = {},
                    .ext_factor = hp.yarn_ext_factor,
                    .attn_factor = hp.yarn_attn_factor,
                    .beta_fast = hp.yarn_beta_fast,
                    .beta_slow = hp.yarn_beta_slow,
                    .n_ctx_orig = static_cast<int32_t>(hp.n_ctx_orig_yarn)};
}

RopeParams layer_rope(RopeParams r, const LayerParams& l) {
  r.freq_base = l.rope_freq_base;
  r.freq_scale = l.rope_freq_scale;
  return r;
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

TensorView layer_norm(ForwardContext& c, const TensorView& x, const TensorView& weight,
                      const TensorView& bias, std::string_view name, int64_t il) {
  const TensorView n = c.g.norm(x, c.hp.norm_eps, layer_name("norm", il));  // [n, ...]
  const TensorView w = c.g.mul(n, weight, layer_name(std::string(name) + "_w", il));
  return c.g.add(w, bias, layer_name(name, il));  // [n, ...]
}

TensorView linear(ForwardContext& c, const TensorView& w, const std::optional<TensorView>& bias,
                  const TensorView& x, const std::string& name) {
  const TensorView y = c.g.mul_mat(w, x, name);  // [n_out, n]
  return bias ? c.g.add(y, *bias, name) : y;
}

namespace {

// Per-head optional norm, then RoPE unless the model has none (n_rot 0: BERT's absolute
// positions). x [head_dim * n_heads, n_tokens] -> [head_dim, n_heads, n_tokens]
TensorView heads_with_rope(ForwardContext& c, const TensorView& x, int64_t head_dim,
                           const std::optional<TensorView>& head_norm, std::string_view name, int64_t il) {
  TensorView h = x.reshape({head_dim, x.ne[0] / head_dim, x.ne[1]});  // [head_dim, n_heads, n_tokens]
  if (head_norm)
    h = norm(c, h, *head_norm, std::string(name) + "_normed", il);  // [head_dim, n_heads, n_tokens]
  if (c.hp.n_rot == 0) return h;
  return c.g.rope(h, c.pos, layer_rope(c.rope, c.hp.layer(il)), c.rope_factors,
                  layer_name(name, il));  // [head_dim, n_heads, n_tokens]
}

// Tokens [first, first + n) of a [d, heads, n_tokens] view: [d, heads, n].
TensorView rows(const TensorView& t, int64_t first, int64_t n) {
  TensorView r = t.shifted(static_cast<size_t>(first) * t.nb[2]);
  r.ne[2] = n;
  return r;
}

}  // namespace

TensorView attention(ForwardContext& c, int64_t il, const TensorView& x, const AttnWeights& w) {
  const HParams& hp = c.hp;
  const LayerParams& lp = hp.layer(il);
  const int64_t n = c.n_tokens();
  const TensorView q = heads_with_rope(c, linear(c, w.wq, w.bq, x, layer_name("Qcur", il)), hp.head_dim_k,
                                       w.q_norm, "Qcur", il);  // [d_k, n_head, n]
  const TensorView v = linear(c, w.wv, w.bv, x, layer_name("Vcur", il))
                           .reshape({hp.head_dim_v, lp.n_head_kv, n});  // [d_v, n_head_kv, n]
  // K last, so that its rope is the node before its copy into the cache: a GPU backend runs
  // the two as one kernel (src/backend/vulkan/fusion.h).
  const TensorView k = heads_with_rope(c, linear(c, w.wk, w.bk, x, layer_name("Kcur", il)), hp.head_dim_k,
                                       w.k_norm, "Kcur", il);                     // [d_k, n_head_kv, n]
  const TensorView out = c.g.tensor(DType::kF32, {hp.head_dim_v, lp.n_head, n});  // [d_v, n_head, n]
  const float scale = hp.attn_scale > 0 ? hp.attn_scale : 1.0f / std::sqrt(static_cast<float>(hp.head_dim_k));
  const AttnParams params{
      .scale = scale, .softcap = hp.attn_softcap, .causal = hp.causal, .window = lp.window};
  std::vector<PassCells> cells;  // per sequence
  for (const SeqSlice& s : c.seqs) {
    KvCache& kv = *s.kv;
    cells.push_back(kv.pass_cells(il, s.n));
    int64_t row = s.first;
    for (const CellRun& run : cells.back().write) {  // one run, or two where a ring wraps
      c.g.copy(rows(k, row, run.n), kv.k(il, run.cell, run.n),
               layer_name("k_cache", il));  // [d_k, n_head_kv, run.n]
      c.g.copy(rows(v, row, run.n), kv.v(il, run.cell, run.n),
               layer_name("v_cache", il));  // [d_v, n_head_kv, run.n]
      row += run.n;
    }
  }
  const KvCache& first = *c.seqs.front().kv;
  const bool one_call = c.seqs.size() > 1 && std::ranges::all_of(c.seqs, [&](const SeqSlice& s) {
                          return s.kv->same_group(first);
                        });
  if (one_call) {  // one node over the group's cells, each sequence's tokens over its own
    const TensorView gk = first.group_k(il);  // [d_k, n_head_kv, n_seq * n_cells]
    std::vector<AttnSeq> seqs;
    std::vector<int32_t> positions;  // tagged cells: the group's, -1 outside this pass's sequences
    if (!cells.front().positions.empty()) positions.assign(static_cast<size_t>(gk.ne[2]), -1);
    for (size_t i = 0; i < c.seqs.size(); ++i) {
      const SeqSlice& s = c.seqs[i];
      const int64_t at = s.kv->group_cell(il);
      seqs.push_back({static_cast<int32_t>(s.first), static_cast<int32_t>(s.n), static_cast<int32_t>(at),
                      static_cast<int32_t>(cells[i].n_read)});
      if (!positions.empty()) std::ranges::copy(cells[i].positions, positions.begin() + at);
    }
    AttnParams p = params;
    p.cells = positions;
    p.seqs = seqs;
    c.g.attention(q, gk, first.group_v(il), c.pos, p, w.sinks, out,
                  layer_name("__fattn__", il));  // [d_v, n_head, n]
  } else {
    for (size_t i = 0; i < c.seqs.size(); ++i) {
      const SeqSlice& s = c.seqs[i];
      AttnParams p = params;
      p.cells = cells[i].positions;
      c.g.attention(rows(q, s.first, s.n), s.kv->k(il, 0, cells[i].n_read), s.kv->v(il, 0, cells[i].n_read),
                    c.pos.subspan(static_cast<size_t>(s.first), static_cast<size_t>(s.n)), p, w.sinks,
                    rows(out, s.first, s.n), layer_name("__fattn__", il));  // [d_v, n_head, s.n]
    }
  }
  return linear(c, w.wo, w.bo, out.reshape({hp.head_dim_v * lp.n_head, n}),
                layer_name("attn_out", il));  // [n_embd, n]
}

namespace {

// act(gate) * up (gpt-oss: clamped, times up + 1), any shape, named prefix + "_swiglu" etc.
TensorView activate(ForwardContext& c, int64_t il, Act act, const TensorView& gate, const TensorView& up,
                    const std::string& prefix) {
  switch (act) {
    case Act::kGelu: return c.g.geglu(gate, up, layer_name(prefix + "_geglu", il));
    case Act::kSwigluOai:
      return c.g.swiglu_oai(gate, up, 1.702f, 7.0f, layer_name(prefix + "_swiglu_oai", il));
    case Act::kSilu: break;
  }
  return c.g.swiglu(gate, up, layer_name(prefix + "_swiglu", il));
}

// The chosen experts' biases added to their slots, when the model has them.
TensorView expert_bias(ForwardContext& c, const TensorView& x, const std::optional<TensorView>& bias,
                       const TensorView& gate, const std::string& name) {
  return bias ? c.g.add_id(x, *bias, gate, name) : x;
}

}  // namespace

TensorView gated_ffn(ForwardContext& c, int64_t il, const TensorView& x, const FfnWeights& w, Act act) {
  const TensorView gate = c.g.mul_mat(w.gate, x, layer_name("ffn_gate", il));  // [n_ff, n]
  const TensorView up = c.g.mul_mat(w.up, x, layer_name("ffn_up", il));        // [n_ff, n]
  return c.g.mul_mat(w.down, activate(c, il, act, gate, up, "ffn"),
                     layer_name("ffn_out", il));  // [n_embd, n]
}

TensorView moe_ffn(ForwardContext& c, int64_t il, const TensorView& x, const MoeWeights& w) {
  const int32_t k = w.params.k;
  const int64_t n = x.ne[1];
  const TensorView logits =
      linear(c, w.gate_inp, w.gate_inp_b, x, layer_name("ffn_moe_logits", il));               // [n_expert, n]
  const TensorView gate = c.g.moe_gate(logits, w.params, layer_name("ffn_moe_weights", il));  // [n_expert, n]
  const TensorView x3 = x.reshape({x.ne[0], 1, n});
  const std::string gate_name = layer_name("ffn_moe_gate", il), up_name = layer_name("ffn_moe_up", il);
  const TensorView g =
      expert_bias(c, c.g.mul_mat_id(w.gate_exps, x3, gate, k, gate_name), w.gate_exps_b, gate,
                  gate_name);  // [n_ff, k, n]
  const TensorView u = expert_bias(c, c.g.mul_mat_id(w.up_exps, x3, gate, k, up_name), w.up_exps_b, gate,
                                   up_name);                     // [n_ff, k, n]
  const TensorView h = activate(c, il, w.act, g, u, "ffn_moe");  // [n_ff, k, n]
  const std::string down_name = layer_name("ffn_moe_down", il);
  const TensorView d = expert_bias(c, c.g.mul_mat_id(w.down_exps, h, gate, k, down_name), w.down_exps_b, gate,
                                   down_name);                 // [n_embd, k, n]
  return c.g.moe_sum(d, gate, layer_name("ffn_moe_out", il));  // [n_embd, n]
}

void keep_output_rows(ForwardContext& c, int64_t il, TensorView& cur, TensorView& residual) {
  if (!c.last_layer(il) || static_cast<int64_t>(c.out_rows.size()) == c.n_tokens()) return;
  cur = c.g.get_rows(cur, c.out_rows, layer_name("attn_out_rows", il));       // [n, n_out]
  residual = c.g.get_rows(residual, c.out_rows, layer_name("inp_rows", il));  // [n, n_out]
}

TensorView pre_norm_layer(ForwardContext& c, int64_t il, const TensorView& x, const PreNormLayerWeights& w) {
  TensorView residual = x;
  TensorView a = attention(c, il, norm(c, x, w.attn_norm, "attn_norm", il), w.attn);  // [n_embd, n_tokens]
  keep_output_rows(c, il, a, residual);
  const TensorView ffn_inp = c.g.add(residual, a, layer_name("ffn_inp", il));  // [n_embd, n]
  const TensorView normed = norm(c, ffn_inp, w.ffn_norm, "ffn_norm", il);
  const TensorView f = std::holds_alternative<MoeWeights>(w.ffn)
                           ? moe_ffn(c, il, normed, std::get<MoeWeights>(w.ffn))
                           : gated_ffn(c, il, normed, std::get<FfnWeights>(w.ffn));  // [n_embd, n]
  return c.g.add(ffn_inp, f, layer_name("l_out", il));                               // [n_embd, n]
}

TensorView lm_head(ForwardContext& c, const TensorView& x, const EmbdHeadWeights& w) {
  c.g.set_layer(c.hp.n_layer);
  const TensorView h = norm(c, x, w.output_norm, "result_norm", -1);  // [n_embd, n_out]
  if (c.head == Head::kHidden) return h;
  return c.g.mul_mat(w.output, h, "result_output");  // [n_vocab, n_out]
}

}  // namespace paddock
