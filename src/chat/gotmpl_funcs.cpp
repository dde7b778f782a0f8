#include "chat/gotmpl_funcs.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <utility>

#include "chat/utf8.h"

namespace paddock::chat {

namespace {

Status fail(std::string msg) { return invalid_argument(std::move(msg)); }

Status want_args(const std::vector<Value>& args, size_t n, std::string_view name) {
  if (args.size() != n) {
    return fail("wrong number of args for " + std::string(name) + ": want " + std::to_string(n) + " got " +
                std::to_string(args.size()));
  }
  return Status::ok();
}

// ---- comparisons (text/template funcs.go) ----
enum class Basic { kInvalid, kBool, kInt, kFloat, kString, kOther };

Basic basic(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kInvalid: return Basic::kInvalid;
    case Value::Kind::kBool: return Basic::kBool;
    case Value::Kind::kInt: return Basic::kInt;
    case Value::Kind::kFloat: return Basic::kFloat;
    case Value::Kind::kString: return Basic::kString;
    default: return Basic::kOther;
  }
}

Result<Value> fn_eq(const std::vector<Value>& args, const FuncContext&) {
  if (args.size() < 2) return fail("missing argument for comparison");
  const Value& a = args[0];
  const Basic ka = basic(a);
  for (size_t i = 1; i < args.size(); ++i) {
    const Value& b = args[i];
    const Basic kb = basic(b);
    bool truth = false;
    if (ka != kb) {
      if (a.is_valid() && b.is_valid()) return fail("incompatible types for comparison");
    } else {
      switch (ka) {
        case Basic::kInvalid: truth = true; break;
        case Basic::kBool: truth = a.as_bool() == b.as_bool(); break;
        case Basic::kInt: truth = a.as_int() == b.as_int(); break;
        case Basic::kFloat: truth = a.as_float() == b.as_float(); break;
        case Basic::kString: truth = a.as_string() == b.as_string(); break;
        case Basic::kOther:
          if (a.kind() == Value::Kind::kList || b.kind() == Value::Kind::kList ||
              a.flavor() != Value::Flavor::kStruct || b.flavor() != Value::Flavor::kStruct) {
            return fail("non-comparable type " + go_print(a) + ": " + a.go_type());
          }
          truth = go_json(a) == go_json(b) && a.type_name() == b.type_name();
          break;
      }
    }
    if (truth) return Value(true);
  }
  return Value(false);
}

Result<Value> fn_ne(const std::vector<Value>& args, const FuncContext& ctx) {
  PADDOCK_TRY(want_args(args, 2, "ne"));
  PADDOCK_ASSIGN(Value eq, fn_eq(args, ctx));
  return Value(!eq.as_bool());
}

Result<bool> less_than(const Value& a, const Value& b) {
  const Basic ka = basic(a), kb = basic(b);
  if (ka == Basic::kInvalid || kb == Basic::kInvalid || ka == Basic::kOther || kb == Basic::kOther) {
    return fail("invalid type for comparison");
  }
  if (ka != kb) return fail("incompatible types for comparison");
  switch (ka) {
    case Basic::kInt: return a.as_int() < b.as_int();
    case Basic::kFloat: return a.as_float() < b.as_float();
    case Basic::kString: return a.as_string() < b.as_string();
    default: return fail("invalid type for comparison");
  }
}

template <int kOp>  // 0 lt, 1 le, 2 gt, 3 ge
Result<Value> fn_cmp(const std::vector<Value>& args, const FuncContext& ctx) {
  static constexpr std::array<const char*, 4> kNames = {"lt", "le", "gt", "ge"};
  PADDOCK_TRY(want_args(args, 2, kNames[kOp]));
  PADDOCK_ASSIGN(bool lt, less_than(args[0], args[1]));
  bool eq = false;
  if (kOp == 1 || kOp == 2) {
    PADDOCK_ASSIGN(Value e, fn_eq(args, ctx));
    eq = e.as_bool();
  }
  switch (kOp) {
    case 0: return Value(lt);
    case 1: return Value(lt || eq);
    case 2: return Value(!lt && !eq);
    default: return Value(!lt);
  }
}

Result<Value> fn_not(const std::vector<Value>& args, const FuncContext&) {
  PADDOCK_TRY(want_args(args, 1, "not"));
  return Value(!go_truth(args[0]));
}

Result<Value> fn_marker(const std::vector<Value>&, const FuncContext&) {
  return fail("and/or are evaluated by the executor");
}

Result<Value> fn_call(const std::vector<Value>& args, const FuncContext&) {
  if (args.empty()) return fail("wrong number of args for call: want at least 1 got 0");
  return fail("non-function of type " + args[0].go_type());
}

// ---- len, index, slice ----
Result<Value> fn_len(const std::vector<Value>& args, const FuncContext&) {
  PADDOCK_TRY(want_args(args, 1, "len"));
  const Value& v = args[0];
  switch (v.kind()) {
    case Value::Kind::kString: return Value(static_cast<int64_t>(v.as_string().size()));
    case Value::Kind::kList: return Value(static_cast<int64_t>(v.items().size()));
    case Value::Kind::kObject:
      if (v.flavor() != Value::Flavor::kStruct) return Value(static_cast<int64_t>(v.fields().size()));
      break;
    case Value::Kind::kInvalid: return fail("len of nil pointer");
    default: break;
  }
  return fail("len of type " + v.go_type());
}

Result<int64_t> index_arg(const Value& v, std::string_view what) {
  if (v.kind() != Value::Kind::kInt) {
    return fail("cannot index " + std::string(what) + " with type " + v.go_type());
  }
  return v.as_int();
}

Result<Value> fn_index(const std::vector<Value>& args, const FuncContext&) {
  if (args.empty()) return fail("wrong number of args for index: want at least 1 got 0");
  Value cur = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    if (!cur.is_valid()) return fail("index of untyped nil");
    switch (cur.kind()) {
      case Value::Kind::kList:
      case Value::Kind::kString: {
        PADDOCK_ASSIGN(int64_t k, index_arg(args[i], "slice/array"));
        const size_t n = cur.kind() == Value::Kind::kList ? cur.items().size() : cur.as_string().size();
        if (k < 0 || static_cast<uint64_t>(k) >= n) return fail("index out of range: " + std::to_string(k));
        if (cur.kind() == Value::Kind::kList) {
          cur = cur.items()[static_cast<size_t>(k)];
        } else {
          cur = Value(
              static_cast<int64_t>(static_cast<unsigned char>(cur.as_string()[static_cast<size_t>(k)])));
        }
        break;
      }
      case Value::Kind::kObject: {
        if (cur.flavor() == Value::Flavor::kStruct) return fail("can't index item of type " + cur.go_type());
        if (args[i].kind() != Value::Kind::kString) {
          return fail("value has type " + args[i].go_type() + "; should be string");
        }
        const Value* f = cur.find(args[i].as_string());
        cur = f ? *f : Value();
        break;
      }
      default: return fail("can't index item of type " + cur.go_type());
    }
  }
  return cur;
}

Result<Value> fn_slice(const std::vector<Value>& args, const FuncContext&) {
  if (args.empty()) return fail("wrong number of args for slice: want at least 1 got 0");
  const Value& v = args[0];
  if (!v.is_valid()) return fail("slice of untyped nil");
  if (args.size() > 4) return fail("too many slice indexes: " + std::to_string(args.size() - 1));
  const bool is_str = v.kind() == Value::Kind::kString;
  if (!is_str && v.kind() != Value::Kind::kList) return fail("can't slice item of type " + v.go_type());
  if (is_str && args.size() == 4) return fail("cannot 3-index slice a string");
  const int64_t cap = static_cast<int64_t>(is_str ? v.as_string().size() : v.items().size());
  std::array<int64_t, 3> idx = {0, cap, cap};
  for (size_t i = 1; i < args.size(); ++i) {
    PADDOCK_ASSIGN(int64_t k, index_arg(args[i], "slice/array"));
    if (k < 0 || k > cap) return fail("index out of range: " + std::to_string(k));
    idx[i - 1] = k;
  }
  if (idx[0] > idx[1])
    return fail("invalid slice index: " + std::to_string(idx[0]) + " > " + std::to_string(idx[1]));
  if (args.size() == 4 && idx[1] > idx[2]) {
    return fail("invalid slice index: " + std::to_string(idx[1]) + " > " + std::to_string(idx[2]));
  }
  if (is_str) {
    return Value(v.as_string().substr(static_cast<size_t>(idx[0]), static_cast<size_t>(idx[1] - idx[0])));
  }
  return Value::list(std::vector<Value>(v.items().begin() + idx[0], v.items().begin() + idx[1]), v.printer());
}

// ---- printing ----
std::string sprint(const std::vector<Value>& args, bool ln) {
  std::string out;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool is_str = args[i].kind() == Value::Kind::kString;
    if (i > 0 && (ln || (!is_str && args[i - 1].kind() != Value::Kind::kString))) out += ' ';
    std::string s = go_print(args[i]);
    out += args[i].is_valid() ? s : "<nil>";
  }
  if (ln) out += '\n';
  return out;
}

// Escapers take one string as is, else fmt.Sprint of all arguments.
std::string escaper_input(const std::vector<Value>& args) {
  if (args.size() == 1 && args[0].kind() == Value::Kind::kString) return args[0].as_string();
  return sprint(args, false);
}

Result<Value> fn_print(const std::vector<Value>& args, const FuncContext&) {
  return Value(sprint(args, false));
}
Result<Value> fn_println(const std::vector<Value>& args, const FuncContext&) {
  return Value(sprint(args, true));
}

Result<Value> fn_printf(const std::vector<Value>& args, const FuncContext&) {
  if (args.empty()) return fail("wrong number of args for printf: want at least 1 got 0");
  if (args[0].kind() != Value::Kind::kString) {
    return fail("wrong type for value; expected string; got " + args[0].go_type());
  }
  return Value(go_sprintf(args[0].as_string(), std::vector<Value>(args.begin() + 1, args.end())));
}

Result<Value> fn_html(const std::vector<Value>& args, const FuncContext&) {
  std::string out;
  for (char c : escaper_input(args)) {
    switch (c) {
      case '\0': out += "\xEF\xBF\xBD"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out += c;
    }
  }
  return Value(std::move(out));
}

Result<Value> fn_js(const std::vector<Value>& args, const FuncContext&) {
  static const char kHex[] = "0123456789ABCDEF";
  const std::string s = escaper_input(args);
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    const int32_t r = decode_utf8(s, &i);
    switch (r) {
      case '\\': out += "\\\\"; break;
      case '\'': out += "\\'"; break;
      case '"': out += "\\\""; break;
      case '<': out += "\\u003C"; break;
      case '>': out += "\\u003E"; break;
      case '&': out += "\\u0026"; break;
      case '=': out += "\\u003D"; break;
      default:
        if (r >= 0 && r < ' ') {
          out += "\\u00";
          out += kHex[r >> 4];
          out += kHex[r & 0xF];
        } else {
          out.append(s, start, i - start);
        }
    }
  }
  return Value(std::move(out));
}

Result<Value> fn_urlquery(const std::vector<Value>& args, const FuncContext&) {
  static const char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : escaper_input(args)) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
        c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else if (c == ' ') {
      out += '+';
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
  }
  return Value(std::move(out));
}

// ---- Ollama's functions ----
Result<Value> fn_json(const std::vector<Value>& args, const FuncContext&) {
  PADDOCK_TRY(want_args(args, 1, "json"));
  return Value(go_json(args[0]));
}

std::string shift_date(const std::string& ymd, int days) {
  int y = 0;
  unsigned m = 0, d = 0;
  if (std::sscanf(ymd.c_str(), "%d-%u-%u", &y, &m, &d) != 3) return ymd;
  const std::chrono::year_month_day date{std::chrono::year(y), std::chrono::month(m), std::chrono::day(d)};
  if (!date.ok()) return ymd;
  const std::chrono::year_month_day shifted{std::chrono::sys_days(date) + std::chrono::days(days)};
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%04d-%02u-%02u", static_cast<int>(shifted.year()),
                static_cast<unsigned>(shifted.month()), static_cast<unsigned>(shifted.day()));
  return buf;
}

Result<Value> fn_current_date(const std::vector<Value>&, const FuncContext& ctx) { return Value(ctx.date); }
Result<Value> fn_yesterday_date(const std::vector<Value>&, const FuncContext& ctx) {
  return Value(shift_date(ctx.date, -1));
}

std::string ts_type_name(std::string_view t) {
  if (t == "string") return "string";
  if (t == "number" || t == "integer") return "number";
  if (t == "boolean") return "boolean";
  if (t == "array") return "any[]";
  if (t == "object") return "Record<string, any>";
  if (t == "null") return "null";
  return "any";
}

std::string ts_type(const Value& prop, int depth) {
  const Value* any_of = prop.find("AnyOf");
  if (any_of && !any_of->items().empty() && depth < 32) {
    std::string out;
    for (const Value& alt : any_of->items()) {
      if (!out.empty()) out += " | ";
      out += ts_type(alt, depth + 1);
    }
    return out;
  }
  const Value* type = prop.find("Type");
  if (!type || type->items().empty()) return "any";
  std::string out;
  for (const Value& t : type->items()) {
    if (!out.empty()) out += " | ";
    out += ts_type_name(t.as_string());
  }
  return out;
}

Result<Value> fn_to_typescript_type(const std::vector<Value>& args, const FuncContext&) {
  PADDOCK_TRY(want_args(args, 1, "toTypeScriptType"));
  if (args[0].kind() != Value::Kind::kObject || args[0].type_name() != "api.ToolProperty")
    return Value("any");
  return Value(ts_type(args[0], 0));
}

struct Entry {
  std::string_view name;
  GoFunc fn;
};

constexpr Entry kFuncs[] = {
    {"and", fn_marker},
    {"or", fn_marker},
    {"not", fn_not},
    {"call", fn_call},
    {"eq", fn_eq},
    {"ne", fn_ne},
    {"lt", fn_cmp<0>},
    {"le", fn_cmp<1>},
    {"gt", fn_cmp<2>},
    {"ge", fn_cmp<3>},
    {"len", fn_len},
    {"index", fn_index},
    {"slice", fn_slice},
    {"print", fn_print},
    {"printf", fn_printf},
    {"println", fn_println},
    {"html", fn_html},
    {"js", fn_js},
    {"urlquery", fn_urlquery},
    {"json", fn_json},
    {"currentDate", fn_current_date},
    {"yesterdayDate", fn_yesterday_date},
    {"toTypeScriptType", fn_to_typescript_type},
};

// ---- fmt.Sprintf ----
struct Spec {
  bool minus = false, plus = false, sharp = false, zero = false, space = false;
  int width = -1;
  int prec = -1;
};

std::string pad(std::string s, const Spec& sp, bool numeric) {
  size_t runes = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++runes;
  if (sp.width < 0 || runes >= static_cast<size_t>(sp.width)) return s;
  const size_t n = static_cast<size_t>(sp.width) - runes;
  if (sp.minus) return s + std::string(n, ' ');
  if (sp.zero && numeric) {
    const size_t sign = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
    return s.substr(0, sign) + std::string(n, '0') + s.substr(sign);
  }
  return std::string(n, ' ') + s;
}

std::string bad_verb(char verb, const Value& v) {
  if (!v.is_valid()) return std::string("%!") + verb + "(<nil>)";
  return std::string("%!") + verb + "(" + v.go_type() + "=" + go_print(v) + ")";
}

std::string format_int(int64_t i, const Spec& sp, int base, bool upper) {
  const bool neg = i < 0;
  uint64_t u = neg ? 0 - static_cast<uint64_t>(i) : static_cast<uint64_t>(i);
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[u % static_cast<uint64_t>(base)]);
    u /= static_cast<uint64_t>(base);
  } while (u);
  if (sp.prec >= 0 && s.size() < static_cast<size_t>(sp.prec))
    s.insert(0, static_cast<size_t>(sp.prec) - s.size(), '0');
  if (sp.sharp && base == 16) s.insert(0, upper ? "0X" : "0x");
  if (neg)
    s.insert(s.begin(), '-');
  else if (sp.plus)
    s.insert(s.begin(), '+');
  else if (sp.space)
    s.insert(s.begin(), ' ');
  return s;
}

std::string format_one(char verb, const Spec& sp, const Value& v) {
  const Value::Kind k = v.kind();
  switch (verb) {
    case 'v':
      if (k == Value::Kind::kFloat && sp.prec >= 0)
        return pad(go_format_float(v.as_float(), 'g', sp.prec), sp, true);
      return pad(v.is_valid() ? go_print(v) : "<nil>", sp,
                 k == Value::Kind::kInt || k == Value::Kind::kFloat);
    case 's': {
      if (k == Value::Kind::kString || (v.printer() == Value::Printer::kJson && v.is_valid()) ||
          k == Value::Kind::kList || k == Value::Kind::kObject) {
        std::string s = go_print(v);
        if (sp.prec >= 0) {
          size_t i = 0;
          for (int r = 0; r < sp.prec && i < s.size(); ++r) decode_utf8(s, &i);
          s.resize(i);
        }
        return pad(s, sp, false);
      }
      return bad_verb(verb, v);
    }
    case 'q':
      if (k == Value::Kind::kString) return pad(go_quote(v.as_string()), sp, false);
      if (k == Value::Kind::kInt) {
        std::string r;
        append_utf8(&r, static_cast<int32_t>(v.as_int() < 0 || v.as_int() > 0x10FFFF ? 0xFFFD : v.as_int()));
        std::string q = go_quote(r);
        return pad("'" + q.substr(1, q.size() - 2) + "'", sp, false);
      }
      return bad_verb(verb, v);
    case 'd':
      if (k == Value::Kind::kInt) return pad(format_int(v.as_int(), sp, 10, false), sp, true);
      return bad_verb(verb, v);
    case 'x':
    case 'X':
      if (k == Value::Kind::kInt) return pad(format_int(v.as_int(), sp, 16, verb == 'X'), sp, true);
      if (k == Value::Kind::kString) {
        const char* digits = verb == 'X' ? "0123456789ABCDEF" : "0123456789abcdef";
        std::string s;
        for (char c : v.as_string()) {
          s += digits[static_cast<unsigned char>(c) >> 4];
          s += digits[static_cast<unsigned char>(c) & 0xF];
        }
        return pad(s, sp, false);
      }
      return bad_verb(verb, v);
    case 'o':
    case 'b':
      if (k == Value::Kind::kInt)
        return pad(format_int(v.as_int(), sp, verb == 'o' ? 8 : 2, false), sp, true);
      return bad_verb(verb, v);
    case 'c':
      if (k == Value::Kind::kInt) {
        std::string r;
        append_utf8(&r, static_cast<int32_t>(v.as_int() < 0 || v.as_int() > 0x10FFFF ? 0xFFFD : v.as_int()));
        return pad(r, sp, false);
      }
      return bad_verb(verb, v);
    case 't':
      if (k == Value::Kind::kBool) return pad(v.as_bool() ? "true" : "false", sp, false);
      return bad_verb(verb, v);
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G': {
      if (k != Value::Kind::kFloat) return bad_verb(verb, v);
      const char lower = static_cast<char>(verb | 0x20);
      int prec = sp.prec;
      if (prec < 0 && lower != 'g') prec = 6;
      std::string s = go_format_float(v.as_float(), lower, prec);
      if (sp.plus && !s.empty() && s[0] != '-') s.insert(s.begin(), '+');
      if (verb == 'E' || verb == 'G') {
        for (char& c : s) c = (c == 'e') ? 'E' : c;
      }
      return pad(s, sp, true);
    }
    default: return std::string("%!") + verb + "(" + v.go_type() + "=" + go_print(v) + ")";
  }
}

}  // namespace

std::string go_sprintf(std::string_view f, const std::vector<Value>& args) {
  std::string out;
  size_t argi = 0;
  size_t i = 0;
  while (i < f.size()) {
    if (f[i] != '%') {
      out += f[i++];
      continue;
    }
    ++i;
    Spec sp;
    for (; i < f.size(); ++i) {
      const char c = f[i];
      if (c == '-')
        sp.minus = true;
      else if (c == '+')
        sp.plus = true;
      else if (c == '#')
        sp.sharp = true;
      else if (c == '0')
        sp.zero = !sp.minus;
      else if (c == ' ')
        sp.space = true;
      else
        break;
    }
    auto read_num = [&](int* dst) {
      if (i < f.size() && f[i] == '*') {
        ++i;
        if (argi < args.size() && args[argi].kind() == Value::Kind::kInt) {
          *dst = static_cast<int>(std::min<int64_t>(std::max<int64_t>(args[argi].as_int(), 0), 10000));
        }
        ++argi;
        return;
      }
      int n = -1;
      while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
        n = (n < 0 ? 0 : n) * 10 + (f[i] - '0');
        if (n > 10000) n = 10000;
        ++i;
      }
      *dst = n;
    };
    read_num(&sp.width);
    if (i < f.size() && f[i] == '.') {
      ++i;
      read_num(&sp.prec);
      if (sp.prec < 0) sp.prec = 0;
    }
    if (i >= f.size()) {
      out += "%!(NOVERB)";
      break;
    }
    size_t vi = i;
    const int32_t verb = decode_utf8(f, &i);
    if (verb == '%') {
      out += '%';
      continue;
    }
    if (argi >= args.size()) {
      out += "%!" + std::string(f.substr(vi, i - vi)) + "(MISSING)";
      continue;
    }
    out += format_one(verb < 0x80 && verb >= 0 ? static_cast<char>(verb) : '?', sp, args[argi++]);
  }
  if (argi < args.size()) {
    out += "%!(EXTRA ";
    for (size_t k = argi; k < args.size(); ++k) {
      if (k > argi) out += ", ";
      out += args[k].go_type() + "=" + (args[k].is_valid() ? go_print(args[k]) : "<nil>");
    }
    out += ")";
  }
  return out;
}

const GoFunc* find_template_function(std::string_view name) {
  for (const Entry& e : kFuncs)
    if (e.name == name) return &e.fn;
  return nullptr;
}

}  // namespace paddock::chat
