#include "store/params.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "store/go_json.h"

namespace paddock::store {
namespace {

// api.Options + api.Runner (Ollama), sorted by name for binary search.
const std::vector<ParamSpec> kSpecs = {
    {"draft_num_predict", ParamType::kInt},
    {"frequency_penalty", ParamType::kFloat},
    {"main_gpu", ParamType::kInt},
    {"min_p", ParamType::kFloat},
    {"num_batch", ParamType::kInt},
    {"num_ctx", ParamType::kInt},
    {"num_gpu", ParamType::kInt},
    {"num_keep", ParamType::kInt},
    {"num_predict", ParamType::kInt},
    {"num_thread", ParamType::kInt},
    {"presence_penalty", ParamType::kFloat},
    {"repeat_last_n", ParamType::kInt},
    {"repeat_penalty", ParamType::kFloat},
    {"seed", ParamType::kInt},
    {"stop", ParamType::kStringList},
    {"temperature", ParamType::kFloat},
    {"top_k", ParamType::kInt},
    {"top_p", ParamType::kFloat},
    {"typical_p", ParamType::kFloat},
    {"use_mmap", ParamType::kBool},
};

constexpr std::string_view kDeprecated[] = {"penalize_newline", "low_vram",     "f16_kv",
                                            "logits_all",       "vocab_only",   "use_mlock",
                                            "mirostat",         "mirostat_tau", "mirostat_eta"};

std::string shown(std::string_view s) {
  std::string out(s.substr(0, 60));
  return s.size() > 60 ? out + "..." : out;
}

Status bad_value(std::string_view type, std::string_view raw, std::string_view name) {
  return invalid_argument("invalid " + std::string(type) + " value \"" + shown(raw) + "\" for parameter '" +
                          std::string(name) + "'");
}

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits.
std::optional<int64_t> parse_int(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return std::nullopt;
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// strconv.ParseFloat(s, 32) for finite decimal values.
std::optional<float> parse_float32(std::string_view s) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || s[0] == '+') return std::nullopt;
  float v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// strconv.ParseBool.
std::optional<bool> parse_bool(std::string_view s) {
  for (const std::string_view t : {"1", "t", "T", "TRUE", "true", "True"})
    if (s == t) return true;
  for (const std::string_view f : {"0", "f", "F", "FALSE", "false", "False"})
    if (s == f) return false;
  return std::nullopt;
}

void append_value_json(std::string& out, const ParamValue& v, const ParamSpec* spec) {
  if (const auto* i = std::get_if<int64_t>(&v)) {
    out += std::to_string(*i);
  } else if (const auto* d = std::get_if<double>(&v)) {
    // Known float parameters are float32 in Ollama; unknown numbers stay float64.
    out += spec ? go_json_float32(static_cast<float>(*d)) : go_json_float64(*d);
  } else if (const auto* b = std::get_if<bool>(&v)) {
    out += *b ? "true" : "false";
  } else if (const auto* s = std::get_if<std::string>(&v)) {
    append_go_json_string(out, *s);
  } else {
    const auto& list = std::get<std::vector<std::string>>(v);
    out += '[';
    for (size_t k = 0; k < list.size(); ++k) {
      if (k) out += ',';
      append_go_json_string(out, list[k]);
    }
    out += ']';
  }
}

Result<ParamValue> value_from_json(const std::string& key, const nlohmann::json& j) {
  const ParamSpec* spec = find_param_spec(key);
  const auto wrong = [&](std::string_view expected) {
    return corrupt("params: \"" + shown(key) + "\" must be " + std::string(expected) + ", found " +
                   j.type_name());
  };
  if (!spec) {  // a parameter a newer Ollama knows: keep it, typed by its JSON.
    if (j.is_number_integer()) return ParamValue(j.get<int64_t>());
    if (j.is_number()) return ParamValue(j.get<double>());
    if (j.is_boolean()) return ParamValue(j.get<bool>());
    if (j.is_string()) return ParamValue(j.get<std::string>());
    if (j.is_array()) {
      std::vector<std::string> list;
      for (const auto& e : j) {
        if (!e.is_string()) return wrong("an array of strings");
        list.push_back(e.get<std::string>());
      }
      return ParamValue(std::move(list));
    }
    return wrong("a number, bool, string or array of strings");
  }
  switch (spec->type) {
    case ParamType::kInt:
      if (j.is_number_integer()) return ParamValue(j.get<int64_t>());
      if (j.is_number_float()) {
        const double d = j.get<double>();
        if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18)
          return ParamValue(static_cast<int64_t>(d));
      }
      return wrong("an integer");
    case ParamType::kFloat:
      if (j.is_number()) return ParamValue(j.get<double>());
      return wrong("a number");
    case ParamType::kBool:
      if (j.is_boolean()) return ParamValue(j.get<bool>());
      return wrong("a bool");
    case ParamType::kString:
      if (j.is_string()) return ParamValue(j.get<std::string>());
      return wrong("a string");
    case ParamType::kStringList: {
      if (j.is_string()) return ParamValue(std::vector<std::string>{j.get<std::string>()});
      if (!j.is_array()) return wrong("an array of strings");
      std::vector<std::string> list;
      for (const auto& e : j) {
        if (!e.is_string()) return wrong("an array of strings");
        list.push_back(e.get<std::string>());
      }
      return ParamValue(std::move(list));
    }
  }
  return wrong("a known type");
}

}  // namespace

const ParamSpec* find_param_spec(std::string_view name) {
  const auto it = std::lower_bound(kSpecs.begin(), kSpecs.end(), name,
                                   [](const ParamSpec& s, std::string_view n) { return s.name < n; });
  return it != kSpecs.end() && it->name == name ? &*it : nullptr;
}

bool is_deprecated_param(std::string_view name) {
  return std::find(std::begin(kDeprecated), std::end(kDeprecated), name) != std::end(kDeprecated);
}

Status Params::set(std::string_view name, std::string_view raw) {
  const ParamSpec* spec = find_param_spec(name);
  if (!spec) return invalid_argument("unknown parameter '" + shown(name) + "'");
  const std::string key(name);
  switch (spec->type) {
    case ParamType::kInt: {
      const auto v = parse_int(raw);
      if (!v) return bad_value("int", raw, name);
      values_[key] = *v;
      break;
    }
    case ParamType::kFloat: {
      const auto v = parse_float32(raw);
      if (!v) return bad_value("float", raw, name);
      values_[key] = static_cast<double>(*v);
      break;
    }
    case ParamType::kBool: {
      const auto v = parse_bool(raw);
      if (!v) return bad_value("bool", raw, name);
      values_[key] = *v;
      break;
    }
    case ParamType::kString: values_[key] = std::string(raw); break;
    case ParamType::kStringList: {
      auto [it, inserted] = values_.try_emplace(key, std::vector<std::string>{});
      std::get<std::vector<std::string>>(it->second).emplace_back(raw);
      break;
    }
  }
  return Status::ok();
}

std::string Params::to_json() const {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : values_) {
    if (!first) out += ',';
    first = false;
    append_go_json_string(out, k);
    out += ':';
    append_value_json(out, v, find_param_spec(k));
  }
  return out + "}\n";
}

Result<Params> Params::from_json(std::string_view json) {
  const auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return corrupt("params: not valid JSON");
  if (!j.is_object()) return corrupt(std::string("params: expected a JSON object, found ") + j.type_name());
  Params p;
  for (const auto& [k, v] : j.items()) {
    PADDOCK_ASSIGN(ParamValue pv, value_from_json(k, v));
    p.values_[k] = std::move(pv);
  }
  return p;
}

void Params::merge_from(const Params& over) {
  for (const auto& [k, v] : over.values_) values_[k] = v;
}

std::vector<std::pair<std::string, std::string>> Params::as_text() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [k, v] : values_) {
    if (const auto* i = std::get_if<int64_t>(&v)) {
      out.emplace_back(k, std::to_string(*i));
    } else if (const auto* d = std::get_if<double>(&v)) {
      // float32 parameters print their float32 digits (0.8, not 0.800000011920929).
      const double shown_value = find_param_spec(k) ? std::stod(go_json_float32(static_cast<float>(*d))) : *d;
      out.emplace_back(k, go_format_v(shown_value));
    } else if (const auto* b = std::get_if<bool>(&v)) {
      out.emplace_back(k, *b ? "true" : "false");
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      out.emplace_back(k, *s);
    } else {
      for (const auto& item : std::get<std::vector<std::string>>(v)) out.emplace_back(k, item);
    }
  }
  return out;
}

std::string messages_to_json(const std::vector<Message>& messages) {
  std::string out = "[";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i) out += ',';
    out += "{\"role\":";
    append_go_json_string(out, messages[i].role);
    out += ",\"content\":";
    append_go_json_string(out, messages[i].content);
    out += '}';
  }
  return out + "]";
}

Result<std::vector<Message>> messages_from_json(std::string_view json) {
  const auto j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return corrupt("messages: not valid JSON");
  if (!j.is_array()) return corrupt(std::string("messages: expected a JSON array, found ") + j.type_name());
  std::vector<Message> out;
  for (const auto& m : j) {
    if (!m.is_object()) return corrupt("messages: each message must be an object");
    const auto role = m.find("role");
    const auto content = m.find("content");
    if (role == m.end() || !role->is_string()) return corrupt("messages: a message has no string \"role\"");
    Message msg{role->get<std::string>(), ""};
    if (content != m.end()) {
      if (!content->is_string()) return corrupt("messages: \"content\" must be a string");
      msg.content = content->get<std::string>();
    }
    out.push_back(std::move(msg));
  }
  return out;
}

}  // namespace paddock::store
