#include "model/hparams.h"

#include <cmath>

namespace paddock {

namespace {

// Sizes beyond this are not a model paddock can run; bounding them keeps products of a few
// of them far from overflow.
constexpr int64_t kMaxDim = int64_t{1} << 24;

class KeyReader {
 public:
  KeyReader(const gguf::File& f, std::string_view arch) : f_(f), prefix_(std::string(arch) + ".") {}

  Result<int64_t> required_int(std::string_view key) const {
    const std::string name = prefix_ + std::string(key);
    if (f_.find(name) == nullptr) return corrupt("missing key " + name);
    return check_dim(name, f_.get_int(name));
  }
  Result<int64_t> optional_int(std::string_view key, int64_t fallback) const {
    const std::string name = prefix_ + std::string(key);
    if (f_.find(name) == nullptr) return fallback;
    return check_dim(name, f_.get_int(name));
  }
  Result<float> optional_float(std::string_view key, float fallback) const {
    const std::string name = prefix_ + std::string(key);
    if (f_.find(name) == nullptr) return fallback;
    const std::optional<double> v = f_.get_float(name);
    if (!v || !std::isfinite(*v)) return corrupt("key " + name + ": expected a finite number");
    return static_cast<float>(*v);
  }
  std::optional<std::string_view> string(std::string_view key) const {
    return f_.get_string(prefix_ + std::string(key));
  }
  const std::string& prefix() const { return prefix_; }

 private:
  static Result<int64_t> check_dim(const std::string& name, std::optional<int64_t> v) {
    if (!v) return corrupt("key " + name + ": expected an integer");
    if (*v <= 0 || *v > kMaxDim) {
      return corrupt("key " + name + ": expected 1.." + std::to_string(kMaxDim) + ", found " +
                     std::to_string(*v));
    }
    return *v;
  }

  const gguf::File& f_;
  std::string prefix_;
};

}  // namespace

Result<HParams> load_hparams(const gguf::File& file, std::string_view arch) {
  const KeyReader r(file, arch);
  HParams hp;
  hp.arch = std::string(arch);
  PADDOCK_ASSIGN(hp.n_embd, r.required_int("embedding_length"));
  PADDOCK_ASSIGN(hp.n_layer, r.required_int("block_count"));
  PADDOCK_ASSIGN(hp.n_head, r.required_int("attention.head_count"));
  PADDOCK_ASSIGN(hp.n_head_kv, r.optional_int("attention.head_count_kv", hp.n_head));
  PADDOCK_ASSIGN(hp.n_ff, r.required_int("feed_forward_length"));
  PADDOCK_ASSIGN(hp.n_ctx_train, r.optional_int("context_length", 2048));
  if (hp.n_head % hp.n_head_kv != 0) {
    return corrupt(r.prefix() + "attention.head_count (" + std::to_string(hp.n_head) +
                   "): expected a multiple of attention.head_count_kv, found " +
                   std::to_string(hp.n_head_kv));
  }
  if (hp.n_embd % hp.n_head != 0 && file.find(r.prefix() + "attention.key_length") == nullptr) {
    return corrupt(r.prefix() + "embedding_length (" + std::to_string(hp.n_embd) +
                   "): not a multiple of attention.head_count and no attention.key_length");
  }
  PADDOCK_ASSIGN(hp.head_dim_k, r.optional_int("attention.key_length", hp.n_embd / hp.n_head));
  PADDOCK_ASSIGN(hp.head_dim_v, r.optional_int("attention.value_length", hp.head_dim_k));
  PADDOCK_ASSIGN(hp.n_rot, r.optional_int("rope.dimension_count", hp.head_dim_k));
  if (hp.n_rot % 2 != 0 || hp.n_rot > hp.head_dim_k) {
    return corrupt(r.prefix() + "rope.dimension_count: expected an even number <= head dim " +
                   std::to_string(hp.head_dim_k) + ", found " + std::to_string(hp.n_rot));
  }
  PADDOCK_ASSIGN(hp.rms_eps, r.optional_float("attention.layer_norm_rms_epsilon", -1.0f));
  if (!(hp.rms_eps > 0))
    return corrupt("missing or non-positive key " + r.prefix() + "attention.layer_norm_rms_epsilon");
  PADDOCK_ASSIGN(hp.rope_freq_base, r.optional_float("rope.freq_base", 10000.0f));
  if (!(hp.rope_freq_base > 0)) return corrupt("key " + r.prefix() + "rope.freq_base: expected > 0");

  const std::string_view scaling = r.string("rope.scaling.type").value_or("none");
  PADDOCK_ASSIGN(const float factor, r.optional_float("rope.scaling.factor", 0.0f));
  if (scaling == "linear" && factor > 0) {
    hp.rope_freq_scale = 1.0f / factor;
  } else if (scaling != "none" && scaling != "linear") {
    return unsupported("rope scaling type \"" + std::string(scaling) +
                       "\" is not supported (supported: none, linear)");
  }
  if (file.find(r.prefix() + "pooling_type") != nullptr) {
    const std::optional<int64_t> pooling = file.get_int(r.prefix() + "pooling_type");
    if (!pooling || *pooling < 0 || *pooling > 3) {
      return unsupported("key " + r.prefix() + "pooling_type: expected 0..3 (none, mean, cls, last), found " +
                         (pooling ? std::to_string(*pooling) : std::string("a non-integer")));
    }
    hp.pooling = static_cast<Pooling>(*pooling);
  }
  return hp;
}

}  // namespace paddock
