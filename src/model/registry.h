// The one explicit table of supported architectures (general.architecture -> loader).
// Adding an architecture = one file in model/arch/ + one row in kArchs (registry.cpp).
//   PADDOCK_ASSIGN(std::unique_ptr<Model> m, load_model(file, backend));
#pragma once

#include <memory>
#include <span>
#include <string_view>

#include "backend/backend.h"
#include "base/status.h"
#include "gguf/gguf.h"
#include "model/model.h"

namespace paddock {

// weights: the buffer over the file's bytes that bound weight views name.
using ArchLoader = Result<std::unique_ptr<Model>> (*)(const gguf::File& file, Backend& backend,
                                                      Buffer& weights);

struct ArchEntry {
  std::string_view name;  // general.architecture
  ArchLoader load;
  // What it sets per layer beyond load_hparams (sliding windows), or null.
  Status (*layer_params)(const gguf::File& file, HParams& hp) = nullptr;
};

std::span<const ArchEntry> architectures();

// Reads general.architecture and loads with that row's loader. An unknown architecture is
// kUnsupported with a message naming the supported ones. The file must outlive the model and
// the backend: the backend adopts its tensor data (Backend::adopt_weight_file).
Result<std::unique_ptr<Model>> load_model(const gguf::File& file, Backend& backend);

// The hyperparameters the file's architecture loads with, per-layer windows included, without
// binding a weight: what placement and memory estimates need before a load.
Result<HParams> arch_hparams(const gguf::File& file);

}  // namespace paddock
