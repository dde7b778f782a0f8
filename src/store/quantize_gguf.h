// `create --quantize`: rewrites an F32/F16/BF16 GGUF model as a llama.cpp file type (Q4_K_M,
// Q8_0, ...), choosing each tensor's type with quant/mix.h's plan_mix exactly as
// llama-quantize does (no importance matrix) and quantizing with the reference row
// quantizers, so the result loads in llama.cpp and in paddock. It matches store::QuantizeFn.
// Invariants: the source stays mapped and is streamed tensor by tensor, a bounded chunk of
// rows at a time, so memory stays small whatever the model's size. All metadata is copied
// in order, then general.quantization_version and general.file_type are set at the end;
// the alignment is kept and tensors are written in llama-quantize's order (by layer, then
// name): for the same source the file is byte-identical to llama-quantize's. dst appears
// only when complete (written beside it, then renamed).
//   PADDOCK_TRY(quantize_gguf("model-f16.gguf", "q4_K_M", "model-q4_k_m.gguf", nullptr));
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"
#include "quant/mix.h"
#include "store/create.h"

namespace paddock::store {

// The file types quantize_gguf writes, as a user may spell them: case-insensitive, with
// llama-quantize's aliases Q3_K/Q4_K/Q5_K for the _M mixes (Ollama accepts Q4_K). IQ types
// are refused (their mixes need an importance matrix). The error is Ollama's text:
// "unsupported quantization type X - supported types are F32, F16, ...".
Result<FileType> parse_quantize_type(std::string_view type);
// "F32, F16, BF16, Q4_0, ..." in the order errors and docs list them.
std::string supported_quantize_types();

// Reads the GGUF at src (F32, F16 or BF16 tensors only: anything else gets Ollama's
// "quantization is only supported for F16, BF16 and F32 models") and writes it as `type`
// to dst. progress (may be empty) receives "quantizing F16 model to Q4_K_M" with total and
// completed source bytes after each chunk.
Status quantize_gguf(const std::string& src, std::string_view type, const std::string& dst,
                     const CreateProgressFn& progress);

}  // namespace paddock::store
