#include "base/status.h"

namespace paddock {

const char* code_name(Code c) {
  switch (c) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid argument";
    case Code::kNotFound: return "not found";
    case Code::kAlreadyExists: return "already exists";
    case Code::kCorrupt: return "corrupt";
    case Code::kUnsupported: return "unsupported";
    case Code::kOutOfRange: return "out of range";
    case Code::kResourceExhausted: return "resource exhausted";
    case Code::kIo: return "i/o error";
    case Code::kCancelled: return "cancelled";
    case Code::kUnavailable: return "unavailable";
    case Code::kInternal: return "internal error";
  }
  return "unknown";
}

Status error(Code code, std::string message) { return Status(code, std::move(message)); }

Status Status::with_context(const std::string& context) const {
  if (is_ok()) return *this;
  return Status(code_, context + ": " + message_);
}

std::string Status::to_string() const { return is_ok() ? "ok" : message_; }

}  // namespace paddock
