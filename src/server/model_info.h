// /api/show's model_info: the GGUF's metadata as JSON, as Ollama shows it: every key except
// general.name and tokenizer.chat_template, arrays longer than 5 as [] unless verbose, and
// general.parameter_count summed over the tensors. Clients read "<arch>.context_length" here.
//   out["model_info"] = model_info_json(*file, req.verbose);
#pragma once

#include "gguf/gguf.h"
#include "server/requests.h"

namespace paddock::server {

Json model_info_json(const gguf::File& file, bool verbose);

}  // namespace paddock::server
