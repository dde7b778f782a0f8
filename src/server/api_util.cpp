#include "server/api_util.h"

#include <ctime>

namespace paddock::server {

HttpResponse json_response(int status, const Json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  return r;
}

HttpResponse error_response(int status, const std::string& message) {
  return json_response(status, Json{{"error", message}});
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

}  // namespace paddock::server
