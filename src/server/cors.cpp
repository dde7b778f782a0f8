#include "server/cors.h"

#include <arpa/inet.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <climits>

#include "base/env.h"
#include "server/host.h"

namespace paddock::server {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Loopback, private (RFC 1918 / ULA), link-local or unspecified addresses.
bool is_local_ip(const std::string& host) {
  std::array<unsigned char, 16> buf{};
  if (inet_pton(AF_INET, host.c_str(), buf.data()) == 1) {
    const unsigned a = buf[0], b = buf[1];
    return a == 127 || a == 10 || a == 0 || (a == 172 && b >= 16 && b < 32) || (a == 192 && b == 168) ||
           (a == 169 && b == 254);
  }
  if (inet_pton(AF_INET6, host.c_str(), buf.data()) == 1) {
    bool zero_prefix = true;
    for (int i = 0; i < 15; ++i) zero_prefix = zero_prefix && buf[i] == 0;
    if (zero_prefix && (buf[15] == 0 || buf[15] == 1)) return true;  // :: and ::1
    return (buf[0] & 0xfe) == 0xfc || (buf[0] == 0xfe && (buf[1] & 0xc0) == 0x80);
  }
  return false;
}

}  // namespace

bool wildcard_match(std::string_view pattern, std::string_view text) {
  size_t p = 0, t = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && pattern[p] == text[t]) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

OriginPolicy::OriginPolicy(std::vector<std::string> extra_origins) {
  for (const char* host : {"localhost", "127.0.0.1", "0.0.0.0"}) {
    for (const char* scheme : {"http://", "https://"}) {
      patterns_.push_back(std::string(scheme) + host);
      patterns_.push_back(std::string(scheme) + host + ":*");
    }
  }
  for (const char* p : {"app://*", "file://*", "tauri://*", "vscode-webview://*", "vscode-file://*"}) {
    patterns_.emplace_back(p);
  }
  for (std::string& o : extra_origins) patterns_.push_back(std::move(o));
}

OriginPolicy OriginPolicy::from_env() {
  std::vector<std::string> extra;
  const std::string raw = env_get_or("ORIGINS", "");
  size_t start = 0;
  while (start <= raw.size()) {
    size_t comma = raw.find(',', start);
    if (comma == std::string::npos) comma = raw.size();
    std::string item = raw.substr(start, comma - start);
    while (!item.empty() && (item.front() == ' ' || item.front() == '"' || item.front() == '\''))
      item.erase(0, 1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '"' || item.back() == '\''))
      item.pop_back();
    if (!item.empty()) extra.push_back(item);
    start = comma + 1;
  }
  return OriginPolicy(std::move(extra));
}

bool OriginPolicy::allows(std::string_view origin) const {
  for (const std::string& p : patterns_) {
    if (wildcard_match(p, origin)) return true;
  }
  return false;
}

bool host_allowed(std::string_view host_header, std::string_view bound_host) {
  if (!is_loopback_host(bound_host)) return true;  // bound publicly: the user chose exposure
  if (host_header.empty()) return true;
  const HostPort hp = parse_host(host_header);
  const std::string host = lower(hp.host);
  if (host == "localhost" || is_local_ip(host)) return true;
  if (ends_with(host, ".localhost") || ends_with(host, ".local") || ends_with(host, ".internal")) return true;
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) == 0 && host == lower(name)) return true;
  return false;
}

}  // namespace paddock::server
