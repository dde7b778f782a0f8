#include "cli/dump_tensors.h"

#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/graph.h"
#include "kv/kv_cache.h"

namespace paddock::cli {

namespace {

// The values a dump line summarises: the last token's row of a 2-D tensor of several tokens
// (as llama.cpp's dump does), else the whole tensor; read through the buffer, row by row.
std::vector<float> summarised_values(const TensorView& t, bool last_row) {
  std::vector<float> out;
  std::vector<float> row(static_cast<size_t>(t.ne[0]));
  const std::span<uint8_t> bytes{reinterpret_cast<uint8_t*>(row.data()), row.size() * sizeof(float)};
  for (int64_t i3 = 0; i3 < t.ne[3]; ++i3) {
    for (int64_t i2 = 0; i2 < t.ne[2]; ++i2) {
      for (int64_t i1 = last_row ? t.ne[1] - 1 : 0; i1 < t.ne[1]; ++i1) {
        t.buffer->get(t.offset + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3], bytes);
        out.insert(out.end(), row.begin(), row.end());
      }
    }
  }
  return out;
}

nlohmann::json node_line(const Node& n) {
  const TensorView& t = n.dst;
  const bool last_row = t.ne[2] == 1 && t.ne[3] == 1 && t.ne[1] > 1;
  const std::vector<float> v = summarised_values(t, last_row);
  double sum = 0;
  double sq = 0;
  for (float x : v) {
    sum += x;
    sq += static_cast<double>(x) * x;
  }
  return nlohmann::json{{"name", n.name},
                        {"op", std::string(op_name(n.op))},
                        {"ne", t.ne},
                        {"last_token_row", last_row},
                        {"first8", std::vector<float>(v.begin(), v.begin() + std::min<size_t>(8, v.size()))},
                        {"sum", sum},
                        {"l2", std::sqrt(sq)}};
}

}  // namespace

Status dump_tensors(const Model& model, Backend& be, const Tokenizer& tok, const std::string& prompt,
                    const std::string& out_path) {
  const std::vector<int32_t> ids = tok.encode(prompt, /*add_special=*/true, /*parse_special=*/false);
  if (ids.empty()) return invalid_argument("--dump-tensors: prompt \"" + prompt + "\" has no tokens");
  PADDOCK_ASSIGN(KvCache kv, KvCache::create(kv_config(model.hparams(), static_cast<int64_t>(ids.size()), DType::kF32),
                                             be));
  std::vector<int32_t> pos(ids.size());
  std::iota(pos.begin(), pos.end(), 0);
  std::FILE* f = std::fopen(out_path.c_str(), "w");
  if (f == nullptr) return io_error("--dump-tensors: cannot write " + out_path);
  std::fprintf(f, "%s\n", nlohmann::json{{"prompt", prompt}, {"ids", ids}}.dump().c_str());
  const SeqInput in{.kv = &kv, .tokens = ids, .positions = pos, .outputs = Outputs::kLast};
  const Result<std::vector<std::vector<float>>> out =
      model.forward_batch(be, std::span(&in, 1), Head::kLogits, [&](const Node& n) {
        if (n.dst.type == DType::kF32 && n.dst.nb[0] == sizeof(float)) {
          std::fprintf(f, "%s\n", node_line(n).dump().c_str());
        }
      });
  const bool written = std::fclose(f) == 0;
  if (!out.ok()) return out.status();
  return written ? Status::ok() : io_error("--dump-tensors: writing " + out_path + " failed");
}

}  // namespace paddock::cli
