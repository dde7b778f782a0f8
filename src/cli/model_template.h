// Which chat template a model uses: the model's TEMPLATE layer (Go, as Ollama's models ship)
// if it has one; otherwise the GGUF's own Jinja template (tokenizer.chat_template) with
// bos/eos taken from its vocabulary; otherwise a plain default.
#pragma once

#include <string>

#include "base/status.h"

namespace paddock::cli {

struct ModelTemplate {
  bool is_go = false;
  std::string text;
  std::string bos_token, eos_token;  // for Jinja templates
};

// `model` is a GGUF file path, or a model name in the store (PADDOCK_MODELS / OLLAMA_MODELS).
Result<ModelTemplate> model_template(const std::string& model);

}  // namespace paddock::cli
