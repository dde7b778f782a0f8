#include "server/go_json_error.h"

#include <gtest/gtest.h>

namespace paddock::server {
namespace {

// Expected texts are Go's json.Unmarshal errors for the same input.
TEST(GoJsonError, WordsTheFirstSyntaxErrorAsGoDoes) {
  const std::pair<const char*, const char*> cases[] = {
      {"{bad}", "invalid character 'b' looking for beginning of object key string"},
      {"{\"a\" 1}", "invalid character '1' after object key"},
      {"{\"a\":1 \"b\":2}", "invalid character '\"' after object key:value pair"},
      {"[1 2]", "invalid character '2' after array element"},
      {"{\"model\":", "unexpected end of JSON input"},
      {"  ", "unexpected end of JSON input"},
      {"x", "invalid character 'x' looking for beginning of value"},
      {"{\"a\":tx}", "invalid character 'x' in literal true (expecting 'r')"},
      {"{\"a\":\"x\ny\"}", "invalid character '\\n' in string literal"},
      {"{\"a\":1}x", "invalid character 'x' after top-level value"},
      {"{\"a\":12e}", "invalid character '}' in exponent of numeric literal"},
      {"{\"a\":\"\\q\"}", "invalid character 'q' in string escape code"},
      {"{\"a\":\"\\u12x4\"}", "invalid character 'x' in \\u hexadecimal character escape"},
      {"{\"a\":-}", "invalid character '}' in numeric literal"},
      {"{\"a\":1.}", "invalid character '}' after decimal point in numeric literal"},
      {"{\"a\":01}", "invalid character '1' after object key:value pair"},
      {"{'a':1}", "invalid character '\\'' looking for beginning of object key string"},
      {"[\x01]", "invalid character '\\x01' looking for beginning of value"},
  };
  for (const auto& [text, want] : cases) EXPECT_EQ(go_json_syntax_error(text), want) << text;
}

TEST(GoJsonError, ValidTextHasNone) {
  EXPECT_EQ(go_json_syntax_error(R"( {"a":[1,-2.5e+3,{"b":null,"c":true}],"d":"\u00e9\n"} )"), "");
}

}  // namespace
}  // namespace paddock::server
