/// \file
/// Status and Expected<T>: the recoverable-error mechanism of the compiler.
///
/// Anything that user input can cause (a malformed model, an unsupported op, a
/// missing file) is reported through these types. Invariant violations are
/// AOTC_CHECK failures instead. Messages start lowercase and name the node,
/// input or file they concern.
#pragma once

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace aotc {

class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    s.failed_ = true;
    return s;
  }
  bool isOk() const { return !failed_; }
  explicit operator bool() const { return isOk(); }
  const std::string &message() const { return message_; }
  /// Returns a copy whose message is prefixed with \p context and ": ".
  Status withContext(const std::string &context) const {
    return failed_ ? error(context + ": " + message_) : *this;
  }

private:
  std::string message_;
  bool failed_ = false;
};

/// Builds an error Status from streamable parts: makeError("node '", n, "'").
template <typename... Args> Status makeError(Args &&...args) {
  std::ostringstream os;
  (os << ... << args);
  return Status::error(os.str());
}

template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(Status status) : status_(std::move(status)) {
    assert(!status_.isOk() && "Expected constructed from an ok Status");
  }
  bool isOk() const { return value_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const Status &status() const { return status_; }
  T &operator*() { return *value_; }
  const T &operator*() const { return *value_; }
  T *operator->() { return &*value_; }
  const T *operator->() const { return &*value_; }
  T take() { return std::move(*value_); }

private:
  std::optional<T> value_;
  Status status_;
};

[[noreturn]] inline void checkFailed(const char *file, int line,
                                     const char *cond, const std::string &msg) {
  std::fprintf(stderr, "aotc internal error: %s:%d: check '%s' failed: %s\n",
               file, line, cond, msg.c_str());
  std::abort();
}

} // namespace aotc

#define AOTC_CONCAT_INNER(a, b) a##b
#define AOTC_CONCAT(a, b) AOTC_CONCAT_INNER(a, b)

#define AOTC_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::aotc::Status aotcStatus_ = (expr);                                       \
    if (!aotcStatus_.isOk())                                                   \
      return aotcStatus_;                                                      \
  } while (0)

#define AOTC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                             \
  auto tmp = (expr);                                                           \
  if (!tmp.isOk())                                                             \
    return tmp.status();                                                       \
  lhs = tmp.take()

/// AOTC_ASSIGN_OR_RETURN(auto x, computeX()); returns the error if any.
#define AOTC_ASSIGN_OR_RETURN(lhs, expr)                                       \
  AOTC_ASSIGN_OR_RETURN_IMPL(AOTC_CONCAT(aotcExpected_, __LINE__), lhs, expr)

/// Invariant check: aborts with a message. Never for user-caused errors.
#define AOTC_CHECK(cond, msg)                                                  \
  do {                                                                         \
    if (!(cond)) {                                                             \
      std::ostringstream aotcOs_;                                              \
      aotcOs_ << msg;                                                          \
      ::aotc::checkFailed(__FILE__, __LINE__, #cond, aotcOs_.str());           \
    }                                                                          \
  } while (0)
