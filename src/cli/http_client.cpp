#include "cli/http_client.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include <httplib.h>

#include "base/env.h"

namespace paddock::cli {

namespace {

constexpr time_t kConnectTimeoutSeconds = 5;
// Loading a big model can take minutes before the first byte of an answer.
constexpr time_t kReadTimeoutSeconds = 600;

std::unique_ptr<httplib::Client> make_client(const server::HostPort& where) {
  auto cli = std::make_unique<httplib::Client>(where.host, where.port);
  cli->set_connection_timeout(kConnectTimeoutSeconds, 0);
  cli->set_read_timeout(kReadTimeoutSeconds, 0);
  cli->set_write_timeout(kReadTimeoutSeconds, 0);
  // A server started with PADDOCK_API_KEYS wants one of them.
  if (const std::optional<std::string> key = env_get("API_KEY"); key && !key->empty()) {
    cli->set_bearer_token_auth(*key);
  }
  return cli;
}

Status transport_error(const server::HostPort& where, httplib::Error e) {
  if (e == httplib::Error::Canceled) return Status(Code::kCancelled, "request cancelled");
  return Status(Code::kUnavailable, "could not connect to a paddock server at " + where.to_string() + " (" +
                                        httplib::to_string(e) + "), is it running?");
}

// The message of an error reply: {"error": "..."} when JSON, else the text itself.
Status http_error(int status, const std::string& body) {
  std::string message = body;
  const nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_object() && j.contains("error") && j["error"].is_string()) message = j["error"].get<std::string>();
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  if (message.empty()) message = "server answered HTTP " + std::to_string(status);
  const Code code = status == 404   ? Code::kNotFound
                    : status == 400 ? Code::kInvalidArgument
                                    : Code::kInternal;
  return Status(code, message);
}

}  // namespace

HttpClient HttpClient::from_env() { return HttpClient(server::parse_host(env_get_or("HOST", ""))); }

Status HttpClient::heartbeat() const {
  auto cli = make_client(where_);
  cli->set_read_timeout(kConnectTimeoutSeconds, 0);
  const httplib::Result r = cli->Head("/");
  if (!r) return transport_error(where_, r.error());
  if (r->status != 200) return http_error(r->status, r->body);
  return Status::ok();
}

Result<nlohmann::json> HttpClient::call(const std::string& method, const std::string& path,
                                        const nlohmann::json& body) const {
  auto cli = make_client(where_);
  httplib::Request req;
  req.method = method;
  req.path = path;
  if (!body.is_null()) {
    req.body = body.dump();
    req.set_header("Content-Type", "application/json");
  }
  const httplib::Result r = cli->send(req);
  if (!r) return transport_error(where_, r.error());
  if (r->status < 200 || r->status >= 300) return http_error(r->status, r->body);
  if (r->body.empty()) return nlohmann::json();
  nlohmann::json j = nlohmann::json::parse(r->body, nullptr, false);
  if (j.is_discarded())
    return corrupt("expected a JSON reply from " + path + ", got: " + r->body.substr(0, 200));
  return j;
}

Status HttpClient::stream(const std::string& path, const nlohmann::json& body,
                          const std::function<bool(const nlohmann::json&)>& on_object) const {
  auto cli = make_client(where_);
  httplib::Request req;
  req.method = "POST";
  req.path = path;
  req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  std::string pending;  // bytes of an unfinished line
  std::string raw;      // everything, for a non-JSON error reply
  Status failure;
  bool stopped = false;
  const auto deliver = [&](std::string_view line) {
    if (line.empty() || !failure.is_ok() || stopped) return;
    const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) return;  // non-JSON lines are error text, reported by status
    if (j.is_object() && j.contains("error")) {
      failure =
          Status(Code::kInternal, j["error"].is_string() ? j["error"].get<std::string>() : j["error"].dump());
      return;
    }
    if (!on_object(j)) stopped = true;
  };
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    raw.append(data, std::min<size_t>(n, 4096 > raw.size() ? 4096 - raw.size() : 0));
    pending.append(data, n);
    size_t start = 0;
    for (size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
      deliver(std::string_view(pending).substr(start, nl - start));
      start = nl + 1;
    }
    pending.erase(0, start);
    return failure.is_ok() && !stopped;
  };
  httplib::Response res;
  httplib::Error err = httplib::Error::Success;
  const bool sent = cli->send(req, res, err);
  if (stopped) return Status(Code::kCancelled, "stopped");
  if (!failure.is_ok()) {
    if (res.status == 404) return Status(Code::kNotFound, failure.message());
    if (res.status == 400) return Status(Code::kInvalidArgument, failure.message());
    return failure;
  }
  if (!sent) return transport_error(where_, err);
  if (res.status < 200 || res.status >= 300) return http_error(res.status, raw);
  deliver(pending);
  if (stopped) return Status(Code::kCancelled, "stopped");
  return failure;
}

Result<int> HttpClient::head(const std::string& path) const {
  auto cli = make_client(where_);
  const httplib::Result r = cli->Head(path.c_str());
  if (!r) return transport_error(where_, r.error());
  return r->status;
}

Status HttpClient::upload(const std::string& path, const std::string& file,
                          const std::function<void(int64_t, int64_t)>& on_progress) const {
  auto in = std::make_shared<std::ifstream>(file, std::ios::binary);
  if (!*in) return io_error("cannot open " + file);
  in->seekg(0, std::ios::end);
  const auto total = static_cast<int64_t>(in->tellg());
  in->seekg(0);
  auto cli = make_client(where_);
  std::vector<char> buf(1 << 20);
  const httplib::Result r = cli->Post(
      path.c_str(), static_cast<size_t>(total),
      [&](size_t offset, size_t length, httplib::DataSink& sink) {
        in->seekg(static_cast<std::streamoff>(offset));
        in->read(buf.data(), static_cast<std::streamsize>(std::min(length, buf.size())));
        const auto got = static_cast<size_t>(in->gcount());
        if (got == 0) return false;
        sink.write(buf.data(), got);
        on_progress(static_cast<int64_t>(offset + got), total);
        return true;
      },
      "application/octet-stream");
  if (!r) return transport_error(where_, r.error());
  if (r->status < 200 || r->status >= 300) return http_error(r->status, r->body);
  return Status::ok();
}

int report_error(const Status& s) {
  std::fprintf(stderr, "Error: %s\n", s.message().c_str());
  return 1;
}

}  // namespace paddock::cli
