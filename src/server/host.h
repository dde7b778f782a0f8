// Where `serve` listens: OLLAMA_HOST / PADDOCK_HOST parsed with Ollama's rules (scheme
// optional, "http://" implies port 80 and "https://" 443 when no port is given, otherwise
// 11434; "[::1]:port" for IPv6; ":port" = 127.0.0.1; an invalid port falls back to 11434).
//   HostPort hp = parse_host(env_get_or("HOST", ""));  // {"127.0.0.1", 11434}
#pragma once

#include <string>
#include <string_view>

namespace paddock::server {

inline constexpr int kDefaultPort = 11434;

struct HostPort {
  std::string host;  // without brackets: "::1"
  int port = kDefaultPort;
  std::string to_string() const;  // "127.0.0.1:11434", "[::1]:8080"
};

HostPort parse_host(std::string_view value);
// Loopback names and addresses: localhost, 127.x.x.x, ::1.
bool is_loopback_host(std::string_view host);

}  // namespace paddock::server
