// `create`: builds a model in the store from a Modelfile, as Ollama's CreateHandler does.
// FROM may be a GGUF file path (relative to base_dir, absolute, or ~), a blob digest
// (sha256:<hex>) already in the store, or an existing model name (its layers are reused,
// marked with "from"). TEMPLATE/SYSTEM/MESSAGE replace the base's layers, LICENSE appends,
// PARAMETERs merge over the base's params. Blobs are de-duplicated by digest; the config
// blob is derived from the GGUF; the manifest is written last, so a create that dies at any
// point leaves the store as it was (plus complete, unreferenced blobs that prune removes).
// The whole create holds the store's shared lock, so a concurrent delete/prune cannot
// remove a blob between its import and the manifest that references it.
//   PADDOCK_TRY(create_model(store, name, modelfile_text, {.base_dir = dir, .on_progress = print}));
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "store/modelfile.h"
#include "store/name.h"
#include "store/store.h"

namespace paddock::store {

// One progress line, Ollama's /api/create stream: "parsing modelfile", "using existing layer
// sha256:...", "creating new layer sha256:...", "quantizing F16 model to Q4_K_M",
// "writing manifest", "success".
struct CreateProgress {
  std::string status;
  std::string digest;  // set with total/completed while quantizing
  uint64_t total = 0, completed = 0;
};
using CreateProgressFn = std::function<void(const CreateProgress&)>;

// The quantizer extension point (implemented where the quant kernels live): reads the GGUF at
// src_path and writes `type` (e.g. "Q4_K_M") to dst_path, reporting progress.
using QuantizeFn = std::function<Status(const std::string& src_path, std::string_view type,
                                        const std::string& dst_path, const CreateProgressFn& progress)>;

struct CreateOptions {
  std::string base_dir = ".";  // FROM/ADAPTER paths are relative to this (the Modelfile's folder)
  CreateProgressFn on_progress;
  std::string quantize;  // target type; empty = keep the source's
  QuantizeFn quantizer;  // required when quantize is set
};

// Parses `modelfile_text` ("parsing modelfile") and creates `name`.
Status create_model(Store& store, const Name& name, std::string_view modelfile_text,
                    const CreateOptions& opts);
// Creates `name` from an already parsed Modelfile.
Status create_model(Store& store, const Name& name, const Modelfile& mf, const CreateOptions& opts);

// Ollama's parameter-count label for model_type: "292.10K", "7.62B".
std::string parameter_count_label(uint64_t n);

}  // namespace paddock::store
