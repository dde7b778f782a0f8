#include "base/log.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "base/env.h"

namespace paddock {

namespace {
LogLevel configured_level() {
  static const LogLevel level = [] {
    auto v = env_get("DEBUG");
    if (!v || v->empty() || *v == "0" || *v == "false") return LogLevel::kInfo;
    return *v == "2" ? LogLevel::kTrace : LogLevel::kDebug;
  }();
  return level;
}
const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::kTrace: return "TRACE";
    case LogLevel::kDebug: return "DEBUG";
    case LogLevel::kInfo: return "INFO";
    case LogLevel::kWarn: return "WARN";
    case LogLevel::kError: return "ERROR";
  }
  return "?";
}
}  // namespace

std::string log_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          static const char kHex[] = "0123456789abcdef";
          out += "\\x";
          out += kHex[u >> 4];
          out += kHex[u & 15];
        } else {
          out += c;
        }
    }
  }
  return out;
}

bool log_enabled(LogLevel level) { return level >= configured_level(); }

void log_line(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) return;
  static std::mutex mu;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  localtime_r(&now, &tm);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
  const std::string escaped = log_escape(message);
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "time=%s level=%s msg=\"%s\"\n", ts, level_name(level), escaped.c_str());
}

}  // namespace paddock
