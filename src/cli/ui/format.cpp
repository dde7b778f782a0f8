#include "cli/ui/format.h"

#include <cmath>
#include <cstdio>

#include "cli/ui/wordwrap.h"

namespace paddock::cli::ui {

namespace {

constexpr int64_t kSecond = 1'000'000'000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;

std::string printf_string(const char* fmt, auto... args) {
  char buf[128];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

// Go's fmtFrac: the fractional digits of v / 10^prec without trailing zeros.
std::string go_fraction(uint64_t& v, int prec) {
  std::string digits;
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    const uint64_t digit = v % 10;
    print = print || digit != 0;
    if (print) digits.insert(digits.begin(), static_cast<char>('0' + digit));
    v /= 10;
  }
  return print ? "." + digits : "";
}

}  // namespace

std::string human_bytes(int64_t bytes) {
  struct Unit {
    double size;
    const char* name;
  };
  constexpr Unit kUnits[] = {{1e12, "TB"}, {1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}};
  for (const Unit& u : kUnits) {
    if (static_cast<double>(bytes) < u.size) continue;
    const double value = static_cast<double>(bytes) / u.size;
    if (value >= 10 || value == std::trunc(value)) {
      return printf_string("%d %s", static_cast<int>(value), u.name);
    }
    return printf_string("%.1f %s", value, u.name);
  }
  return printf_string("%lld B", static_cast<long long>(bytes));
}

std::string human_span(int64_t nanos) {
  const int64_t seconds = nanos / kSecond;
  if (seconds < 1) return "Less than a second";
  if (seconds == 1) return "1 second";
  if (seconds < 60) return printf_string("%lld seconds", static_cast<long long>(seconds));
  const int64_t minutes = nanos / kMinute;
  if (minutes == 1) return "About a minute";
  if (minutes < 60) return printf_string("%lld minutes", static_cast<long long>(minutes));
  const double exact_hours = static_cast<double>(nanos) / static_cast<double>(kHour);
  const auto hours = static_cast<long long>(std::round(exact_hours));
  if (hours == 1) return "About an hour";
  if (hours < 48) return printf_string("%lld hours", hours);
  if (hours < 24 * 7 * 2) return printf_string("%lld days", hours / 24);
  if (hours < 24 * 30 * 2) return printf_string("%lld weeks", hours / 24 / 7);
  if (hours < 24 * 365 * 2) return printf_string("%lld months", hours / 24 / 30);
  return printf_string("%lld years", static_cast<long long>(exact_hours / 24 / 365));
}

std::string human_time(int64_t unix_nanos, int64_t now_unix_nanos) {
  const int64_t delta = now_unix_nanos - unix_nanos;
  constexpr int64_t kTwentyYears = 20LL * 365 * 24 * kHour;
  if (delta < -kTwentyYears) return "Forever";
  if (delta < 0) return human_span(-delta) + " from now";
  return human_span(delta) + " ago";
}

std::string go_duration(int64_t nanos) {
  if (nanos == 0) return "0s";
  const bool negative = nanos < 0;
  uint64_t u = negative ? 0 - static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  std::string out;
  if (u < static_cast<uint64_t>(kSecond)) {
    int prec = 0;
    const char* unit = "ns";
    if (u >= 1'000'000) {
      prec = 6;
      unit = "ms";
    } else if (u >= 1'000) {
      prec = 3;
      unit = "µs";
    }
    const std::string frac = go_fraction(u, prec);
    out = std::to_string(u) + frac + unit;
  } else {
    const std::string frac = go_fraction(u, 9);
    out = std::to_string(u % 60) + frac + "s";
    u /= 60;
    if (u > 0) {
      out = std::to_string(u % 60) + "m" + out;
      u /= 60;
      if (u > 0) out = std::to_string(u) + "h" + out;
    }
  }
  return negative ? "-" + out : out;
}

std::string short_duration(int64_t seconds) {
  if (seconds >= 3600)
    return printf_string("%lldh%lldm", static_cast<long long>(seconds / 3600),
                         static_cast<long long>(seconds % 3600 / 60));
  if (seconds >= 60)
    return printf_string("%lldm%llds", static_cast<long long>(seconds / 60),
                         static_cast<long long>(seconds % 60));
  return printf_string("%llds", static_cast<long long>(seconds));
}

std::optional<int64_t> parse_rfc3339(std::string_view s) {
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (s.size() < 20) return std::nullopt;
  const std::string head(s.substr(0, 19));
  if (std::sscanf(head.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &y, &mo, &d, &h, &mi, &sec) != 6)
    return std::nullopt;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  size_t i = 19;
  int64_t frac_nanos = 0;
  if (i < s.size() && s[i] == '.') {
    int64_t scale = 100'000'000;
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      frac_nanos += (s[i] - '0') * scale;
      scale /= 10;
    }
  }
  int64_t offset_seconds = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i + 6 == s.size() && (s[i] == '+' || s[i] == '-') && s[i + 3] == ':') {
    const int oh = (s[i + 1] - '0') * 10 + (s[i + 2] - '0');
    const int om = (s[i + 4] - '0') * 10 + (s[i + 5] - '0');
    offset_seconds = (s[i] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  // Days from civil (Howard Hinnant's algorithm), valid far beyond any timestamp we meet.
  const int yy = y - (mo <= 2 ? 1 : 0);
  const int era = (yy >= 0 ? yy : yy - 399) / 400;
  const int yoe = yy - era * 400;
  const int doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  const int64_t days = static_cast<int64_t>(era) * 146097 + doe - 719468;
  const int64_t secs = days * 86400 + h * 3600 + mi * 60 + sec - offset_seconds;
  // Far-future "forever" stamps overflow int64 nanoseconds: clamp them.
  constexpr int64_t kMaxSeconds = INT64_MAX / kSecond - 1;
  if (secs > kMaxSeconds) return INT64_MAX;
  if (secs < -kMaxSeconds) return INT64_MIN;
  return secs * kSecond + frac_nanos;
}

std::string processor_text(int64_t size, int64_t size_vram) {
  if (size_vram == 0) return "100% CPU";
  if (size_vram == size) return "100% GPU";
  if (size_vram > size || size == 0) return "Unknown";
  const double cpu = std::round(static_cast<double>(size - size_vram) / static_cast<double>(size) * 100);
  return printf_string("%d%%/%d%% CPU/GPU", static_cast<int>(cpu), 100 - static_cast<int>(cpu));
}

std::string metrics_summary(const nlohmann::json& c) {
  const auto num = [&](const char* key) -> int64_t {
    const auto it = c.find(key);
    return it != c.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
  };
  std::string out;
  const auto rate = [](int64_t count, int64_t nanos) {
    return printf_string("%.2f tokens/s", static_cast<double>(count) / (static_cast<double>(nanos) / 1e9));
  };
  if (const int64_t v = num("total_duration"); v > 0) out += "total duration:       " + go_duration(v) + "\n";
  if (const int64_t v = num("load_duration"); v > 0) out += "load duration:        " + go_duration(v) + "\n";
  const int64_t prompt_count = num("prompt_eval_count");
  if (prompt_count > 0) out += "prompt eval count:    " + std::to_string(prompt_count) + " token(s)\n";
  if (const int64_t v = num("prompt_eval_duration"); v > 0) {
    out += "prompt eval duration: " + go_duration(v) + "\n";
    out += "prompt eval rate:     " + rate(prompt_count, v) + "\n";
  }
  const int64_t eval_count = num("eval_count");
  if (eval_count > 0) out += "eval count:           " + std::to_string(eval_count) + " token(s)\n";
  if (const int64_t v = num("eval_duration"); v > 0) {
    out += "eval duration:        " + go_duration(v) + "\n";
    out += "eval rate:            " + rate(eval_count, v) + "\n";
  }
  return out;
}

std::string format_table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], display_width(row[i]));
  }
  std::string out;
  for (const auto& row : rows) {
    for (size_t i = 0; i < row.size(); ++i) {
      out += row[i];
      out.append(widths[i] - display_width(row[i]) + 4, ' ');
    }
    out += '\n';
  }
  return out;
}

}  // namespace paddock::cli::ui
