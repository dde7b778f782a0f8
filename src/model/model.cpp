#include "model/model.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/check.h"

namespace paddock {

KvCacheConfig kv_config(const HParams& hp, int64_t n_ctx, DType type, int64_t n_batch) {
  KvCacheConfig c{.n_ctx = n_ctx,
                  .head_dim_k = hp.head_dim_k,
                  .head_dim_v = hp.head_dim_v,
                  .type = type,
                  .n_batch = n_batch};
  const bool windows =
      std::any_of(hp.layers.begin(), hp.layers.end(), [](const LayerParams& l) { return l.window > 0; });
  for (const LayerParams& l : hp.layers) {
    c.n_head_kv.push_back(l.n_head_kv);
    if (windows) c.window.push_back(l.window);
  }
  return c;
}

Result<std::vector<std::vector<float>>> Model::forward_batch(
    Backend& be, std::span<const SeqInput> seqs, Head head,
    const std::function<void(const Node&)>& after) const {
  if (seqs.empty()) return invalid_argument("forward: expected at least one sequence, found none");
  if (head == Head::kLogits && !has_lm_head()) {
    return invalid_argument("this model (" + hp_.arch + ") makes embeddings only: it cannot generate text");
  }
  std::vector<int32_t> tokens;
  std::vector<int32_t> pos;
  std::vector<SeqSlice> slices;
  std::vector<int32_t> out_rows;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const SeqInput& in = seqs[s];
    PADDOCK_CHECK(in.kv != nullptr);
    const std::string where = seqs.size() > 1 ? "sequence " + std::to_string(s) + ": " : "";
    if (in.tokens.empty())
      return invalid_argument("forward: " + where + "expected at least one token, found none");
    if (in.positions.size() != in.tokens.size()) {
      return invalid_argument("forward: " + where + "expected one position per token (" +
                              std::to_string(in.tokens.size()) + "), found " +
                              std::to_string(in.positions.size()));
    }
    for (size_t o = 0; o < s; ++o) {
      if (seqs[o].kv == in.kv)
        return invalid_argument("forward: " + where + "its KV cache is already in the batch");
    }
    const KvCacheConfig& kc = in.kv->config();
    const KvCacheConfig same = kv_config(hp_, kc.n_ctx, kc.type, kc.n_batch);
    if (kc.n_head_kv != same.n_head_kv || kc.window != same.window || kc.head_dim_k != same.head_dim_k ||
        kc.head_dim_v != same.head_dim_v) {
      return invalid_argument("forward: the KV cache was made for another model shape");
    }
    const int64_t used = in.kv->used();
    // Its tokens see the whole sequence: earlier passes could not have seen this one's.
    if (!hp_.causal && used > 0) {
      return invalid_argument("forward: " + where + "a non-causal model (" + hp_.arch +
                              ") takes a sequence in one pass, from an empty cache");
    }
    for (size_t i = 0; i < in.tokens.size(); ++i) {
      if (in.tokens[i] < 0 || in.tokens[i] >= hp_.n_vocab) {
        return invalid_argument(where + "token id " + std::to_string(in.tokens[i]) +
                                " out of range: the vocabulary has " + std::to_string(hp_.n_vocab) +
                                " tokens");
      }
      // Positions continue the sequence's cache.
      if (in.positions[i] != used + static_cast<int64_t>(i)) {
        return invalid_argument(where + "position " + std::to_string(in.positions[i]) + " at batch index " +
                                std::to_string(i) + ": expected " +
                                std::to_string(used + static_cast<int64_t>(i)));
      }
    }
    PADDOCK_TRY(in.kv->reserve(static_cast<int64_t>(in.tokens.size())));
    const auto first = static_cast<int32_t>(tokens.size());
    const auto n = static_cast<int32_t>(in.tokens.size());
    slices.push_back(SeqSlice{.kv = in.kv, .first = first, .n = n});
    tokens.insert(tokens.end(), in.tokens.begin(), in.tokens.end());
    pos.insert(pos.end(), in.positions.begin(), in.positions.end());
    if (in.outputs == Outputs::kAll) {
      for (int32_t i = 0; i < n; ++i) out_rows.push_back(first + i);
    } else if (in.outputs == Outputs::kLast) {
      out_rows.push_back(first + n - 1);
    }
  }

  std::vector<std::vector<float>> out(seqs.size());
  if (out_rows.empty()) {
    // Nothing to output still needs the K/V rows: run the graph with one output row and drop it.
    out_rows.push_back(static_cast<int32_t>(tokens.size()) - 1);
  }
  Graph g;
  ForwardContext c{.g = g,
                   .hp = hp_,
                   .pos = g.keep(pos),
                   .seqs = slices,
                   .out_rows = g.keep(out_rows),
                   .head = head,
                   .rope = rope(),
                   .rope_factors = rope_factors(seqs.front().kv->n_ctx())};
  const TensorView result = compute(c, tokens);  // [n_vocab or n_embd, n_out]
  PADDOCK_TRY(g.allocate(be.device()));
  PADDOCK_TRY(be.compute(g, after));
  std::vector<float> values(static_cast<size_t>(result.n_elements()));
  result.buffer->get(result.offset,
                     {reinterpret_cast<uint8_t*>(values.data()), values.size() * sizeof(float)});
  const auto width = static_cast<size_t>(result.ne[0]);
  const float* p = values.data();
  size_t row = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const SeqInput& in = seqs[s];
    in.kv->commit(in.tokens);
    const size_t n_out = in.outputs == Outputs::kAll    ? in.tokens.size()
                         : in.outputs == Outputs::kLast ? 1
                                                        : 0;
    out[s].assign(p + row * width, p + (row + n_out) * width);
    row += n_out;
  }
  return out;
}

Result<std::vector<float>> Model::forward(Backend& be, KvCache& kv, std::span<const int32_t> tokens,
                                          std::span<const int32_t> positions, bool all_logits) const {
  const SeqInput in{.kv = &kv,
                    .tokens = tokens,
                    .positions = positions,
                    .outputs = all_logits ? Outputs::kAll : Outputs::kLast};
  PADDOCK_ASSIGN(std::vector<std::vector<float>> out, forward_batch(be, std::span(&in, 1), Head::kLogits));
  return std::move(out[0]);
}

Status Model::shift(Backend& be, KvCache& kv, int64_t first, int64_t n) const {
  PADDOCK_CHECK(first >= 0 && n >= 0 && first + n <= kv.used());
  const std::vector<MovedKeys> moved = kv.remove(first, n);
  if (n == 0 || kv.used() == first) return Status::ok();
  Graph g;
  for (int64_t il = 0; il < hp_.n_layer; ++il) {
    const MovedKeys& m = moved[static_cast<size_t>(il)];
    if (m.delta.empty()) continue;
    g.set_layer(il);  // on the backend that holds the layer's cells
    const size_t mark = g.mark();
    // Rotations compose: rotating a key roped at position p by -n gives the key at p - n
    // (and by 0 leaves it as it is).
    const TensorView k =
        kv.k(il, m.first_cell, static_cast<int64_t>(m.delta.size()));  // [d_k, n_head_kv, cells]
    const TensorView f = g.tensor(DType::kF32, {k.ne[0], k.ne[1], k.ne[2]});
    g.copy(k, f, layer_name("k_shift_in", il));
    RopeParams r = rope_for(il);
    // A pure rotation: the magnitude factor is in the keys already, so it is 1 here, and
    // YaRN's kernel-side 1 + 0.1 ln(1 / freq_scale) is cancelled.
    r.attn_factor = r.ext_factor != 0.0f ? 1.0f / (1.0f + 0.1f * std::log(1.0f / r.freq_scale)) : 1.0f;
    g.copy(g.rope(f, m.delta, r, rope_factors(kv.n_ctx()), layer_name("k_shifted", il)), k,
           layer_name("k_shift", il));
    g.release_since(mark, TensorView{});  // the next layer may reuse this one's F32 rows
  }
  PADDOCK_TRY(g.allocate(be.device()));
  return be.compute(g);
}

}  // namespace paddock
