#include "model/registry.h"

#include <array>
#include <string>

#include "model/arch/archs.h"

namespace paddock {

namespace {
constexpr std::array kArchs = {
    ArchEntry{"bert", load_bert},
    ArchEntry{"gemma2", load_gemma2, gemma2_layer_params},
    ArchEntry{"gemma3", load_gemma3, gemma3_layer_params},
    ArchEntry{"gpt-oss", load_gptoss, gptoss_layer_params},
    ArchEntry{"llama", load_llama},
    ArchEntry{"nomic-bert", load_nomic_bert},
    ArchEntry{"phi3", load_phi3},
    ArchEntry{"qwen2", load_qwen2},
    ArchEntry{"qwen3", load_qwen3},
    ArchEntry{"qwen3moe", load_qwen3moe},
};
static_assert(kArchs.size() == 10, "one row per loader in model/arch/ (bert.cpp and gemma.cpp have two)");
}  // namespace

std::span<const ArchEntry> architectures() { return kArchs; }

Result<HParams> arch_hparams(const gguf::File& file) {
  const std::optional<std::string_view> arch = file.get_string("general.architecture");
  if (!arch) return corrupt("missing key general.architecture (expected a string)");
  PADDOCK_ASSIGN(HParams hp, load_hparams(file, *arch));
  for (const ArchEntry& e : kArchs) {
    if (e.name == *arch && e.layer_params != nullptr) PADDOCK_TRY(e.layer_params(file, hp));
  }
  return hp;
}

Result<std::unique_ptr<Model>> load_model(const gguf::File& file, Backend& backend) {
  const std::optional<std::string_view> arch = file.get_string("general.architecture");
  if (!arch) return corrupt("missing key general.architecture (expected a string)");
  for (const ArchEntry& e : kArchs) {
    if (e.name != *arch) continue;
    backend.adopt_weight_file(file.bytes(), file.is_file_mapping());
    std::unique_ptr<Buffer> weights = wrap_host_memory(file.bytes());
    PADDOCK_ASSIGN(std::unique_ptr<Model> model, e.load(file, backend, *weights));
    model->own_weights(std::move(weights));
    return model;
  }
  std::string names;
  for (const ArchEntry& e : kArchs) names += (names.empty() ? "" : ", ") + std::string(e.name);
  return unsupported("architecture \"" + std::string(*arch) + "\" is not supported (supported: " + names +
                     ")");
}

}  // namespace paddock
