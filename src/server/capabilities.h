// What a model can do, as /api/show (and so `paddock show`) reports it: derived from the
// template the model actually uses (a PromptTemplate from choose_template, whose flags the
// chat routes enforce for `tools` and `think`) and from its GGUF, in Ollama's order.
//   auto caps = model_capabilities(info, &tmpl, file.get());  // {"completion", "tools", ...}
#pragma once

#include <string>
#include <vector>

#include "gguf/gguf.h"
#include "server/prompt.h"
#include "store/store.h"

namespace paddock::server {

// `tmpl` or `file` may be null (no usable template / unreadable model file). A capability
// list stored in the model's config wins, as in Ollama.
std::vector<std::string> model_capabilities(const store::ModelInfo& info, const PromptTemplate* tmpl,
                                            const gguf::File* file);

}  // namespace paddock::server
