#include "gguf/keys.h"

#include <cmath>

namespace paddock::gguf {

namespace {

constexpr int64_t kMaxDim = int64_t{1} << 24;

Result<int64_t> check_dim(const std::string& name, std::optional<int64_t> v) {
  if (!v) return corrupt("key " + name + ": expected an integer");
  if (*v <= 0 || *v > kMaxDim) {
    return corrupt("key " + name + ": expected 1.." + std::to_string(kMaxDim) + ", found " + std::to_string(*v));
  }
  return *v;
}

}  // namespace

Result<int64_t> KeyReader::required_int(std::string_view key) const {
  if (!has(key)) return corrupt("missing key " + name(key));
  return check_dim(name(key), f_.get_int(name(key)));
}

Result<int64_t> KeyReader::optional_int(std::string_view key, int64_t fallback) const {
  if (!has(key)) return fallback;
  return check_dim(name(key), f_.get_int(name(key)));
}

Result<float> KeyReader::optional_float(std::string_view key, float fallback) const {
  if (!has(key)) return fallback;
  const std::optional<double> v = f_.get_float(name(key));
  if (!v || !std::isfinite(*v)) return corrupt("key " + name(key) + ": expected a finite number");
  return static_cast<float>(*v);
}

Result<std::vector<int64_t>> KeyReader::per_layer_int(std::string_view key, int64_t n_layer,
                                                      std::optional<std::vector<int64_t>> fallback) const {
  if (n_layer < 1 || n_layer > kMaxLayers) {
    return corrupt(name(key) + ": expected 1.." + std::to_string(kMaxLayers) + " layers, found " +
                   std::to_string(n_layer));
  }
  if (!has(key)) {
    if (!fallback) return corrupt("missing key " + name(key));
    return std::move(*fallback);
  }
  const Value* arr = f_.get_array(name(key));
  if (arr == nullptr) {
    PADDOCK_ASSIGN(const int64_t v, required_int(key));
    return std::vector<int64_t>(static_cast<size_t>(n_layer), v);
  }
  if (static_cast<int64_t>(arr->items.size()) != n_layer) {
    return corrupt("key " + name(key) + ": expected one value or " + std::to_string(n_layer) +
                   " (one per layer), found " + std::to_string(arr->items.size()));
  }
  std::vector<int64_t> out;
  out.reserve(arr->items.size());
  for (size_t il = 0; il < arr->items.size(); ++il) {
    PADDOCK_ASSIGN(const int64_t v, check_dim(name(key) + "[" + std::to_string(il) + "]", arr->items[il].as_i64()));
    out.push_back(v);
  }
  return out;
}

}  // namespace paddock::gguf
