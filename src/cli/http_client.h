// The CLI's client of the paddock/Ollama REST API (cpp-httplib). Host and port come from
// PADDOCK_HOST / OLLAMA_HOST with Ollama's parsing rules (server/host.h). JSON calls return
// the decoded body; NDJSON streams are delivered one object at a time as they arrive, and
// the callback can stop a stream (Ctrl+C), which closes the connection so the server
// cancels. HTTP errors become Status with the server's {"error": ...} text:
// 404 -> kNotFound, 400 -> kInvalidArgument, no server -> kUnavailable.
//   PADDOCK_ASSIGN(nlohmann::json tags, client.call("GET", "/api/tags"));
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "server/host.h"

namespace paddock::cli {

class HttpClient {
 public:
  explicit HttpClient(server::HostPort where) : where_(std::move(where)) {}
  static HttpClient from_env();

  const server::HostPort& where() const { return where_; }
  // HEAD /: ok when a server answers.
  Status heartbeat() const;
  // A JSON request (body omitted when null); the reply body as JSON (null when empty).
  Result<nlohmann::json> call(const std::string& method, const std::string& path,
                              const nlohmann::json& body = nullptr) const;
  // POST an NDJSON-streaming route. on_object returns false to stop early (kCancelled).
  // A {"error": ...} object in the stream ends it with that error.
  Status stream(const std::string& path, const nlohmann::json& body,
                const std::function<bool(const nlohmann::json&)>& on_object) const;
  // HEAD a path: the HTTP status code.
  Result<int> head(const std::string& path) const;
  // POST a file's bytes as the body, reporting bytes sent.
  Status upload(const std::string& path, const std::string& file,
                const std::function<void(int64_t sent, int64_t total)>& on_progress) const;

 private:
  server::HostPort where_;
};

// "Error: <message>" on stderr, as Ollama prints errors; returns exit code 1.
int report_error(const Status& s);

}  // namespace paddock::cli
