// The `auto` lock type (the default): the Lease where the cluster serves it, the ConfigMap lock
// where it does not, and both (client-go's configmapsleases) while an old ConfigMap lock of the
// same name exists, so replicas that still use it see the same leader during an upgrade.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "election/lock.h"
#include "kube/api_client.h"
#include "locks/multi_lock.h"

namespace leasehold::locks {

class AutoLock final : public election::Lock {
 public:
  // Keeps references to `client` and `clock`, which must outlive the lock. `recheck_every` is
  // how often, at most, Lease-only mode looks again for the ConfigMap (the lease duration).
  AutoLock(kube::ApiClient& client, std::string name_space, std::string name,
           Duration recheck_every, const Clock& clock);

  // Decides first, if not yet decided (see auto_lock.cpp); an error while deciding is returned
  // and the decision retried on the next Get.
  Result<election::LockObservation> Get(MonoTime deadline) override;
  // Forwarded to the lock decided on; kFailedPrecondition before the first successful Get. A
  // Lease-only Update first re-checks for the ConfigMap when due (Conflict if it appeared).
  Status Create(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  Status Update(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  // "auto" until decided, then "leases", "configmapsleases" or "configmaps". Thread-safe.
  election::LockDescription Describe() const override;

 private:
  enum class Effective { kUndecided, kLeasesUnchecked, kConfigMaps, kLeases, kConfigMapsLeases };

  Status Discover(MonoTime deadline);
  Result<election::LockObservation> GetLeases(MonoTime deadline);
  // Whether Lease-only mode is due to look for the ConfigMap again.
  bool RecheckDue(MonoTime now) const;
  // GETs the ConfigMap and switches mode by the answer: the ConfigMap's observation (multilock),
  // NotFound (Lease only), or the error, which leaves the mode and the due re-check as they were.
  Result<election::LockObservation> Recheck(MonoTime deadline);
  election::Lock* Current();
  void Become(Effective e, const std::string& why);

  kube::ApiClient& client_;
  const std::string ns_;
  const std::string name_;
  const Duration recheck_every_;
  const Clock& clock_;
  // Primary: the ConfigMap lock (also the whole lock in configmaps mode); secondary: the Lease
  // (also the whole lock in Lease-only mode). Sharing them keeps one cache per object.
  MultiLock multi_;
  std::atomic<Effective> effective_{Effective::kUndecided};
  // When the last ConfigMap check was sent.
  std::optional<MonoTime> last_check_;
  bool forbidden_logged_ = false;
};

}  // namespace leasehold::locks
