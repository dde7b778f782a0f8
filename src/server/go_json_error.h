// The first syntax error of a JSON text worded as Go's encoding/json words it ("invalid
// character 'b' looking for beginning of object key string", "unexpected end of JSON
// input"), so that clients see Ollama's messages for bad request bodies. Called only once
// nlohmann's parser has refused the text; the text's nesting is already bounded
// (json_too_deep), which bounds this scanner's recursion.
//   return invalid_argument(go_json_syntax_error(body));
#pragma once

#include <string>
#include <string_view>

namespace paddock::server {

// "" when the text is valid JSON.
std::string go_json_syntax_error(std::string_view text);

}  // namespace paddock::server
