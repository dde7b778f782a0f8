// `paddock eval --dump-tensors OUT`: one forward pass over a prompt (BOS added as the
// vocabulary says, F32 KV cache, as the golden dumps were made), writing every named node's
// output as a JSON line in the shape of ../shared/fixtures/golden/layers/*.layers.jsonl:
// name, op, ne, last_token_row, first8, sum, l2. scripts/compare_layers.py then names the
// first node where two dumps part.
//   PADDOCK_TRY(dump_tensors(model, be, tokenizer, "Once upon a time", "out.jsonl"));
#pragma once

#include <string>

#include "backend/backend.h"
#include "base/status.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace paddock::cli {

Status dump_tensors(const Model& model, Backend& be, const Tokenizer& tok, const std::string& prompt,
                    const std::string& out_path);

}  // namespace paddock::cli
