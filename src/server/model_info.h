// /api/show's model_info: the GGUF's metadata as JSON, as Ollama shows it: every key except
// general.name and tokenizer.chat_template, arrays longer than 5 as [] unless verbose, and
// general.parameter_count summed over the tensors. Clients read "<arch>.context_length" here.
//   out["model_info"] = model_info_json(*file, req.verbose);
#pragma once

#include <string>

#include "gguf/gguf.h"
#include "server/requests.h"

namespace paddock::server {

Json model_info_json(const gguf::File& file, bool verbose);

// Whether a GGUF holds an embedding model: it names a pooling type (<arch>.pooling_type), as
// Ollama decides. Such a model has the capability "embedding" and neither "completion" nor a
// chat. The path form remembers its answer per path (blobs never change) and is false for a
// file that does not open.
bool is_embedding_model(const gguf::File& file);
bool is_embedding_model(const std::string& path);

}  // namespace paddock::server
