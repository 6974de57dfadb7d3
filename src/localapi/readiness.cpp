#include "localapi/readiness.h"

#include "base/messages.h"

namespace leasehold::localapi {

// Why a replica that has read the lock is not ready, by the last attempt's code: one
// text per code, so /readyz states which of them it saw. No default: a new code must be given a
// reason here (-Wswitch, -Werror). nullptr for the codes that keep the replica ready: ReadyFor
// is derived from this table, so readiness and its stated reason cannot disagree.
const char* RefusalReason(Code code) {
  switch (code) {
    case Code::kUnauthorized:
      return kCredentialsRefused;
    case Code::kForbidden:
      return kLockRbacRefused;
    case Code::kInvalid:
    case Code::kBadRequest:
      return "the API server rejects the lock record";
    case Code::kBadConfig:
      return "this agent's configuration is unusable";
    case Code::kMalformed:
      return "the answer to the lock request cannot be read (not the API server's JSON: a proxy "
             "in the way?)";
    case Code::kFailedPrecondition:
      return "internal error: a precondition was broken (a bug: please report it)";
    case Code::kOk:
    case Code::kNotFound:
    case Code::kAlreadyExists:
    case Code::kConflict:
    case Code::kGone:
    case Code::kTooManyRequests:
    case Code::kUnavailable:
    case Code::kDeadlineExceeded:
      return nullptr;
  }
  return nullptr;
}

bool ReadyFor(bool observed, Code last_error) {
  return observed && RefusalReason(last_error) == nullptr;
}

}  // namespace leasehold::localapi
