// Typed model parameters (the PARAMETER table of a Modelfile, the params layer, request
// options) and chat messages, with Ollama's types: ints, float32s, bools, and the string
// list `stop`. Values are validated on the way in; the params layer JSON is written byte
// for byte as Ollama's Go code writes it (keys sorted, float32 digits, trailing newline).
//   Params p; PADDOCK_TRY(p.set("temperature", "0.7")); p.to_json();
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"

namespace paddock::store {

enum class ParamType { kInt, kFloat, kBool, kString, kStringList };

struct ParamSpec {
  std::string_view name;
  ParamType type;
};

// The spec of a parameter Ollama's api.Options / api.Runner knows; null for any other name.
const ParamSpec* find_param_spec(std::string_view name);
// Names Ollama accepts in a Modelfile but ignores with a warning.
bool is_deprecated_param(std::string_view name);

// float values are float32 (as Ollama stores them), kept as double for arithmetic.
using ParamValue = std::variant<int64_t, double, bool, std::string, std::vector<std::string>>;

class Params {
 public:
  // Parses `raw` by the parameter's type. A list parameter (stop) appends; others replace.
  // Errors: "unknown parameter 'x'", "invalid int value \"abc\" for parameter 'top_k'"...
  Status set(std::string_view name, std::string_view raw);
  // Layer JSON: {"num_ctx":256,"stop":["..."],"temperature":0.8}\n
  std::string to_json() const;
  // Reads a params layer (or request options); values must match their types.
  static Result<Params> from_json(std::string_view json);
  // Keys of `over` replace ours (Ollama merges a new params layer over the base model's).
  void merge_from(const Params& over);

  const std::map<std::string, ParamValue>& values() const { return values_; }
  bool empty() const { return values_.empty(); }
  // Ollama's fmt "%v" of each value, lists expanded one value per entry, keys sorted.
  std::vector<std::pair<std::string, std::string>> as_text() const;

 private:
  std::map<std::string, ParamValue> values_;
};

struct Message {
  std::string role;  // system | user | assistant
  std::string content;
  bool operator==(const Message&) const = default;
};

// Messages layer JSON: [{"role":"user","content":"..."}] (no trailing newline, as Ollama).
std::string messages_to_json(const std::vector<Message>& messages);
Result<std::vector<Message>> messages_from_json(std::string_view json);

}  // namespace paddock::store
