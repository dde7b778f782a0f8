// Minimal leveled logging to stderr, one line per message: time=... level=... msg="...".
// Level from PADDOCK_DEBUG (Ollama's OLLAMA_DEBUG): unset = info, 1 = debug, 2 = trace.
// Messages carry request data (option keys, paths, model names), so log_line escapes them:
// a request cannot end the line or the quoted msg and so cannot forge log entries.
#pragma once

#include <string>
#include <string_view>

namespace paddock {

enum class LogLevel { kTrace = 0, kDebug, kInfo, kWarn, kError };

bool log_enabled(LogLevel level);
void log_line(LogLevel level, const std::string& message);
// `s` with backslash, double quote and control characters escaped (\n, \r, \t, \xHH), as
// log_line writes it.
std::string log_escape(std::string_view s);

inline void log_debug(const std::string& m) { if (log_enabled(LogLevel::kDebug)) log_line(LogLevel::kDebug, m); }
inline void log_info(const std::string& m) { log_line(LogLevel::kInfo, m); }
inline void log_warn(const std::string& m) { log_line(LogLevel::kWarn, m); }
inline void log_error(const std::string& m) { log_line(LogLevel::kError, m); }

}  // namespace paddock
