// Settings from the environment. Every OLLAMA_X that Ollama reads is also read as PADDOCK_X,
// and PADDOCK_X wins:  env_get("HOST") looks at PADDOCK_HOST, then OLLAMA_HOST.
#pragma once

#include <optional>
#include <string>

namespace paddock {

std::optional<std::string> env_get(const std::string& name);
std::string env_get_or(const std::string& name, const std::string& fallback);
// "1", "true", "yes", "on" (any case) are true; "0", "false", "no", "off", "" false.
bool env_flag(const std::string& name, bool fallback = false);

}  // namespace paddock
