// The HTTP side of the registry client (libcurl): one request at a time, redirects followed
// by hand under the policy of registry_url.h (http/https only, bounded, the Authorization
// header only to the originally asked host), and Bearer tokens fetched anonymously when a
// 401 carries a WWW-Authenticate challenge. Transport failures come back as Unavailable
// (retryable); a sink that returns false aborts the transfer with Cancelled.
//   RegistryHttp http({.insecure = true});
//   PADDOCK_ASSIGN(HttpResponse r, http.send({.method = "HEAD", .url = u}));
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/status.h"

namespace paddock::store {

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, POST, PUT
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // request body (POST/PUT) unless upload_path is set
  std::string upload_path;           // file sent as the PUT body: a regular file, not a link
  // With upload_path: the bytes it must hold (sha256 hex, size). A file of another size is
  // refused; one whose bytes hash otherwise is cut off before its last byte (kCorrupt).
  std::string upload_sha256;
  uint64_t upload_size = 0;
  bool follow_redirects = true;
  bool send_auth = true;  // false for URLs a registry handed out for another host
  // Receives the body of a 2xx response; returning false cancels. Without a sink the body is
  // collected into HttpResponse::body, refused beyond max_body bytes.
  std::function<bool(long status, const char* data, size_t n)> sink;
  size_t max_body = size_t{4} << 20;
};

struct HttpResponse {
  long status = 0;
  std::map<std::string, std::string> headers;  // lowercase names, of the final response
  std::string body;                            // non-2xx bodies always land here (capped)
  std::string url;                             // after redirects
  std::string header(const std::string& lower_name) const;
};

struct HttpOptions {
  bool insecure = false;
  int max_redirects = 10;
  long connect_timeout_s = 10;  // a registry that does not answer fails in seconds (no retry)
  long stall_timeout_s = 30;  // abort when no byte arrives for this long
  std::string user_agent = "paddock/0 (registry client)";
  // Polled about once a second during a transfer (even a stalled one); true aborts it
  // (kCancelled).
  std::function<bool()> cancelled;
};

class RegistryHttp {
 public:
  explicit RegistryHttp(HttpOptions opts);
  Result<HttpResponse> send(const HttpRequest& req);

 private:
  Result<HttpResponse> send_once(const HttpRequest& req, const std::string& url, bool with_auth);
  Status fetch_token(const std::string& challenge, const std::string& registry_url);

  HttpOptions opts_;
  std::string token_;
};

}  // namespace paddock::store
