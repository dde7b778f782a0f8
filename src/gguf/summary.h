// What `paddock show` (and later /api/show) reports about a GGUF model: architecture,
// parameter count, hyperparameters, quantization, tokenizer. Pure function of a parsed File;
// absent or wrongly typed keys become nullopt, never errors.
//   ModelSummary s = summarize(*file); s.parameters; s.quantization;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gguf/gguf.h"

namespace paddock::gguf {

struct ModelSummary {
  std::optional<std::string> architecture;  // general.architecture
  uint64_t parameters = 0;                  // sum of the tensors' element counts (saturates)
  std::optional<int64_t> context_length;    // <arch>.context_length
  std::optional<int64_t> embedding_length;  // <arch>.embedding_length
  std::optional<std::string> file_type;     // general.file_type as a label ("Q4_K_M")
  std::vector<std::pair<std::string, uint64_t>> tensor_types;  // type name -> tensor count, by name
  std::string quantization;  // file_type, else the type holding the most elements ("" without tensors)
  std::optional<std::string> tokenizer_model;  // tokenizer.ggml.model
  std::optional<uint64_t> vocab_size;          // items in tokenizer.ggml.tokens
  bool chat_template = false;                  // tokenizer.chat_template present
  std::optional<std::string> license;          // general.license
};

ModelSummary summarize(const File& f);

// llama.cpp's llama_ftype as Ollama names it ("F16", "Q4_K_M"); nullopt for unknown or retired ids.
std::optional<std::string_view> file_type_name(uint64_t ftype);

// Parameter counts the way `show` prints them: 999, 292.3K, 15.2M, 1.2B.
std::string human_count(uint64_t n);

}  // namespace paddock::gguf
