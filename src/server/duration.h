// keep_alive and OLLAMA_KEEP_ALIVE values, parsed as Ollama parses them: a JSON number is
// seconds, a string is a Go duration ("5m", "1h30m", "-1m", "300ms") or bare seconds
// ("3600"). Negative means "keep forever" (kForever); zero means "unload when done".
//   PADDOCK_ASSIGN(auto ka, parse_keep_alive(body["keep_alive"]));
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace paddock::server {

using Duration = std::chrono::nanoseconds;
inline constexpr Duration kForever = Duration::max();
inline constexpr Duration kDefaultKeepAlive = std::chrono::minutes(5);

// Go's time.ParseDuration: [-+]?(\d+(\.\d*)?(ns|us|µs|ms|s|m|h))+ or "0".
Result<Duration> parse_go_duration(std::string_view s);
// Request form; null/absent = nullopt (use the default). Negative -> kForever.
Result<std::optional<Duration>> parse_keep_alive(const nlohmann::json& v);
// OLLAMA_KEEP_ALIVE: like the request form, an unparsable value falls back to 5m.
Duration keep_alive_from_env();

}  // namespace paddock::server
