// JSON Schema -> GBNF, for Ollama's `format` field (structured output). The grammar accepts
// JSON text whose value validates against the supported subset of the schema; whitespace
// between tokens is bounded (one space, or one newline plus up to 20 spaces/tabs), so a
// model cannot loop on whitespace. Property order follows the schema. See docs/grammars.md
// for the supported keywords and where the grammar is looser than the schema.
// Errors name the JSON pointer of the offending part ("schema at /properties/age: ...").
//   PADDOCK_ASSIGN(std::string gbnf, sample::format_to_gbnf(R"("json")"));
//   PADDOCK_ASSIGN(auto grammar, sample::parse_gbnf(gbnf));
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

#include "base/status.h"

namespace paddock::sample {

// A schema (an ordered JSON object, so property order is kept) -> GBNF with root rule "root".
Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema);
// Same, with fixed text around the value: root ::= prefix value suffix. For output that
// wraps the JSON in markup, such as a tool call in its tags ("<tool_call>\n{...}\n</tool_call>").
Result<std::string> json_schema_to_gbnf(const nlohmann::ordered_json& schema, const std::string& prefix,
                                        const std::string& suffix);
// Same, from JSON text.
Result<std::string> json_schema_to_gbnf(std::string_view schema_json);

// The grammar of `format: "json"`: any JSON object (llama.cpp/Ollama do the same).
std::string json_object_gbnf();

// Ollama's `format` value as JSON text: "json" (a JSON string), a schema object, or
// "" / null for none (returns ""). Anything else is an error in Ollama's words.
Result<std::string> format_to_gbnf(std::string_view format_json);

}  // namespace paddock::sample
