#include "base/status.h"

namespace paddock {

Status error(Code code, std::string message) { return Status(code, std::move(message)); }

Status Status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  return Status(code_, context + ": " + message_);
}

std::string Status::to_string() const { return is_ok() ? "ok" : message_; }

}  // namespace paddock
