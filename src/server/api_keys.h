// Optional API keys (PADDOCK_API_KEYS / OLLAMA_API_KEYS): off when unset, as Ollama (which
// has none). When set, every route but the liveness ones (`/`, `/api/version`, CORS
// preflights) needs a key, sent as `Authorization: Bearer KEY` (Ollama's and OpenAI's
// clients) or `x-api-key: KEY` (Anthropic's). A key's scope: `use` (the default) may run
// models and read the model list; `admin` may also pull, push, create, copy and delete.
//   PADDOCK_API_KEYS="k3y-for-apps,adm1n-key:admin"
//   const ApiKeys keys = ApiKeys::from_env();
//   if (const auto denied = keys.check(request)) return *denied;  // 401 or 403
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/http_types.h"

namespace paddock::server {

enum class KeyScope : uint8_t { kUse, kAdmin };

// Why a request was refused: 401 (no key or an unknown one) or 403 (a use key on an admin route).
struct Denied {
  int status;
  std::string message;
};

class ApiKeys {
 public:
  ApiKeys() = default;
  // "KEY[:use|:admin],..." (spaces around entries ignored). Errors: an empty key, an unknown
  // scope, a key shorter than 16 characters (guessable).
  static Result<ApiKeys> parse(std::string_view spec);
  // From PADDOCK_API_KEYS / OLLAMA_API_KEYS; unset or empty: no keys.
  static Result<ApiKeys> from_env();

  bool enabled() const { return !keys_.empty(); }
  // nullopt when the request may go on.
  std::optional<Denied> check(const HttpRequest& request) const;
  // The scope a route's path needs.
  static KeyScope scope_of(std::string_view path);

 private:
  struct Key {
    std::string secret;
    KeyScope scope;
  };
  std::vector<Key> keys_;
};

}  // namespace paddock::server
