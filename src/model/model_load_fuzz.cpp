// Fuzzes model loading: any bytes either fail to parse or load with a Status, or load into
// a model whose first forward pass on token 0 runs (sanitizers watch both).
#include <cstddef>
#include <cstdint>
#include <span>

#include "backend/ref/ref_backend.h"
#include "model/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace paddock;
  auto file = gguf::File::parse(std::span<const uint8_t>(data, size));
  if (!file.ok()) return 0;
  auto backend = make_ref_backend();
  auto model = load_model(**file, *backend);
  if (!model.ok()) return 0;
  const HParams& hp = (*model)->hparams();
  // Keep each input cheap: skip models whose single step would be slow.
  int64_t layer_weights = 0;  // per n_embd
  for (const LayerParams& l : hp.layers) layer_weights += 4 * hp.n_embd + 3 * l.n_ff;
  if (hp.n_embd * (hp.n_vocab + layer_weights) > (int64_t{1} << 24)) return 0;
  auto kv = KvCache::create(kv_config((*model)->hparams(), 2, DType::kF16), backend->device());
  if (!kv.ok()) return 0;
  const int32_t token = 0, pos = 0;
  (void)(*model)->forward(*backend, *kv, std::span(&token, 1), std::span(&pos, 1), false);
  return 0;
}
