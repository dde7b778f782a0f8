#include "server/api_util.h"

#include <algorithm>
#include <ctime>
#include <random>

namespace paddock::server {

const Json* field(const Json& j, const char* key) {
  const auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

Status field_error(const std::string& field, const std::string& what) {
  return invalid_argument(field + ": " + what);
}

HttpResponse json_response(int status, const Json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return r;
}

void set_truncation_header(int64_t dropped, HttpResponse* r) {
  if (dropped > 0) r->headers.emplace_back(kTruncatedHeader, std::to_string(dropped));
}

HttpResponse with_truncation_header(const HttpResponse& native, HttpResponse out) {
  for (const auto& [name, value] : native.headers) {
    if (name == kTruncatedHeader) out.headers.emplace_back(name, value);
  }
  return out;
}

namespace {

// A path starts with '/' at the start of the message or after a space, quote, bracket or '=';
// so "http://host/x" and "library/llama" are not paths.
bool starts_path(std::string_view m, size_t i) {
  if (m[i] != '/') return false;
  if (i == 0) return true;
  const char before = m[i - 1];
  return before == ' ' || before == '"' || before == '\'' || before == '(' || before == '[' || before == '=';
}

bool ends_path(char c) {
  return c == ' ' || c == '"' || c == '\'' || c == ':' || c == ',' || c == ')' || c == ']' || c == '\n';
}

}  // namespace

std::string public_message(std::string_view message) {
  std::string out;
  out.reserve(std::min(message.size(), kMaxErrorBytes));
  for (size_t i = 0; i < message.size() && out.size() <= kMaxErrorBytes;) {
    if (!starts_path(message, i)) {
      out += message[i++];
      continue;
    }
    size_t end = i;
    while (end < message.size() && !ends_path(message[end])) ++end;
    std::string_view path = message.substr(i, end - i);
    while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
    out += path.substr(path.rfind('/') + 1);
    i = end;
  }
  if (out.size() > kMaxErrorBytes) {
    size_t n = kMaxErrorBytes - 3;
    while (n > 0 && (static_cast<unsigned char>(out[n]) & 0xC0) == 0x80) --n;
    out.resize(n);
    out += "...";
  }
  return out;
}

HttpResponse error_response(int status, const std::string& message) {
  return json_response(status, Json{{"error", public_message(message)}});
}

HttpResponse openai_error_response(int status, const std::string& message) {
  const char* type = status == 400   ? "invalid_request_error"
                     : status == 404 ? "not_found_error"
                                     : "api_error";
  return json_response(status, Json{{"error", Json{{"message", public_message(message)},
                                                   {"type", type},
                                                   {"param", nullptr},
                                                   {"code", nullptr}}}});
}

HttpResponse openai_rewrap_native_error(const HttpResponse& native) {
  const Json j = Json::parse(native.body, nullptr, false);
  const bool has_message = j.is_object() && j.contains("error") && j["error"].is_string();
  return openai_error_response(native.status, has_message ? j["error"].get<std::string>() : native.body);
}

int http_status(const Status& s) {
  switch (s.code()) {
    case Code::kOk: return 200;
    case Code::kInvalidArgument:
    case Code::kUnsupported:
    case Code::kOutOfRange:
    case Code::kAlreadyExists: return 400;
    case Code::kNotFound: return 404;
    case Code::kCancelled: return 499;
    case Code::kUnavailable:
    case Code::kResourceExhausted: return 503;
    default: return 500;
  }
}

HttpResponse error_response(const Status& s) { return error_response(http_status(s), s.message()); }

std::string rfc3339_nano(std::chrono::system_clock::time_point t) {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
  long frac = static_cast<long>(ns % 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  size_t n = std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  std::string out(buf, n);
  if (frac != 0) {
    // RFC3339Nano drops trailing zeros of the fraction.
    char f[16];
    std::snprintf(f, sizeof(f), ".%09ld", frac);
    std::string fs(f);
    while (fs.back() == '0') fs.pop_back();
    out += fs;
  }
  return out + "Z";
}

std::string now_rfc3339() { return rfc3339_nano(std::chrono::system_clock::now()); }

int64_t ns_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

Result<Json> think_for_effort(const std::string& effort) {
  if (effort == "none") return Json(false);
  if (effort == "minimal") return Json("low");
  if (effort == "low" || effort == "medium" || effort == "high" || effort == "max") return Json(effort);
  if (effort == "xhigh" || effort == "ultra") return Json("max");
  return invalid_argument("invalid reasoning value: '" + effort +
                          "' (must be \"none\", \"minimal\", \"low\", \"medium\", \"high\", or \"max\")");
}

std::string random_id(const std::string& prefix) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  thread_local std::mt19937 rng{std::random_device{}()};
  std::uniform_int_distribution<int> pick(0, 61);
  std::string id = prefix;
  for (int i = 0; i < 24; ++i) id += kAlphabet[pick(rng)];
  return id;
}

}  // namespace paddock::server
