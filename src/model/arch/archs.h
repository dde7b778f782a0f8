// Loaders of the architectures in model/arch/, one per file; the registry table lists them.
#pragma once

#include <memory>

#include "backend/backend.h"
#include "base/status.h"
#include "gguf/gguf.h"
#include "model/model.h"

namespace paddock {

Result<std::unique_ptr<Model>> load_bert(const gguf::File& file, Backend& backend, Buffer& weights);
Result<std::unique_ptr<Model>> load_gemma2(const gguf::File& file, Backend& backend, Buffer& weights);
Result<std::unique_ptr<Model>> load_gemma3(const gguf::File& file, Backend& backend, Buffer& weights);
Result<std::unique_ptr<Model>> load_gptoss(const gguf::File& file, Backend& backend, Buffer& weights);
Result<std::unique_ptr<Model>> load_llama(const gguf::File& file, Backend& backend, Buffer& weights);
Result<std::unique_ptr<Model>> load_nomic_bert(const gguf::File& file, Backend& backend, Buffer& weights);
Result<std::unique_ptr<Model>> load_phi3(const gguf::File& file, Backend& backend, Buffer& weights);
Result<std::unique_ptr<Model>> load_qwen2(const gguf::File& file, Backend& backend, Buffer& weights);
Result<std::unique_ptr<Model>> load_qwen3(const gguf::File& file, Backend& backend, Buffer& weights);
Result<std::unique_ptr<Model>> load_qwen3moe(const gguf::File& file, Backend& backend, Buffer& weights);

// What an architecture sets per layer beyond load_hparams (sliding windows and their RoPE
// bases), read before any weight binds: its loader and the pre-load estimates share it.
Status gemma2_layer_params(const gguf::File& file, HParams& hp);
Status gemma3_layer_params(const gguf::File& file, HParams& hp);
Status gptoss_layer_params(const gguf::File& file, HParams& hp);

}  // namespace paddock
