// Enforcing `tool_choice` "required" or a named tool with the grammar engine rather than by
// prompting: when the template's tool calls are bare JSON (tool tag "{"), the output is
// constrained to {"name": <a tool>, "arguments": <its schema>}, which the tool-call parser
// then reads as a call. Templates with another tag ("<tool_call>") are not enforced yet: the
// runner's `format` cannot express the tag before the JSON.
//   if (request.format.empty()) request.format = forced_tool_call_format(tmpl, chat_request);
#pragma once

#include <string>

#include "server/prompt.h"
#include "server/requests.h"

namespace paddock::server {

// The JSON schema (as text) that forces a call, or "" when nothing is forced.
std::string forced_tool_call_format(const PromptTemplate& t, const ChatRequest& req);

}  // namespace paddock::server
