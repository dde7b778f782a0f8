#include "store/name.h"

#include <cctype>

namespace paddock::store {
namespace {

// Longest input considered: a full name with a digest is far below this; anything longer
// is refused before any work (also bounds fuzzing time).
constexpr size_t kMaxNameLen = 8 + 350 + 1 + 80 + 1 + 80 + 1 + 80 + 1 + 71;

bool alnum_or_underscore(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

const char* part_label(NamePart k) {
  switch (k) {
    case NamePart::kHost: return "host";
    case NamePart::kNamespace: return "namespace";
    case NamePart::kModel: return "model";
    case NamePart::kTag: return "tag";
  }
  return "part";
}

std::string printable(std::string_view s) {
  std::string out;
  for (const char c : s.substr(0, 100)) {
    if (c >= 0x20 && c < 0x7F) {
      out += c;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[(static_cast<unsigned char>(c) >> 4) & 0xF];
      out += kHex[static_cast<unsigned char>(c) & 0xF];
    }
  }
  return s.size() > 100 ? out + "..." : out;
}

Status check_part(NamePart kind, std::string_view part, std::string_view whole) {
  if (is_valid_name_part(kind, part)) return Status::ok();
  const size_t max_len = kind == NamePart::kHost ? 350 : 80;
  std::string why;
  if (part.empty()) {
    why = "it is empty";
  } else if (part.size() > max_len) {
    why =
        "it is " + std::to_string(part.size()) + " characters long (at most " + std::to_string(max_len) + ")";
  } else {
    why = "it must start with a letter, digit or '_' and contain only letters, digits, '_', '-'";
    why += kind == NamePart::kNamespace ? "" : ", '.'";
    why += kind == NamePart::kHost ? " or ':'" : "";
  }
  return invalid_argument("invalid model name \"" + printable(whole) + "\": " + part_label(kind) + " \"" +
                          printable(part) + "\" is invalid: " + why);
}

bool equal_fold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

// Cuts at the last `sep`: returns {before, after, found}.
struct Cut {
  std::string_view before, after;
  bool found;
};
Cut cut_last(std::string_view s, char sep) {
  const size_t i = s.rfind(sep);
  if (i == std::string_view::npos) return {s, {}, false};
  return {s.substr(0, i), s.substr(i + 1), true};
}

}  // namespace

bool is_valid_name_part(NamePart kind, std::string_view s) {
  const size_t max_len = kind == NamePart::kHost ? 350 : 80;
  if (s.empty() || s.size() > max_len) return false;
  if (!alnum_or_underscore(s[0])) return false;
  for (size_t i = 1; i < s.size(); ++i) {
    const char c = s[i];
    if (alnum_or_underscore(c) || c == '-') continue;
    if (c == '.' && kind != NamePart::kNamespace) continue;
    if (c == ':' && kind == NamePart::kHost) continue;
    return false;
  }
  return true;
}

Result<Name> Name::parse(std::string_view s) {
  if (s.empty()) return invalid_argument("invalid model name: the name is empty");
  if (s.size() > kMaxNameLen)
    return invalid_argument("invalid model name: " + std::to_string(s.size()) + " characters long (at most " +
                            std::to_string(kMaxNameLen) + ")");
  const std::string_view whole = s;
  Name n;
  // The digest first: '@' appears in no other part.
  if (const Cut d = cut_last(s, '@'); d.found) {
    PADDOCK_ASSIGN(Digest dg, Digest::parse(d.after));
    n.digest_ = std::move(dg);
    s = d.before;
  }
  // scheme:// belongs to the host; strip it before looking for the tag's ':' (a port's ':'
  // comes before the last '/', so it is never taken for a tag).
  std::string_view scheme;
  if (const size_t i = s.find("://"); i != std::string_view::npos) {
    scheme = s.substr(0, i);
    s = s.substr(i + 3);
    if (scheme != "http" && scheme != "https")
      return invalid_argument("invalid model name \"" + printable(whole) + "\": scheme \"" +
                              printable(scheme) + "\" is not http or https");
    if (s.find('/') == std::string_view::npos)
      return invalid_argument("invalid model name \"" + printable(whole) + "\": a scheme needs a host");
  }
  const size_t last_colon = s.rfind(':');
  const size_t last_slash = s.rfind('/');
  if (last_colon != std::string_view::npos &&
      (last_slash == std::string_view::npos || last_colon > last_slash)) {
    const Cut t = cut_last(s, ':');
    PADDOCK_TRY(check_part(NamePart::kTag, t.after, whole));
    n.tag_ = std::string(t.after);
    s = t.before;
  }
  const Cut m = cut_last(s, '/');
  PADDOCK_TRY(check_part(NamePart::kModel, m.found ? m.after : s, whole));
  n.model_ = std::string(m.found ? m.after : s);
  if (m.found) {
    const Cut ns = cut_last(m.before, '/');
    PADDOCK_TRY(check_part(NamePart::kNamespace, ns.found ? ns.after : m.before, whole));
    n.namespace_ = std::string(ns.found ? ns.after : m.before);
    if (ns.found) {
      PADDOCK_TRY(check_part(NamePart::kHost, ns.before, whole));
      n.host_ = std::string(ns.before);
    }
  } else if (!scheme.empty()) {
    return invalid_argument("invalid model name \"" + printable(whole) + "\": a scheme needs a host");
  }
  if (!scheme.empty()) n.scheme_ = std::string(scheme);
  return n;
}

Result<Name> Name::from_manifest_path(std::string_view rel) {
  std::string_view parts[4];
  std::string_view rest = rel;
  for (int i = 0; i < 3; ++i) {
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos)
      return invalid_argument("manifest path \"" + printable(rel) +
                              "\" is not <host>/<namespace>/<model>/<tag>");
    parts[i] = rest.substr(0, slash);
    rest = rest.substr(slash + 1);
  }
  parts[3] = rest;
  constexpr NamePart kinds[4] = {NamePart::kHost, NamePart::kNamespace, NamePart::kModel, NamePart::kTag};
  for (int i = 0; i < 4; ++i) PADDOCK_TRY(check_part(kinds[i], parts[i], rel));
  Name n;
  n.host_ = std::string(parts[0]);
  n.namespace_ = std::string(parts[1]);
  n.model_ = std::string(parts[2]);
  n.tag_ = std::string(parts[3]);
  return n;
}

std::string Name::display_full() const { return host_ + "/" + namespace_ + "/" + model_ + ":" + tag_; }

std::string Name::display_shortest() const {
  std::string out;
  if (!store::equal_fold(host_, kDefaultHost)) {
    out = host_ + "/" + namespace_ + "/";
  } else if (!store::equal_fold(namespace_, kDefaultNamespace)) {
    out = namespace_ + "/";
  }
  return out + model_ + ":" + tag_;
}

std::string Name::manifest_path() const { return host_ + "/" + namespace_ + "/" + model_ + "/" + tag_; }

std::string Name::namespace_model() const { return namespace_ + "/" + model_; }

bool Name::equal_fold(const Name& o) const {
  return store::equal_fold(host_, o.host_) && store::equal_fold(namespace_, o.namespace_) &&
         store::equal_fold(model_, o.model_) && store::equal_fold(tag_, o.tag_);
}

}  // namespace paddock::store
