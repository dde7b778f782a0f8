#include "store/modelfile.h"

#include <algorithm>
#include <cctype>

namespace paddock::store {
namespace {

enum class State { kNil, kName, kValue, kParameter, kMessage, kComment };

constexpr const char* kInvalidCommand =
    "command must be one of \"from\", \"license\", \"template\", \"system\", \"adapter\", \"draft\", "
    "\"renderer\", \"parser\", \"parameter\", \"message\", or \"requires\"";

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_newline(char c) { return c == '\r' || c == '\n'; }

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_command(std::string_view lc) {
  for (const std::string_view c : {"from", "license", "template", "system", "adapter", "draft", "renderer",
                                   "parser", "parameter", "message", "requires"})
    if (lc == c) return true;
  return false;
}

Status at(int line, int col, const std::string& msg) {
  return invalid_argument("(line " + std::to_string(line) + ", column " + std::to_string(col) + "): " + msg);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (is_space(s.front()) || is_newline(s.front()))) s.remove_prefix(1);
  while (!s.empty() && (is_space(s.back()) || is_newline(s.back()))) s.remove_suffix(1);
  return s;
}

// Ollama's unquote: """...""" or "..." or a bare value; false while a quote is open.
std::optional<std::string> unquote(std::string_view s) {
  if (s.size() >= 3 && s.substr(0, 3) == "\"\"\"") {
    if (s.size() >= 6 && s.substr(s.size() - 3) == "\"\"\"") return std::string(s.substr(3, s.size() - 6));
    return std::nullopt;
  }
  if (!s.empty() && s[0] == '"') {
    if (s.size() >= 2 && s.back() == '"') return std::string(s.substr(1, s.size() - 2));
    return std::nullopt;
  }
  return std::string(s);
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Strips a UTF-8 BOM; converts UTF-16 (with a BOM) to UTF-8, unpaired surrogates -> U+FFFD.
std::string decode_text(std::string_view in) {
  if (in.size() >= 3 && in.substr(0, 3) == "\xEF\xBB\xBF") return std::string(in.substr(3));
  if (in.size() < 2) return std::string(in);
  const bool le = in.substr(0, 2) == "\xFF\xFE";
  const bool be = in.substr(0, 2) == "\xFE\xFF";
  if (!le && !be) return std::string(in);
  std::string out;
  const auto unit = [&](size_t i) {
    const auto a = static_cast<uint8_t>(in[i]), b = static_cast<uint8_t>(in[i + 1]);
    return static_cast<uint32_t>(le ? (b << 8) | a : (a << 8) | b);
  };
  for (size_t i = 2; i + 1 < in.size(); i += 2) {
    uint32_t u = unit(i);
    if (u >= 0xD800 && u <= 0xDBFF && i + 3 < in.size()) {
      const uint32_t lo = unit(i + 2);
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        append_utf8(out, 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00));
        i += 2;
        continue;
      }
    }
    if (u >= 0xD800 && u <= 0xDFFF) u = 0xFFFD;
    append_utf8(out, u);
  }
  if (in.size() % 2) append_utf8(out, 0xFFFD);
  return out;
}

// golang.org/x/mod/semver.IsValid on "v" + s (shorthands v1 and v1.2 allowed).
bool is_semver(std::string_view s) {
  const auto num = [&](std::string_view& r) {
    size_t n = 0;
    while (n < r.size() && is_digit(r[n])) ++n;
    if (n == 0 || (n > 1 && r[0] == '0')) return false;
    r.remove_prefix(n);
    return true;
  };
  const auto ident_list = [](std::string_view r, bool numeric_no_leading_zero) {
    if (r.empty()) return false;
    size_t start = 0;
    while (start <= r.size()) {
      size_t end = r.find('.', start);
      if (end == std::string_view::npos) end = r.size();
      const std::string_view id = r.substr(start, end - start);
      if (id.empty()) return false;
      bool all_digits = true;
      for (const char c : id) {
        if (!is_alpha(c) && !is_digit(c) && c != '-') return false;
        all_digits = all_digits && is_digit(c);
      }
      if (numeric_no_leading_zero && all_digits && id.size() > 1 && id[0] == '0') return false;
      start = end + 1;
    }
    return true;
  };
  std::string_view r = s;
  if (!num(r)) return false;
  for (int part = 0; part < 2 && !r.empty() && r[0] == '.'; ++part) {
    r.remove_prefix(1);
    if (!num(r)) return false;
  }
  if (r.empty()) return true;
  const size_t plus = r.find('+');
  std::string_view pre = r.substr(0, plus), build = plus == std::string_view::npos ? "" : r.substr(plus + 1);
  // A pre-release or build needs the full MAJOR.MINOR.PATCH form.
  if (std::count(s.begin(), s.begin() + static_cast<long>(s.size() - r.size()), '.') != 2) return false;
  if (!pre.empty() && (pre[0] != '-' || !ident_list(pre.substr(1), true))) return false;
  if (plus != std::string_view::npos && !ident_list(build, false)) return false;
  return true;
}

Status apply(Modelfile& mf, const ModelfileCommand& c) {
  const std::string& n = c.name;
  if (n == "model") {
    mf.from.push_back(c.args);
  } else if (n == "adapter") {
    mf.adapters.push_back(c.args);
  } else if (n == "template") {
    mf.template_text = c.args;
  } else if (n == "system") {
    mf.system = c.args;
  } else if (n == "license") {
    mf.licenses.push_back(c.args);
  } else if (n == "renderer") {
    mf.renderer = c.args;
  } else if (n == "parser") {
    mf.parser = c.args;
  } else if (n == "draft") {
    mf.draft = c.args;
  } else if (n == "requires") {
    std::string_view v = c.args;
    if (!v.empty() && v[0] == 'v') v.remove_prefix(1);
    if (!is_semver(v))
      return at(c.line, c.column, "requires must be a valid semver (e.g. 0.14.0), found \"" + c.args + "\"");
    mf.requires_version = std::string(v);
  } else if (n == "message") {
    const size_t colon = c.args.find(": ");
    mf.messages.push_back(
        {c.args.substr(0, colon), colon == std::string::npos ? "" : c.args.substr(colon + 2)});
  } else if (is_deprecated_param(n)) {
    mf.warnings.push_back("parameter " + n + " is deprecated");
  } else if (Status s = mf.params.set(n, c.args); !s) {
    return at(c.line, c.column, s.message());
  }
  return Status::ok();
}

}  // namespace

std::string quote_modelfile_value(std::string_view s) {
  // '\r' also ends a line for the parser, so it needs quotes too (Ollama checks '\n' only).
  if (s.find_first_of("\r\n") != std::string_view::npos ||
      (!s.empty() && (s.front() == ' ' || s.back() == ' '))) {
    const std::string_view q = s.find('"') != std::string_view::npos ? "\"\"\"" : "\"";
    std::string out(q);
    out.append(s);
    out.append(q);
    return out;
  }
  return std::string(s);
}

std::string Modelfile::to_string() const {
  std::string out;
  for (const auto& c : commands) {
    if (c.name == "model") {
      out += "FROM " +
             quote_modelfile_value(c.args);  // Ollama leaves FROM bare; a path with a newline would split
    } else if (is_command(c.name) && c.name != "parameter" && c.name != "message") {
      std::string upper = c.name;
      for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      out += upper + " " + quote_modelfile_value(c.args);
    } else if (c.name == "message") {
      const size_t colon = c.args.find(": ");
      out += "MESSAGE " + c.args.substr(0, colon) + " " +
             quote_modelfile_value(colon == std::string::npos ? "" : c.args.substr(colon + 2));
    } else {
      out += "PARAMETER " + c.name + " " + quote_modelfile_value(c.args);
    }
    out += '\n';
  }
  return out;
}

Result<Modelfile> parse_modelfile(std::string_view raw) {
  const std::string text = decode_text(raw);
  Modelfile mf;
  State state = State::kNil;
  std::string buf, role;
  ModelfileCommand cmd;
  int line = 1, col = 0;
  int value_line = 0, value_col = 0;  // where the current value starts (for unterminated quotes)

  const auto emit = [&](std::string value) -> Status {
    cmd.args = role.empty() ? std::move(value) : role + ": " + value;
    role.clear();
    mf.commands.push_back(cmd);
    return apply(mf, mf.commands.back());
  };

  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n' || (c == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n'))) {
      ++line;
      col = 0;
    } else {
      ++col;
    }
    switch (state) {
      case State::kNil:
        if (c == '#') {
          state = State::kComment;
        } else if (!is_space(c) && !is_newline(c)) {
          state = State::kName;
          buf.assign(1, c);
          cmd = ModelfileCommand{"", "", line, col};
          if (!is_alpha(c)) return at(line, col, kInvalidCommand);
        }
        break;
      case State::kComment:
        if (is_newline(c)) state = State::kNil;
        break;
      case State::kName:
        if (is_alpha(c)) {
          buf += c;
        } else if (is_space(c)) {
          const std::string lc = lower(buf);
          if (!is_command(lc)) return at(cmd.line, cmd.column, kInvalidCommand);
          cmd.name = lc == "from" ? "model" : lc;
          state = lc == "parameter" ? State::kParameter : lc == "message" ? State::kMessage : State::kValue;
          buf.clear();
          value_line = line, value_col = col + 1;
        } else if (is_newline(c) && is_command(lower(buf))) {
          return at(cmd.line, cmd.column, lower(buf) + " needs a value");
        } else {
          return at(is_newline(c) ? cmd.line : line, is_newline(c) ? cmd.column : col, kInvalidCommand);
        }
        break;
      case State::kParameter:
        if (is_alpha(c) || is_digit(c) || c == '_') {
          buf += c;
        } else if (is_space(c) && !buf.empty()) {
          // A command name here would be applied as that command and not render back as a PARAMETER.
          if (const std::string lc = lower(buf); is_command(lc) || lc == "model")
            return at(line, col - static_cast<int>(buf.size()),
                      "\"" + buf + "\" is not a parameter; write it as its own command");
          cmd.name = buf;
          buf.clear();
          state = State::kValue;
          value_line = line, value_col = col + 1;
        } else if (!is_space(c)) {
          if (is_newline(c)) return at(cmd.line, cmd.column, "PARAMETER needs a name and a value");
          return at(line, col, "invalid character in parameter name (expected letters, digits or '_')");
        }
        break;
      case State::kMessage:
        if (is_alpha(c)) {
          buf += c;
        } else if (is_space(c) && !buf.empty()) {
          if (buf != "system" && buf != "user" && buf != "assistant")
            return at(
                line, col - static_cast<int>(buf.size()),
                "message role must be one of \"system\", \"user\", or \"assistant\", found \"" + buf + "\"");
          role = buf;
          buf.clear();
          state = State::kValue;
          value_line = line, value_col = col + 1;
        } else if (!is_space(c)) {
          if (is_newline(c)) return at(cmd.line, cmd.column, "MESSAGE needs a role and a message");
          return at(line, col, "message role must be one of \"system\", \"user\", or \"assistant\"");
        }
        break;
      case State::kValue:
        if (is_newline(c)) {
          if (auto v = unquote(trim(buf)); v) {
            PADDOCK_TRY(emit(std::move(*v)));
            buf.clear();
            state = State::kNil;
            break;
          }
          buf += c;
        } else if (is_space(c) || static_cast<unsigned char>(c) >= 0x20) {
          if (c != 0x7F) buf += c;  // other control characters are dropped, as Ollama does
        }
        break;
    }
  }
  switch (state) {
    case State::kNil:
    case State::kComment: break;
    case State::kValue: {
      auto v = unquote(trim(buf));
      if (!v) return at(value_line, value_col, "unexpected end of file: the quoted value is not closed");
      PADDOCK_TRY(emit(std::move(*v)));
      break;
    }
    case State::kName:
      return at(cmd.line, cmd.column,
                is_command(lower(buf)) ? lower(buf) + " needs a value" : kInvalidCommand);
    case State::kParameter:
      return at(cmd.line, cmd.column, "unexpected end of file: PARAMETER needs a name and a value");
    case State::kMessage:
      return at(cmd.line, cmd.column, "unexpected end of file: MESSAGE needs a role and a message");
  }
  if (mf.from.empty()) return invalid_argument("no FROM line");
  return mf;
}

}  // namespace paddock::store
