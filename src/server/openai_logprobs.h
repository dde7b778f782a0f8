// The native routes' "logprobs" arrays ({token, logprob, bytes?, top_logprobs?} per token)
// in the OpenAI routes' shapes: chat's choices[].logprobs = {content: [...]} and the legacy
// completions' {tokens, token_logprobs, top_logprobs, text_offset}.
//   choice["logprobs"] = chat_logprobs(native["logprobs"]);
#pragma once

#include <cstdint>

#include "server/requests.h"

namespace paddock::server {

// {"content": [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}.
Json chat_logprobs(const Json& native);

// {tokens, token_logprobs, top_logprobs: [{token: logprob}], text_offset}; `offset` is the
// byte offset of the first token in the completion text, advanced past the last one (a
// stream's chunks continue where the previous one ended).
Json completion_logprobs(const Json& native, int64_t* offset);

}  // namespace paddock::server
