// Status and Result<T>: how every error a user, file, network or device can cause travels.
// A message says what was expected and what was found. Code never throws across module
// boundaries; broken invariants use PADDOCK_CHECK (check.h) instead.
//   Result<File> f = File::open(path); if (!f) return f.status();
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace paddock {

enum class Code {
  kOk = 0,
  kInvalidArgument,  // the caller's input is wrong (HTTP 400)
  kNotFound,         // HTTP 404
  kAlreadyExists,
  kCorrupt,      // a file or stream is malformed
  kUnsupported,  // valid, but paddock does not do it (yet)
  kOutOfRange,   // e.g. context full
  kResourceExhausted,
  kIo,
  kCancelled,
  kUnavailable,  // retryable (network, busy)
  kInternal,
};

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }

  bool is_ok() const { return code_ == Code::kOk; }
  explicit operator bool() const { return is_ok(); }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // "message" prefixed with context, e.g. the file name: status.with_context(path).
  Status with_context(const std::string& context) const;
  std::string to_string() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

Status error(Code code, std::string message);
inline Status invalid_argument(std::string m) { return Status(Code::kInvalidArgument, std::move(m)); }
inline Status not_found(std::string m) { return Status(Code::kNotFound, std::move(m)); }
inline Status corrupt(std::string m) { return Status(Code::kCorrupt, std::move(m)); }
inline Status unsupported(std::string m) { return Status(Code::kUnsupported, std::move(m)); }
inline Status io_error(std::string m) { return Status(Code::kIo, std::move(m)); }
inline Status internal_error(std::string m) { return Status(Code::kInternal, std::move(m)); }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<1>(v_);
  }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &std::get<0>(v_); }
  const T* operator->() const { return &std::get<0>(v_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace paddock

// Early-return helpers: PADDOCK_TRY(status_expr); PADDOCK_ASSIGN(auto x, result_expr);
#define PADDOCK_CONCAT_INNER(a, b) a##b
#define PADDOCK_CONCAT(a, b) PADDOCK_CONCAT_INNER(a, b)
#define PADDOCK_TRY(expr)           \
  do {                              \
    ::paddock::Status _st = (expr); \
    if (!_st.is_ok()) return _st;   \
  } while (0)
#define PADDOCK_ASSIGN_IMPL(tmp, decl, expr) \
  auto tmp = (expr);                         \
  if (!tmp.ok()) return tmp.status();        \
  decl = std::move(tmp).value()
#define PADDOCK_ASSIGN(decl, expr) PADDOCK_ASSIGN_IMPL(PADDOCK_CONCAT(_res_, __LINE__), decl, expr)
