// Errors are values: everything the environment can break returns a Status or a Result<T>.
// Callers branch on Code, never on the message, which is kept for logs only.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>

namespace leasehold {

// The closed set of failure codes; each has one meaning. Kubernetes Status reasons map onto the
// API codes one to one; transport failures (refused connection, 5xx, TLS) are Unavailable,
// timeouts DeadlineExceeded. The four codes after kConflict are not interchangeable: /readyz
// states which one it saw (localapi/handler.cpp), so a producer picks by what broke, not by
// what is convenient.
enum class Code {
  kOk,
  kNotFound,
  kAlreadyExists,
  kConflict,
  // The API server answered 422 Invalid: it understood the request and rejected the object
  // (e.g. a Lease with leaseDurationSeconds 0). Only kube/status_error.cpp produces it.
  kInvalid,
  // Our own configuration is unusable: a flag, an environment variable, the kubeconfig, a token
  // or CA file, or an option a component was constructed with. Fixing it needs the operator.
  kBadConfig,
  // Data we received or read cannot be parsed: an API answer body (e.g. a proxy answering 200
  // with HTML), a watch event, a lock record, the sidecar's answer, a gate status file.
  kMalformed,
  // A call broke its precondition (Update before Get, Start after Start): a bug of ours, never
  // caused by the input.
  kFailedPrecondition,
  kBadRequest,
  kUnauthorized,
  kForbidden,
  kGone,
  kTooManyRequests,
  kUnavailable,
  kDeadlineExceeded,
};

const char* CodeName(Code code);

// [[nodiscard]]: a dropped error does not compile (-Werror). Where dropping one is deliberate,
// the call site says why and casts to (void).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // Set only for TooManyRequests/Unavailable answers that carried a Retry-After header.
  std::optional<std::chrono::seconds> retry_after() const { return retry_after_; }
  Status& set_retry_after(std::chrono::seconds s) {
    retry_after_ = s;
    return *this;
  }

  // "Conflict: message" — for logs.
  std::string ToString() const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::optional<std::chrono::seconds> retry_after_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return status_.ok(); }
  const Status& status() const { return status_; }
  Code code() const { return status_.code(); }

  const T& value() const& { return *value_; }
  T& value() & { return *value_; }
  T&& value() && { return std::move(*value_); }
  const T* operator->() const { return &*value_; }
  T* operator->() { return &*value_; }
  const T& operator*() const { return *value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

}  // namespace leasehold
