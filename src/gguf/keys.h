// Reads an architecture's GGUF keys ("<arch>.embedding_length", ...) with errors that name
// the key. Sizes are bounded (1 .. 2^24) so products of a few of them stay far from
// overflow. Per-layer keys may be one value for every layer or an array of n_layer values,
// as llama.cpp reads attention.head_count and feed_forward_length.
//   KeyReader r(file, "llama");
//   PADDOCK_ASSIGN(int64_t n_embd, r.required_int("embedding_length"));
//   PADDOCK_ASSIGN(std::vector<int64_t> n_ff, r.per_layer_int("feed_forward_length", n_layer));
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "gguf/gguf.h"

namespace paddock::gguf {

// llama.cpp's limit (LLAMA_MAX_LAYERS); it also bounds the per-layer tables.
inline constexpr int64_t kMaxLayers = 512;

class KeyReader {
 public:
  KeyReader(const File& f, std::string_view arch) : f_(f), prefix_(std::string(arch) + ".") {}

  // "<arch>.<key>"
  std::string name(std::string_view key) const { return prefix_ + std::string(key); }
  bool has(std::string_view key) const { return f_.find(name(key)) != nullptr; }

  Result<int64_t> required_int(std::string_view key) const;
  Result<int64_t> optional_int(std::string_view key, int64_t fallback) const;
  Result<float> optional_float(std::string_view key, float fallback) const;
  std::optional<std::string_view> string(std::string_view key) const { return f_.get_string(name(key)); }
  // One size per layer: a scalar repeated, an array of exactly n_layer, or, when absent,
  // `fallback` per layer (absent without a fallback is an error). n_layer: 1..kMaxLayers.
  Result<std::vector<int64_t>> per_layer_int(std::string_view key, int64_t n_layer,
                                             std::optional<std::vector<int64_t>> fallback = std::nullopt) const;

 private:
  const File& f_;
  std::string prefix_;
};

}  // namespace paddock::gguf
