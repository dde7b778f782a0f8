#include "server/model_info.h"

#include <map>
#include <mutex>

namespace paddock::server {

namespace {

constexpr size_t kShortArray = 5;  // longer arrays are elided unless verbose

Json value_json(const gguf::Value& v, bool verbose) {
  using T = gguf::ValueType;
  switch (v.type) {
    case T::kBool: return v.u != 0;
    case T::kString: return std::string(v.s);
    case T::kF32:
    case T::kF64: return v.f;
    case T::kArray: {
      Json out = Json::array();
      if (!verbose && v.items.size() > kShortArray) return out;
      for (const gguf::Value& item : v.items) out.push_back(value_json(item, verbose));
      return out;
    }
    case T::kI8:
    case T::kI16:
    case T::kI32:
    case T::kI64: return v.i;
    default: return v.u;
  }
}

}  // namespace

Json model_info_json(const gguf::File& file, bool verbose) {
  Json out = Json::object();
  for (const gguf::KeyValue& kv : file.metadata()) {
    if (kv.key == "general.name" || kv.key == "tokenizer.chat_template") continue;
    out[std::string(kv.key)] = value_json(kv.value, verbose);
  }
  uint64_t params = 0;
  for (const gguf::TensorInfo& t : file.tensors()) params += t.n_elements;
  out["general.parameter_count"] = params;
  return out;
}

bool is_embedding_model(const gguf::File& file) {
  const std::string arch(file.get_string("general.architecture").value_or(""));
  return file.find(arch + ".pooling_type") != nullptr;
}

bool is_embedding_model(const std::string& path) {
  static std::mutex mu;
  static std::map<std::string, bool> known;
  {
    const std::lock_guard<std::mutex> lock(mu);
    if (const auto it = known.find(path); it != known.end()) return it->second;
  }
  const Result<std::unique_ptr<gguf::File>> file = gguf::File::open(path);
  if (!file.ok()) return false;
  const bool embedding = is_embedding_model(**file);
  const std::lock_guard<std::mutex> lock(mu);
  known.emplace(path, embedding);
  return embedding;
}

}  // namespace paddock::server
