#include "store/digest.h"

namespace paddock::store {
namespace {

constexpr std::string_view kPrefix = "sha256";
constexpr size_t kHexLen = 64;

bool is_lower_hex(std::string_view s) {
  if (s.size() != kHexLen) return false;
  for (const char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

// Error messages show at most this much of the input (it may be huge or binary).
std::string shown(std::string_view s) {
  std::string out;
  for (const char c : s.substr(0, 80)) out += (c >= 0x20 && c < 0x7F) ? c : '?';
  return s.size() > 80 ? out + "..." : out;
}

}  // namespace

bool Digest::is_valid(std::string_view s) {
  return s.size() == kPrefix.size() + 1 + kHexLen && s.substr(0, kPrefix.size()) == kPrefix &&
         (s[kPrefix.size()] == ':' || s[kPrefix.size()] == '-') && is_lower_hex(s.substr(kPrefix.size() + 1));
}

Result<Digest> Digest::parse(std::string_view s) {
  if (!is_valid(s))
    return invalid_argument(
        "invalid digest format: expected sha256:<64 lowercase hex> or sha256-<64 lowercase hex>, found \"" +
        shown(s) + "\"");
  return Digest(std::string(s.substr(kPrefix.size() + 1)));
}

Result<Digest> Digest::from_hex(std::string_view hex) {
  if (!is_lower_hex(hex)) return invalid_argument("invalid sha256 hex digest \"" + shown(hex) + "\"");
  return Digest(std::string(hex));
}

}  // namespace paddock::store
