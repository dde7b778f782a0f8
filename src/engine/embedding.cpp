#include "engine/embedding.h"

#include <algorithm>
#include <vector>

#include "model/model.h"

namespace paddock::engine {

Result<std::vector<float>> embed(const Model& model, Backend& be, KvCache& kv, std::span<const int32_t> tokens,
                                 int64_t n_batch) {
  if (tokens.empty()) return invalid_argument("embedding input: expected at least one token, found none");
  if (static_cast<int64_t>(tokens.size()) > kv.n_ctx()) {
    return invalid_argument("the input length exceeds the context length");
  }
  if (!model.hparams().causal && static_cast<int64_t>(tokens.size()) > n_batch) {
    return invalid_argument("the input length (" + std::to_string(tokens.size()) +
                            " tokens) exceeds the batch size (" + std::to_string(n_batch) + ")");
  }
  const Pooling pooling = model.hparams().pooling;
  const auto n_embd = static_cast<size_t>(model.hparams().n_embd);
  kv.clear();
  std::vector<double> sum(n_embd, 0.0);
  std::vector<float> picked;
  std::vector<int32_t> pos;
  for (size_t i = 0; i < tokens.size();) {
    const size_t n = std::min(static_cast<size_t>(n_batch), tokens.size() - i);
    pos.resize(n);
    for (size_t j = 0; j < n; ++j) pos[j] = static_cast<int32_t>(i + j);
    const bool last_chunk = i + n == tokens.size();
    Outputs outputs = Outputs::kAll;
    if (pooling == Pooling::kCls) outputs = i == 0 ? Outputs::kAll : Outputs::kNone;
    if (pooling == Pooling::kLast) outputs = last_chunk ? Outputs::kLast : Outputs::kNone;
    const SeqInput in{.kv = &kv, .tokens = tokens.subspan(i, n), .positions = pos, .outputs = outputs};
    PADDOCK_ASSIGN(std::vector<std::vector<float>> out,
                   model.forward_batch(be, std::span(&in, 1), Head::kHidden));
    const std::vector<float>& rows = out[0];
    if (pooling == Pooling::kCls && i == 0)
      picked.assign(rows.begin(), rows.begin() + static_cast<ptrdiff_t>(n_embd));
    if (pooling == Pooling::kLast && last_chunk) picked = rows;
    if (pooling == Pooling::kMean || pooling == Pooling::kNone) {
      for (size_t r = 0; r < n; ++r) {
        for (size_t d = 0; d < n_embd; ++d) sum[d] += rows[r * n_embd + d];
      }
    }
    i += n;
  }
  if (!picked.empty()) return picked;
  std::vector<float> mean(n_embd);
  for (size_t d = 0; d < n_embd; ++d)
    mean[d] = static_cast<float>(sum[d] / static_cast<double>(tokens.size()));
  return mean;
}

std::vector<int32_t> truncate_input(std::vector<int32_t> ids, int64_t n_ctx, const Tokenizer& tok) {
  if (static_cast<int64_t>(ids.size()) <= n_ctx || n_ctx <= 0) return ids;
  const int32_t last = ids.back();
  ids.resize(static_cast<size_t>(n_ctx));
  if ((tok.add_eos() && last == tok.eos()) || (tok.sep() >= 0 && last == tok.sep())) ids.back() = last;
  return ids;
}

}  // namespace paddock::engine
