// Enforcing `tool_choice` "required" or a named tool with the grammar engine rather than by
// prompting: the output is constrained to exactly one call written the way the template
// writes calls, which the tool-call parser then reads as that call. The grammar is the
// template's tool tag (with "\n" after an XML-style tag such as "<tool_call>"), the object
// {"name": <a tool>, "arguments": <its parameters schema>}, then the closing tag when the
// template has one ("</tool_call>"; "]" after a tag ending in "["), then the end of output.
// When the prompt leaves the model inside its thinking block, the grammar closes it first:
// a forced call comes at once, without thinking. "none" is not a grammar: the model is not
// shown the tools (routes_chat.cpp).
//   PADDOCK_ASSIGN(std::string gbnf, forced_tool_call_grammar(tmpl, chat_request, opens_thinking));
#pragma once

#include <string>

#include "base/status.h"
#include "server/prompt.h"
#include "server/requests.h"

namespace paddock::server {

// The GBNF (start rule "root") that forces a call, or "" when nothing is forced. An error
// (kInvalidArgument) when a tool's parameters are a schema the grammar engine rejects, or
// when the template is Harmony.
Result<std::string> forced_tool_call_grammar(const PromptTemplate& t, const ChatRequest& req,
                                             bool prompt_opens_thinking);

}  // namespace paddock::server
