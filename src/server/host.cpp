#include "server/host.h"

#include <charconv>

#include "base/log.h"

namespace paddock::server {

namespace {

std::string_view trim_quotes(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '"' || s.front() == '\'')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '"' || s.back() == '\'')) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string HostPort::to_string() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

HostPort parse_host(std::string_view value) {
  std::string_view s = trim_quotes(value);
  int default_port = kDefaultPort;
  if (const size_t p = s.find("://"); p != std::string_view::npos) {
    const std::string_view scheme = s.substr(0, p);
    if (scheme == "http") default_port = 80;
    if (scheme == "https") default_port = 443;
    s.remove_prefix(p + 3);
  }
  if (const size_t slash = s.find('/'); slash != std::string_view::npos) s = s.substr(0, slash);

  HostPort hp;
  std::string_view host = s, port;
  if (!s.empty() && s.front() == '[') {
    const size_t close = s.find(']');
    if (close != std::string_view::npos) {
      host = s.substr(1, close - 1);
      const std::string_view rest = s.substr(close + 1);
      if (!rest.empty() && rest.front() == ':') port = rest.substr(1);
    }
  } else if (const size_t colon = s.rfind(':'); colon != std::string_view::npos && s.find(':') == colon) {
    host = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  hp.host = host.empty() ? "127.0.0.1" : std::string(host);
  hp.port = default_port;
  if (!port.empty()) {
    int n = 0;
    const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), n);
    if (ec == std::errc() && ptr == port.data() + port.size() && n >= 0 && n <= 65535) {
      hp.port = n;
    } else {
      log_warn("invalid port \"" + std::string(port) + "\" in OLLAMA_HOST, using default port");
      hp.port = kDefaultPort;
    }
  }
  return hp;
}

bool is_loopback_host(std::string_view host) {
  return host == "localhost" || host == "::1" || host.substr(0, 4) == "127.";
}

}  // namespace paddock::server
