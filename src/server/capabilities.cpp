#include "server/capabilities.h"

#include "server/model_info.h"

namespace paddock::server {

std::vector<std::string> model_capabilities(const store::ModelInfo& info, const PromptTemplate* tmpl,
                                            const gguf::File* file) {
  if (!info.config.capabilities.empty()) return info.config.capabilities;
  std::vector<std::string> caps;
  // An embedding model (model_info.h) has no completion: generate and chat refuse it.
  caps.push_back(file && is_embedding_model(*file) ? "embedding" : "completion");
  if (tmpl) {
    if (tmpl->supports_tools) caps.push_back("tools");
    if (tmpl->supports_insert) caps.push_back("insert");
  }
  if (!info.projector_paths.empty()) caps.push_back("vision");
  if (tmpl && tmpl->supports_thinking()) caps.push_back("thinking");
  return caps;
}

}  // namespace paddock::server
