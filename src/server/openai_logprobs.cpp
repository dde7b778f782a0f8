#include "server/openai_logprobs.h"

#include <string>

namespace paddock::server {

namespace {

// OpenAI always sends `bytes`; the native shape leaves it out when the token has none.
Json token_entry(const Json& lp) {
  return Json{{"token", lp.value("token", "")},
              {"logprob", lp.value("logprob", 0.0)},
              {"bytes", lp.contains("bytes") ? lp["bytes"] : Json::array()}};
}

}  // namespace

Json chat_logprobs(const Json& native) {
  Json content = Json::array();
  for (const Json& lp : native) {
    Json entry = token_entry(lp);
    Json top = Json::array();
    if (lp.contains("top_logprobs")) {
      for (const Json& alt : lp["top_logprobs"]) top.push_back(token_entry(alt));
    }
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return Json{{"content", std::move(content)}};
}

Json completion_logprobs(const Json& native, int64_t* offset) {
  Json tokens = Json::array(), token_logprobs = Json::array(), top = Json::array(), offsets = Json::array();
  for (const Json& lp : native) {
    const std::string token = lp.value("token", "");
    tokens.push_back(token);
    token_logprobs.push_back(lp.value("logprob", 0.0));
    Json alternatives = Json::object();
    if (lp.contains("top_logprobs")) {
      for (const Json& alt : lp["top_logprobs"])
        alternatives[alt.value("token", "")] = alt.value("logprob", 0.0);
    }
    top.push_back(std::move(alternatives));
    offsets.push_back(*offset);
    *offset += static_cast<int64_t>(token.size());
  }
  return Json{{"tokens", std::move(tokens)},
              {"token_logprobs", std::move(token_logprobs)},
              {"top_logprobs", std::move(top)},
              {"text_offset", std::move(offsets)}};
}

}  // namespace paddock::server
