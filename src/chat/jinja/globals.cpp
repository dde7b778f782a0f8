// Global functions every chat template may call, and strftime for strftime_now.
#include <cstdio>

#include "chat/jinja/builtins.h"
#include "chat/jinja/interpreter.h"

namespace paddock::jinja {
namespace {

const char* const kDays[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
const char* const kMonths[] = {"January", "February", "March",     "April",   "May",      "June",
                               "July",    "August",   "September", "October", "November", "December"};

Value range_fn(Interpreter& in, Args& a) {
  if (!a.keyword.empty()) throw TemplateError(ErrorKind::kType, "range() takes no keyword arguments");
  if (a.positional.empty() || a.positional.size() > 3)
    throw TemplateError(ErrorKind::kType, std::string("range expected 1 to 3 arguments, got ") +
                                              std::to_string(a.positional.size()));
  int64_t v[3];
  for (size_t i = 0; i < a.positional.size(); ++i) {
    const Value& x = a.positional[i];
    if (x.is_undefined()) throw_undefined(x);
    if (!x.is_int() && !x.is_bool())
      throw TemplateError(ErrorKind::kType,
                          std::string("'") + x.type_name() + "' object cannot be interpreted as an integer");
    v[i] = x.as_int();
  }
  int64_t start = 0, stop = v[0], step = 1;
  if (a.positional.size() >= 2) {
    start = v[0];
    stop = v[1];
  }
  if (a.positional.size() == 3) step = v[2];
  if (step == 0) throw TemplateError(ErrorKind::kType, "range() arg 3 must not be zero");
  // Count without overflow: the span fits in unsigned 64 bits.
  uint64_t count = 0;
  if (step > 0 && start < stop) {
    count =
        (static_cast<uint64_t>(stop) - static_cast<uint64_t>(start) - 1) / static_cast<uint64_t>(step) + 1;
  } else if (step < 0 && start > stop) {
    count =
        (static_cast<uint64_t>(start) - static_cast<uint64_t>(stop) - 1) / (0 - static_cast<uint64_t>(step)) +
        1;
  }
  if (count > static_cast<uint64_t>(in.limits().max_range))
    throw TemplateError(ErrorKind::kLimit,
                        "Range too big. The sandbox blocks ranges larger than MAX_RANGE (" +
                            std::to_string(in.limits().max_range) + ").");
  std::vector<Value> out;
  out.reserve(count);
  int64_t x = start;
  for (uint64_t i = 0; i < count; ++i, x += (i < count ? step : 0)) out.emplace_back(x);
  return Value::list(std::move(out));
}

Value kwargs_dict(const Args& a, size_t max_positional, const char* fn) {
  if (a.positional.size() > max_positional)
    throw TemplateError(ErrorKind::kType, std::string(fn) + "() got too many positional arguments");
  auto d = std::make_shared<DictData>();
  if (!a.positional.empty()) {
    if (!a.positional[0].is_dict())
      throw TemplateError(ErrorKind::kType, std::string(fn) + "() expects a mapping");
    d->items = a.positional[0].as_dict().items;
  }
  for (const auto& [k, v] : a.keyword) d->set(Value(k), v);
  return Value::dict(std::move(d));
}

}  // namespace

std::string py_strftime(const std::string& fmt, const std::tm& t) {
  std::string out;
  char b[32];
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 == fmt.size()) {
      out += fmt[i];
      continue;
    }
    const char c = fmt[++i];
    const int wday = ((t.tm_wday % 7) + 7) % 7;
    const int mon = ((t.tm_mon % 12) + 12) % 12;
    switch (c) {
      case 'Y':
        std::snprintf(b, sizeof(b), "%d", t.tm_year + 1900);
        out += b;
        break;
      case 'y':
        std::snprintf(b, sizeof(b), "%02d", (t.tm_year + 1900) % 100);
        out += b;
        break;
      case 'm':
        std::snprintf(b, sizeof(b), "%02d", mon + 1);
        out += b;
        break;
      case 'd':
        std::snprintf(b, sizeof(b), "%02d", t.tm_mday);
        out += b;
        break;
      case 'e':
        std::snprintf(b, sizeof(b), "%2d", t.tm_mday);
        out += b;
        break;
      case 'j':
        std::snprintf(b, sizeof(b), "%03d", t.tm_yday + 1);
        out += b;
        break;
      case 'H':
        std::snprintf(b, sizeof(b), "%02d", t.tm_hour);
        out += b;
        break;
      case 'I':
        std::snprintf(b, sizeof(b), "%02d", t.tm_hour % 12 == 0 ? 12 : t.tm_hour % 12);
        out += b;
        break;
      case 'M':
        std::snprintf(b, sizeof(b), "%02d", t.tm_min);
        out += b;
        break;
      case 'S':
        std::snprintf(b, sizeof(b), "%02d", t.tm_sec);
        out += b;
        break;
      case 'p': out += t.tm_hour < 12 ? "AM" : "PM"; break;
      case 'A': out += kDays[wday]; break;
      case 'a': out += std::string(kDays[wday], 3); break;
      case 'B': out += kMonths[mon]; break;
      case 'b':
      case 'h': out += std::string(kMonths[mon], 3); break;
      case 'w': out += std::to_string(wday); break;
      case 'F':
        std::snprintf(b, sizeof(b), "%d-%02d-%02d", t.tm_year + 1900, mon + 1, t.tm_mday);
        out += b;
        break;
      case '%': out += '%'; break;
      default: out += '%'; out += c;
    }
  }
  return out;
}

void install_globals(std::map<std::string, Value, std::less<>>& vars) {
  vars["range"] = Value::callable("range", range_fn);
  vars["dict"] = Value::callable("dict", [](Interpreter&, Args& a) { return kwargs_dict(a, 1, "dict"); });
  vars["namespace"] = Value::callable("namespace", [](Interpreter& in, Args& a) {
    const Value d = kwargs_dict(a, 1, "namespace");
    return in.make_namespace(std::make_shared<DictData>(d.as_dict()));
  });
  vars["raise_exception"] = Value::callable("raise_exception", [](Interpreter&, Args& a) -> Value {
    throw TemplateError(ErrorKind::kRaised, arg(a, 0, "message", Value("")).str());
  });
  vars["strftime_now"] = Value::callable("strftime_now", [](Interpreter& in, Args& a) {
    return Value(py_strftime(expect_string(arg(a, 0, "format"), "strftime_now format"), in.date()));
  });
}

}  // namespace paddock::jinja
