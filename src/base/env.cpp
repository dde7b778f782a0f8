#include "base/env.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace paddock {

std::optional<std::string> env_get(const std::string& name) {
  for (const char* prefix : {"PADDOCK_", "OLLAMA_"}) {
    if (const char* v = std::getenv((prefix + name).c_str())) return std::string(v);
  }
  return std::nullopt;
}

std::string env_get_or(const std::string& name, const std::string& fallback) {
  return env_get(name).value_or(fallback);
}

bool env_flag(const std::string& name, bool fallback) {
  auto v = env_get(name);
  if (!v) return fallback;
  std::string s = *v;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "1" || s == "true" || s == "yes" || s == "on") return true;
  if (s.empty() || s == "0" || s == "false" || s == "no" || s == "off") return false;
  return fallback;
}

}  // namespace paddock
