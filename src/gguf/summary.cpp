#include "gguf/summary.h"

#include <array>
#include <cstdio>
#include <map>

#include "base/checked_math.h"

namespace paddock::gguf {

namespace {
// Indexed by llama_ftype; empty for ids llama.cpp retired (4-6 Q4_1_SOME_F16/Q4_2/Q4_3,
// 33-35 the Q4_0_N_M repacks). 38 is llama-quantize's MXFP4_MOE mix (experts MXFP4).
constexpr std::array<std::string_view, 39> kFileTypes = {
    "F32",    "F16",    "Q4_0",   "Q4_1",    "",       "",       "",       "Q8_0",   "Q5_0",      "Q5_1",
    "Q2_K",   "Q3_K_S", "Q3_K_M", "Q3_K_L",  "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K",      "IQ2_XXS",
    "IQ2_XS", "Q2_K_S", "IQ3_XS", "IQ3_XXS", "IQ1_S",  "IQ4_NL", "IQ3_S",  "IQ3_M",  "IQ2_S",     "IQ2_M",
    "IQ4_XS", "IQ1_M",  "BF16",   "",        "",       "",       "TQ1_0",  "TQ2_0",  "MXFP4_MOE",
};
}  // namespace

std::optional<std::string_view> file_type_name(uint64_t ftype) {
  // Bit 10 (LLAMA_FTYPE_GUESSED) marks a type llama.cpp inferred rather than read.
  ftype &= ~uint64_t{1024};
  if (ftype >= kFileTypes.size() || kFileTypes[ftype].empty()) return std::nullopt;
  return kFileTypes[ftype];
}

std::string human_count(uint64_t n) {
  constexpr std::array<std::pair<double, const char*>, 4> kUnits = {
      {{1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}}};
  for (const auto& [scale, suffix] : kUnits) {
    if (static_cast<double>(n) >= scale) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.1f%s", static_cast<double>(n) / scale, suffix);
      return buf;
    }
  }
  return std::to_string(n);
}

ModelSummary summarize(const File& f) {
  ModelSummary s;
  if (auto a = f.get_string("general.architecture")) s.architecture = std::string(*a);
  if (s.architecture) {
    s.context_length = f.get_int(*s.architecture + ".context_length");
    s.embedding_length = f.get_int(*s.architecture + ".embedding_length");
  }
  std::map<std::string_view, std::pair<uint64_t, uint64_t>> by_type;  // name -> (tensors, elements)
  for (const TensorInfo& t : f.tensors()) {
    if (!checked_add(s.parameters, t.n_elements, &s.parameters)) s.parameters = UINT64_MAX;
    auto& [count, elements] = by_type[dtype_name(t.type)];
    ++count;
    if (!checked_add(elements, t.n_elements, &elements)) elements = UINT64_MAX;
  }
  std::string_view dominant;
  uint64_t dominant_elements = 0;
  for (const auto& [name, ce] : by_type) {
    s.tensor_types.emplace_back(std::string(name), ce.first);
    if (ce.second > dominant_elements) dominant = name, dominant_elements = ce.second;
  }
  if (const Value* ft = f.find("general.file_type")) {
    if (auto id = ft->as_u64()) {
      if (auto name = file_type_name(*id)) s.file_type = std::string(*name);
    }
  }
  s.quantization = s.file_type ? *s.file_type : std::string(dominant);
  if (auto m = f.get_string("tokenizer.ggml.model")) s.tokenizer_model = std::string(*m);
  if (const Value* tokens = f.get_array("tokenizer.ggml.tokens")) s.vocab_size = tokens->items.size();
  s.chat_template = f.get_string("tokenizer.chat_template").has_value();
  if (auto l = f.get_string("general.license")) s.license = std::string(*l);
  return s;
}

}  // namespace paddock::gguf
