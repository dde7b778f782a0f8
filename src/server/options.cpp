#include "server/options.h"

#include <algorithm>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"

namespace paddock::server {

namespace {

using Json = nlohmann::ordered_json;

Status type_error(const std::string& key, const char* what) {
  return invalid_argument("option \"" + key + "\" must be of type " + what);
}

Result<store::ParamValue> convert(const std::string& key, store::ParamType type, const Json& v) {
  switch (type) {
    case store::ParamType::kInt:
      // Go accepts a float for an int option when it is integral (JSON numbers are float64).
      if (v.is_number_integer()) return store::ParamValue(v.get<int64_t>());
      if (v.is_number_float() &&
          v.get<double>() == static_cast<double>(static_cast<int64_t>(v.get<double>()))) {
        return store::ParamValue(static_cast<int64_t>(v.get<double>()));
      }
      return type_error(key, "integer");
    case store::ParamType::kFloat:
      if (v.is_number()) return store::ParamValue(v.get<double>());
      return type_error(key, "float32");
    case store::ParamType::kBool:
      if (v.is_boolean()) return store::ParamValue(v.get<bool>());
      return type_error(key, "boolean");
    case store::ParamType::kString:
      if (v.is_string()) return store::ParamValue(v.get<std::string>());
      return type_error(key, "string");
    case store::ParamType::kStringList: {
      std::vector<std::string> list;
      if (v.is_string()) {
        list.push_back(v.get<std::string>());
        return store::ParamValue(list);
      }
      if (!v.is_array()) return type_error(key, "array of strings");
      for (const Json& e : v) {
        if (!e.is_string()) return type_error(key, "array of strings");
        list.push_back(e.get<std::string>());
      }
      return store::ParamValue(list);
    }
  }
  return type_error(key, "a known type");
}

std::optional<int64_t> get_int(const std::map<std::string, store::ParamValue>& m, const char* k) {
  const auto it = m.find(k);
  if (it == m.end()) return std::nullopt;
  if (const auto* i = std::get_if<int64_t>(&it->second)) return *i;
  return std::nullopt;
}

std::optional<double> get_float(const std::map<std::string, store::ParamValue>& m, const char* k) {
  const auto it = m.find(k);
  if (it == m.end()) return std::nullopt;
  if (const auto* d = std::get_if<double>(&it->second)) return *d;
  if (const auto* i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
  return std::nullopt;
}

// The unknown keys of one request as one short warning: a request may send thousands of
// keys, each of any length, and must not be able to fill the log with them.
void warn_unknown(const std::vector<std::string>& keys) {
  constexpr size_t kShownKeys = 5, kShownBytes = 64;
  std::string list;
  for (size_t i = 0; i < std::min(keys.size(), kShownKeys); ++i) {
    size_t n = std::min(keys[i].size(), kShownBytes);
    while (n < keys[i].size() && n > 0 && (static_cast<unsigned char>(keys[i][n]) & 0xC0) == 0x80) --n;
    list += (i ? ", " : "") + keys[i].substr(0, n) + (n < keys[i].size() ? "..." : "");
  }
  if (keys.size() > kShownKeys) list += " and " + std::to_string(keys.size() - kShownKeys) + " more";
  log_warn("invalid options provided: " + list);
}

// Ollama's meanings kept (0 or unset = automatic, num_gpu -1 = auto, num_keep -1 = the whole
// prompt, top_k 0 = off); out-of-range values are brought to the nearest sane one instead of
// reaching the runner, where num_thread 2147483647 meant that many threads.
void clamp(EffectiveOptions* o, int64_t cpus) {
  if (o->num_ctx < 0) o->num_ctx = 0;
  if (o->num_ctx > 0) o->num_ctx = std::clamp(o->num_ctx, kMinNumCtx, kMaxNumCtx);
  const int64_t ctx_cap = o->num_ctx > 0 ? o->num_ctx : kMaxNumCtx;
  if (o->num_batch && *o->num_batch <= 0) o->num_batch.reset();
  if (o->num_batch) o->num_batch = std::min(*o->num_batch, ctx_cap);
  if (o->num_thread && *o->num_thread <= 0) o->num_thread.reset();
  if (o->num_thread) o->num_thread = std::min(*o->num_thread, std::max<int64_t>(cpus, 1));
  if (o->num_gpu) o->num_gpu = std::clamp<int64_t>(*o->num_gpu, -1, kMaxNumGpu);
  runner::SamplingOptions& s = o->sampling;
  if (s.num_keep) s.num_keep = std::clamp<int64_t>(*s.num_keep, -1, ctx_cap - 1);
  if (s.top_k) s.top_k = std::clamp<int64_t>(*s.top_k, 0, kMaxTopK);
}

}  // namespace

Result<EffectiveOptions> effective_options(const store::Params& model_params, const Json& request) {
  std::map<std::string, store::ParamValue> m = model_params.values();
  std::vector<std::string> unknown;
  if (request.is_object()) {
    for (const auto& [key, value] : request.items()) {
      const store::ParamSpec* spec = store::find_param_spec(key);
      if (!spec) {
        unknown.push_back(key);
        continue;
      }
      if (value.is_null()) continue;
      PADDOCK_ASSIGN(m[key], convert(key, spec->type, value));
    }
  }
  if (!unknown.empty()) warn_unknown(unknown);
  EffectiveOptions o;
  runner::SamplingOptions& s = o.sampling;
  s.temperature = get_float(m, "temperature");
  s.top_p = get_float(m, "top_p");
  s.min_p = get_float(m, "min_p");
  s.typical_p = get_float(m, "typical_p");
  s.repeat_penalty = get_float(m, "repeat_penalty");
  s.presence_penalty = get_float(m, "presence_penalty");
  s.frequency_penalty = get_float(m, "frequency_penalty");
  s.top_k = get_int(m, "top_k");
  s.repeat_last_n = get_int(m, "repeat_last_n");
  s.seed = get_int(m, "seed");
  s.num_predict = get_int(m, "num_predict");
  s.num_keep = get_int(m, "num_keep");
  if (const auto it = m.find("stop"); it != m.end()) {
    if (const auto* l = std::get_if<std::vector<std::string>>(&it->second)) s.stop = *l;
  }
  o.num_ctx = get_int(m, "num_ctx").value_or(0);
  o.num_batch = get_int(m, "num_batch");
  o.num_thread = get_int(m, "num_thread");
  o.num_gpu = get_int(m, "num_gpu");
  clamp(&o, std::thread::hardware_concurrency());
  return o;
}

}  // namespace paddock::server
