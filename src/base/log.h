// Minimal leveled logging to stderr. Level from PADDOCK_DEBUG (Ollama's OLLAMA_DEBUG):
// unset = info, 1 = debug, 2 = trace.
#pragma once

#include <string>

namespace paddock {

enum class LogLevel { kTrace = 0, kDebug, kInfo, kWarn, kError };

bool log_enabled(LogLevel level);
void log_line(LogLevel level, const std::string& message);

inline void log_debug(const std::string& m) { if (log_enabled(LogLevel::kDebug)) log_line(LogLevel::kDebug, m); }
inline void log_info(const std::string& m) { log_line(LogLevel::kInfo, m); }
inline void log_warn(const std::string& m) { log_line(LogLevel::kWarn, m); }
inline void log_error(const std::string& m) { log_line(LogLevel::kError, m); }

}  // namespace paddock
