#include "server/capabilities.h"

namespace paddock::server {

std::vector<std::string> model_capabilities(const store::ModelInfo& info, const PromptTemplate* tmpl,
                                            const gguf::File* file) {
  if (!info.config.capabilities.empty()) return info.config.capabilities;
  std::vector<std::string> caps;
  // An embedding model is one with a pooling type (Ollama's rule); everything else completes.
  const std::string arch = file ? std::string(file->get_string("general.architecture").value_or("")) : "";
  const bool embedding = file && file->find(arch + ".pooling_type") != nullptr;
  caps.push_back(embedding ? "embedding" : "completion");
  if (tmpl) {
    if (tmpl->supports_tools) caps.push_back("tools");
    if (tmpl->supports_insert) caps.push_back("insert");
  }
  if (!info.projector_paths.empty()) caps.push_back("vision");
  if (tmpl && !tmpl->think_tags.first.empty()) caps.push_back("thinking");
  return caps;
}

}  // namespace paddock::server
