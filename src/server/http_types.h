// The server's own view of an HTTP exchange, independent of the HTTP library, so every
// handler can be driven by unit tests and the fuzzer without a socket.
// Invariants: header names are looked up case-insensitively; a Response either has a
// `body` or a `stream` function, which the transport calls once after sending the headers.
//   HttpResponse r = api.handle(HttpRequest{.method = "GET", .path = "/api/tags"});
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace paddock::server {

struct CaseInsensitiveLess {
  bool operator()(const std::string& a, const std::string& b) const;
};
using Headers = std::map<std::string, std::string, CaseInsensitiveLess>;

// Writes bytes to the client; false once the client is gone (stop producing then).
using WriteFn = std::function<bool(std::string_view)>;
// Delivers a streamed request body chunk by chunk (blob uploads); the sink returns false to stop.
using BodyReader = std::function<Status(const std::function<bool(const char*, size_t)>& sink)>;

struct HttpRequest {
  std::string method;
  std::string path;
  Headers headers;
  std::string body;
  BodyReader body_reader;             // set instead of `body` for streamed uploads
  std::function<bool()> client_gone;  // may be empty (tests); true too once shutting_down is
  std::function<bool()> shutting_down;  // set by Api::handle
  // Set by the OpenAI routes on the native request they run: the native reply then also
  // carries "prompt_cached_count" (usage.prompt_tokens_details.cached_tokens), which
  // Ollama's native API has no field for.
  bool report_cached_tokens = false;

  std::string header(const std::string& name) const {
    const auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json; charset=utf-8";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  std::function<void(const WriteFn&)> stream;
};

}  // namespace paddock::server
