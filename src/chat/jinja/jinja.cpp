#include "chat/jinja/jinja.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>

#include "chat/jinja/ast.h"
#include "chat/jinja/error.h"
#include "chat/jinja/interpreter.h"
#include "chat/jinja/lexer.h"
#include "chat/jinja/parser.h"

namespace paddock::jinja {

struct Template::Parsed {
  Body body;
  Options options;
  std::optional<std::tm> date;  // fixed date, else now
};

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

Result<std::tm> parse_date(const std::string& s) {
  int y = 0, m = 0, d = 0;
  char tail = 0;
  if (s.size() != 10 || std::sscanf(s.c_str(), "%4d-%2d-%2d%c", &y, &m, &d, &tail) != 3 || m < 1 || m > 12 ||
      d < 1 || d > 31)
    return invalid_argument("jinja date: expected YYYY-MM-DD, found '" + s + "'");
  std::tm t{};
  t.tm_year = y - 1900;
  t.tm_mon = m - 1;
  t.tm_mday = d;
  const int64_t days = days_from_civil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
  t.tm_wday = static_cast<int>(((days % 7) + 11) % 7);  // 1970-01-01 was a Thursday
  t.tm_yday = static_cast<int>(days - days_from_civil(y, 1, 1));
  return t;
}

std::tm now_utc() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm t{};
  gmtime_r(&now, &t);
  return t;
}

Status to_status(const TemplateError& e) {
  std::string msg = std::string(error_kind_name(e.kind())) + std::string(": ") + e.what();
  if (e.line() > 0) msg += std::string(" (line ") + std::to_string(e.line()) + ")";
  return Status(e.kind() == ErrorKind::kLimit ? Code::kResourceExhausted : Code::kInvalidArgument, msg);
}

}  // namespace

Result<Template> Template::parse(std::string_view source, const Options& options) {
  auto parsed = std::make_shared<Parsed>();
  parsed->options = options;
  if (!options.date.empty()) {
    PADDOCK_ASSIGN(parsed->date, parse_date(options.date));
  }
  try {
    parsed->body =
        jinja::parse(lex(source, options.trim_blocks, options.lstrip_blocks), options.limits.max_nesting);
  } catch (const TemplateError& e) {
    return to_status(e);
  }
  return Template(std::move(parsed));
}

namespace {

template <typename Json>
Result<std::string> render_json(const Template::Parsed& parsed, const Json& context) {
  if (!context.is_object())
    return invalid_argument(std::string("jinja render: expected a JSON object as context, found ") +
                            context.type_name());
  try {
    Interpreter in(parsed.options.limits, parsed.date ? *parsed.date : now_utc());
    return in.render(parsed.body, Value::from_json(context));
  } catch (const TemplateError& e) {
    return to_status(e);
  } catch (const std::bad_alloc&) {
    return Status(Code::kResourceExhausted, "jinja render: out of memory");
  } catch (const std::exception& e) {
    return internal_error(std::string("jinja render: ") + e.what());
  }
}

}  // namespace

Result<std::string> Template::render(const nlohmann::ordered_json& context) const {
  return render_json(*parsed_, context);
}

Result<std::string> Template::render(const nlohmann::json& context) const {
  return render_json(*parsed_, context);
}

}  // namespace paddock::jinja
