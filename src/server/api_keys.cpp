#include "server/api_keys.h"

#include "base/env.h"

namespace paddock::server {

namespace {

constexpr size_t kMinKeyLength = 16;

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Time depends on the given key's length only, not on where it differs from the secret
// (a key must not leak byte by byte). secret is never empty.
bool same_secret(std::string_view given, std::string_view secret) {
  unsigned char diff = given.size() == secret.size() ? 0 : 1;
  for (size_t i = 0; i < given.size(); ++i) {
    diff |= static_cast<unsigned char>(given[i] ^ secret[i % secret.size()]);
  }
  return diff == 0;
}

// The key a request carries: `Authorization: Bearer KEY`, else `x-api-key: KEY`.
std::string presented_key(const HttpRequest& r) {
  const std::string auth = r.header("Authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() > kBearer.size() && auth.compare(0, kBearer.size(), kBearer) == 0) {
    return std::string(trim(std::string_view(auth).substr(kBearer.size())));
  }
  return std::string(trim(r.header("x-api-key")));
}

}  // namespace

Result<ApiKeys> ApiKeys::parse(std::string_view spec) {
  ApiKeys out;
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view entry = trim(spec.substr(0, comma));
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (entry.empty()) continue;
    const size_t colon = entry.rfind(':');
    std::string_view secret = entry;
    KeyScope scope = KeyScope::kUse;
    if (colon != std::string_view::npos) {
      const std::string_view name = entry.substr(colon + 1);
      if (name != "use" && name != "admin") {
        return invalid_argument("API keys: unknown scope \"" + std::string(name) + "\" (expected use or admin)");
      }
      scope = name == "admin" ? KeyScope::kAdmin : KeyScope::kUse;
      secret = entry.substr(0, colon);
    }
    if (secret.size() < kMinKeyLength) {
      return invalid_argument("API keys: a key must have at least " + std::to_string(kMinKeyLength) +
                              " characters (found one of " + std::to_string(secret.size()) + ")");
    }
    out.keys_.push_back(Key{.secret = std::string(secret), .scope = scope});
  }
  return out;
}

Result<ApiKeys> ApiKeys::from_env() { return parse(env_get_or("API_KEYS", "")); }

KeyScope ApiKeys::scope_of(std::string_view path) {
  const bool admin = path == "/api/create" || path == "/api/copy" || path == "/api/delete" || path == "/api/pull" ||
                     path == "/api/push" || path.rfind("/api/blobs/", 0) == 0;
  return admin ? KeyScope::kAdmin : KeyScope::kUse;
}

std::optional<Denied> ApiKeys::check(const HttpRequest& request) const {
  if (keys_.empty() || request.method == "OPTIONS" || request.path == "/" || request.path == "/api/version" ||
      request.path == "/health") {
    return std::nullopt;
  }
  const std::string key = presented_key(request);
  const Key* found = nullptr;
  for (const Key& k : keys_) {
    if (same_secret(key, k.secret)) found = &k;
  }
  if (found == nullptr) {
    return Denied{401, key.empty() ? "unauthorized: this server needs an API key (Authorization: Bearer KEY)"
                                   : "unauthorized: the API key is not valid"};
  }
  if (scope_of(request.path) == KeyScope::kAdmin && found->scope != KeyScope::kAdmin) {
    return Denied{403, "forbidden: this API key may run models but not pull, push, create, copy or delete them"};
  }
  return std::nullopt;
}

}  // namespace paddock::server
