#pragma once
// Errors as values: what was being done, on which path or name, and errno.
// Log where it happens, decide where it is handled (see docs/ARCHITECTURE.md).

#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace mcpcell {

/// One failure: `what` is the step ("bind mount", "write uid_map"), `path` the
/// file or name involved (may be empty), `err` an errno (0 when not a syscall
/// failure) and `detail` free text such as how to fix it.
struct Error {
  std::string what;
  std::string path;
  int err = 0;
  std::string detail;

  /// One line for a human: "bind mount /data: Permission denied (EACCES) — detail".
  std::string Message() const;
};

/// Builds an Error from the current errno.
Error ErrnoError(std::string what, std::string path = {});
/// Builds an Error that is not a syscall failure.
Error MakeError(std::string what, std::string path = {}, std::string detail = {});

/// A value or an Error. Small on purpose: C++20 has no std::expected.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}      // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// Result of an operation with no value.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

/// Evaluates `expr` (a Result or Status); returns its Error from the caller if it failed.
#define MCPCELL_TRY(expr)                              \
  do {                                                 \
    auto&& mcpcell_try_r_ = (expr);                    \
    if (!mcpcell_try_r_.ok()) return mcpcell_try_r_.error(); \
  } while (0)

}  // namespace mcpcell
