// Builds the Lock that --lock-type names.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "base/timings.h"
#include "election/lock.h"
#include "kube/api_client.h"
#include "locks/lock_type.h"

namespace leasehold::locks {

struct LockOptions {
  election::LockType type = election::LockType::kAuto;
  std::string name_space;
  std::string name;
  std::string identity;
  // Used by `auto` to re-check for an old ConfigMap lock at least this often.
  Duration lease_duration = Timings{}.lease_duration;
};

// The lock keeps a reference to `client` and `clock`; both must outlive it. kBadConfig for an
// empty namespace, name or identity. The explicit multilocks behave exactly as
// client-go's; `auto` is described in locks/auto_lock.cpp.
Result<std::unique_ptr<election::Lock>> NewLock(const LockOptions& options, kube::ApiClient& client,
                                                const Clock& clock);

}  // namespace leasehold::locks
