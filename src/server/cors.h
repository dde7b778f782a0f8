// Browser-facing policy, as Ollama applies it:
// - CORS: an Origin is allowed if it matches the built-in list (http/https on localhost,
//   127.0.0.1, 0.0.0.0 with any port; app://, file://, tauri://, vscode-webview://,
//   vscode-file://) or OLLAMA_ORIGINS (comma separated, '*' wildcards, "*" = any).
// - Host check (DNS-rebinding defence): when bound to loopback, a request whose Host is not
//   loopback/private/unspecified, localhost, *.localhost, *.local, *.internal or the
//   machine's hostname is refused with 403.
//   OriginPolicy p = OriginPolicy::from_env(); p.allows("http://localhost:3000");
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace paddock::server {

class OriginPolicy {
 public:
  explicit OriginPolicy(std::vector<std::string> extra_origins);
  static OriginPolicy from_env();
  bool allows(std::string_view origin) const;

 private:
  std::vector<std::string> patterns_;
};

// Glob match where '*' matches any run of characters.
bool wildcard_match(std::string_view pattern, std::string_view text);

// The Host header check; `bound_host` is the listen address ("127.0.0.1", "0.0.0.0").
bool host_allowed(std::string_view host_header, std::string_view bound_host);

}  // namespace paddock::server
