// Quantization mixes: which type llama.cpp's quantizer (llama_tensor_get_type in
// llama-quant.cpp) gives each tensor of a model for a file type such as Q4_K_M, so files
// paddock writes carry the same per-tensor types as llama-quantize's (and llama.cpp loads
// them). Also the GGUF `general.file_type` ids (llama_ftype).
// Invariants: only K-quant, legacy, float and MXFP4_MOE file types are supported (IQ mixes
// need an importance matrix); decisions follow llama.cpp without an imatrix and with default options
// (no --pure, no output/token-embedding overrides). llama.cpp visits tensors by layer, then
// by name (its weight_name_comparer), and the attn_v / ffn_down counters count in that
// order: plan_mix does the same.
//   std::vector<DType> types = plan_mix(FileType::kQ4_K_M, tensors, model);
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "tensor/dtype.h"

namespace paddock {

// llama_ftype values, as stored in general.file_type.
enum class FileType : uint32_t {
  kAllF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ8_0 = 7,
  kQ5_0 = 8,
  kQ5_1 = 9,
  kQ2_K = 10,
  kQ3_K_S = 11,
  kQ3_K_M = 12,
  kQ3_K_L = 13,
  kQ4_K_S = 14,
  kQ4_K_M = 15,
  kQ5_K_S = 16,
  kQ5_K_M = 17,
  kQ6_K = 18,
  kQ2_K_S = 21,
  kBF16 = 32,
  kMXFP4_MOE = 38,
};

// "Q4_K_M", "F16", ... (llama-quantize's spelling); nullopt for ids paddock cannot write.
std::optional<std::string_view> file_type_name(FileType t);
std::optional<FileType> file_type_from_name(std::string_view name);  // case-insensitive
std::optional<FileType> file_type_from_id(uint32_t id);
// The type most tensors get (llama.cpp's default_type for the ftype).
DType file_type_base(FileType t);

// Whole-model facts the mix depends on.
struct MixModel {
  std::string_view arch = "llama";  // general.architecture; "falcon" has its own rules
  int n_layer = 0;
  int n_head = 1;
  int n_head_kv = 1;
  int n_expert = 0;
  bool is_70b = false;     // llama.cpp's LLM_TYPE_70B (bumps attn_v)
  bool has_output = true;  // an output.weight exists (false: tied to token_embd)
  int n_attention_wv = 0;  // tensors named *attn_v.weight / attn_qkv / attn_kv_b
};

// Where the quantizer is in its walk over the model: the counters llama.cpp advances.
struct MixContext {
  MixModel model;
  int i_attention_wv = 0;
  int i_ffn_down = 0;
};

// One tensor as the planner sees it.
struct MixTensor {
  std::string_view name;
  DType type = DType::kF32;  // its type in the source file
  int n_dims = 2;
  int64_t ne0 = 0;  // row length: a type whose block does not divide it falls back
  int64_t ne2 = 1;  // experts (MXFP4_MOE quantizes tensors with ne2 > 1 to MXFP4)
};

// Whether llama.cpp quantizes this tensor at all (2-D+ weights other than norms, gates of
// experts and a few tiny or positional tensors); others keep their source type.
bool mix_quantizes(std::string_view name, int n_dims);

// The type of one quantizable tensor (mix_quantizes is true) given the walk's state; the
// caller advances ctx.i_attention_wv / i_ffn_down after attn_v / ffn_down tensors.
DType tensor_type_for(FileType ftype, std::string_view name, int64_t ne0, const MixContext& ctx,
                      int64_t ne2 = 1);

// The type of every tensor of a model, in the order given, walking them by layer then name
// as llama.cpp does. model.n_attention_wv and has_output are derived from the names.
std::vector<DType> plan_mix(FileType ftype, std::span<const MixTensor> tensors, MixModel model);

}  // namespace paddock
