// Go-like dynamic values for the Go text/template engine: what a template sees as `.` and
// what its functions take and return. Values are immutable after construction and share
// their payload, so copying one is cheap.
// Invariants: a Go map keeps its keys sorted (Go ranges and marshals maps in key order); an
// ordered map and a struct keep their construction order.
//   Value v = Value::object(Value::Flavor::kGoMap, {{"Role", Value("user")}});
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace paddock::chat {

class Value;

// One named member of a struct or map. For structs, json_name/omit_empty mirror the Go
// struct tag (`json:"name,omitempty"`); for maps json_name is the key itself.
struct Field {
  std::string name;
  std::string json_name;
  bool omit_empty = false;
  std::shared_ptr<const Value> value;
};

class Value {
 public:
  enum class Kind { kInvalid, kBool, kInt, kFloat, kString, kList, kObject };
  enum class Flavor { kStruct, kGoMap, kOrderedMap };
  // How fmt prints the value: as Go does by default, or through a String() method that
  // marshals JSON (Ollama's Tools, Tool, ToolFunction, arguments), or PropertyType's.
  enum class Printer { kGo, kJson, kPropertyType };

  Value() = default;  // Go's "no value" (a nil interface)
  explicit Value(bool b) : kind_(Kind::kBool), b_(b) {}
  explicit Value(int64_t i) : kind_(Kind::kInt), i_(i) {}
  explicit Value(int i) : kind_(Kind::kInt), i_(i) {}
  explicit Value(double f) : kind_(Kind::kFloat), f_(f) {}
  explicit Value(std::string s);
  explicit Value(const char* s) : Value(std::string(s)) {}

  static Value list(std::vector<Value> items, Printer printer = Printer::kGo);
  // Builds a struct or map; a kGoMap is sorted by key here (duplicate keys: last wins).
  static Value object(Flavor flavor, std::vector<Field> fields, std::string type_name = "",
                      Printer printer = Printer::kGo);
  // A JSON document as Go's encoding/json decodes it into `any`: objects become Go maps
  // (or ordered maps when `ordered`), numbers float64.
  static Value from_json(const nlohmann::ordered_json& j, bool ordered_objects = false);

  Kind kind() const { return kind_; }
  bool is_valid() const { return kind_ != Kind::kInvalid; }
  bool as_bool() const { return b_; }
  int64_t as_int() const { return i_; }
  double as_float() const { return f_; }
  const std::string& as_string() const;
  const std::vector<Value>& items() const;
  const std::vector<Field>& fields() const;
  Flavor flavor() const;
  const std::string& type_name() const;
  Printer printer() const { return printer_; }

  // Member lookup; nullptr when absent.
  const Value* find(std::string_view name) const;
  // Go's truth: false, 0, nil, and empty strings/lists/maps are false; structs are true.
  bool truthy() const;
  // Go's zero-value test used by `omitempty`.
  bool is_empty_for_json() const;
  // The Go type name used in error messages ("string", "[]interface {}", "api.Message").
  std::string go_type() const;

 private:
  struct Object {
    Flavor flavor;
    std::string type_name;
    std::vector<Field> fields;
  };
  Kind kind_ = Kind::kInvalid;
  Printer printer_ = Printer::kGo;
  bool b_ = false;
  int64_t i_ = 0;
  double f_ = 0;
  std::shared_ptr<const std::string> s_;
  std::shared_ptr<const std::vector<Value>> list_;
  std::shared_ptr<const Object> obj_;
};

// A struct field with its Go json tag: field("Name", "name", v) or with omit_empty.
Field field(std::string name, std::string json_name, Value v, bool omit_empty = false);

// fmt.Sprint of a single value (`{{ . }}`): "<no value>", "[a b]", "map[k:v]", "{a b}", or
// JSON where the Go type has such a String() method.
std::string go_print(const Value& v);
// encoding/json.Marshal: HTML-safe escaping, Go's float format, struct tags.
std::string go_json(const Value& v);
// strconv.Quote (used by %q).
std::string go_quote(std::string_view s);
// strconv.FormatFloat(f, fmt, prec, 64) for fmt in 'e', 'f', 'g'; prec -1 = shortest.
std::string go_format_float(double f, char fmt, int prec);

}  // namespace paddock::chat
