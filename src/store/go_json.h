// Byte-exact JSON and number formatting as Go writes it, so manifests, configs and params
// layers we write hash to the same digests Ollama's would (encoding/json and fmt rules).
// Invariants: output is always valid UTF-8 JSON; invalid UTF-8 input becomes U+FFFD.
//   std::string s; append_go_json_string(s, "a<b");  // "a\u003cb"
#pragma once

#include <string>
#include <string_view>

namespace paddock::store {

// encoding/json string: quotes, \" \\ \n \r \t \b \f, other controls as \u00XX,
// '<' '>' '&' U+2028 U+2029 as \uXXXX, invalid UTF-8 as \ufffd.
void append_go_json_string(std::string& out, std::string_view s);
std::string go_json_string(std::string_view s);

// encoding/json numbers: shortest round-trip digits, 'f' form unless |v| < 1e-6 or >= 1e21.
// float32 values use float32 shortest digits (0.8f -> "0.8"). v must be finite.
std::string go_json_float32(float v);
std::string go_json_float64(double v);

// fmt "%v" of a float64 (what Ollama prints for PARAMETER values): %g with the shortest
// digits, exponent form when the decimal exponent is < -4 or >= 6 (1e+06, 0.8, 256).
std::string go_format_v(double v);

// strconv.Quote for %#v of strings: "\"...\"" with Go escapes.
std::string go_quote(std::string_view s);

}  // namespace paddock::store
