#include "server/duration.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>

#include "base/env.h"
#include "base/log.h"

namespace paddock::server {

namespace {

struct Unit {
  std::string_view name;
  double ns;
};
// Longest names first so "ms" is not read as "m".
constexpr Unit kUnits[] = {{"ns", 1},   {"us", 1e3}, {"\xc2\xb5s", 1e3}, {"\xce\xbcs", 1e3},
                           {"ms", 1e6}, {"s", 1e9},  {"m", 60e9},        {"h", 3600e9}};

Status bad_duration(std::string_view s) {
  return invalid_argument("time: invalid duration \"" + std::string(s) + "\"");
}

Duration from_seconds(double s) {
  if (s < 0) return kForever;
  const double ns = s * 1e9;
  if (ns >= static_cast<double>(std::numeric_limits<int64_t>::max())) return kForever;
  return Duration(static_cast<int64_t>(ns));
}

bool all_digits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

Result<Duration> parse_go_duration(std::string_view s) {
  const std::string_view orig = s;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration(0);
  if (s.empty()) return bad_duration(orig);
  double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    double value = 0;
    bool digits = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      value = value * 10 + (s[i] - '0');
      ++i;
      digits = true;
    }
    if (i < s.size() && s[i] == '.') {
      ++i;
      double scale = 0.1;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        value += (s[i] - '0') * scale;
        scale /= 10;
        ++i;
        digits = true;
      }
    }
    if (!digits) return bad_duration(orig);
    s.remove_prefix(i);
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (s.substr(0, u.name.size()) == u.name && (!unit || u.name.size() > unit->name.size())) unit = &u;
    }
    if (!unit) return bad_duration(orig);
    s.remove_prefix(unit->name.size());
    total += value * unit->ns;
    if (total > 9.2e18) return bad_duration(orig);  // Go: "invalid duration" on overflow
  }
  const auto ns = static_cast<int64_t>(total);
  return Duration(neg ? -ns : ns);
}

Result<std::optional<Duration>> parse_keep_alive(const nlohmann::json& v) {
  if (v.is_null()) return std::optional<Duration>();
  if (v.is_number()) {
    const double s = v.get<double>();
    if (!std::isfinite(s)) return invalid_argument("invalid keep_alive: not a finite number");
    return std::optional<Duration>(from_seconds(s));
  }
  if (!v.is_string())
    return invalid_argument("invalid keep_alive: expected a duration string or a number of seconds");
  const std::string text = v.get<std::string>();
  if (all_digits(text) || (text.size() > 1 && text[0] == '-' && all_digits(text.substr(1)))) {
    return std::optional<Duration>(from_seconds(std::strtod(text.c_str(), nullptr)));
  }
  auto d = parse_go_duration(text);
  if (!d.ok()) return d.status();
  return std::optional<Duration>(d->count() < 0 ? kForever : *d);
}

Duration keep_alive_from_env() {
  const auto raw = env_get("KEEP_ALIVE");
  if (!raw || raw->empty()) return kDefaultKeepAlive;
  auto parsed = parse_keep_alive(nlohmann::json(*raw));
  if (!parsed.ok() || !parsed->has_value()) {
    log_warn("invalid OLLAMA_KEEP_ALIVE \"" + *raw + "\", using 5m");
    return kDefaultKeepAlive;
  }
  return **parsed;
}

}  // namespace paddock::server
