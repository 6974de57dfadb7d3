#include "base/status.h"

namespace leasehold {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kNotFound:
      return "NotFound";
    case Code::kAlreadyExists:
      return "AlreadyExists";
    case Code::kConflict:
      return "Conflict";
    case Code::kInvalid:
      return "Invalid";
    case Code::kBadConfig:
      return "BadConfig";
    case Code::kMalformed:
      return "Malformed";
    case Code::kFailedPrecondition:
      return "FailedPrecondition";
    case Code::kBadRequest:
      return "BadRequest";
    case Code::kUnauthorized:
      return "Unauthorized";
    case Code::kForbidden:
      return "Forbidden";
    case Code::kGone:
      return "Gone";
    case Code::kTooManyRequests:
      return "TooManyRequests";
    case Code::kUnavailable:
      return "Unavailable";
    case Code::kDeadlineExceeded:
      return "DeadlineExceeded";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string s = CodeName(code_);
  if (!message_.empty()) s += ": " + message_;
  return s;
}

}  // namespace leasehold
