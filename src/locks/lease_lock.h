// The `leases` lock: a coordination.k8s.io/v1 Lease, as client-go's LeaseLock reads and writes it.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "election/lock.h"
#include "kube/api_client.h"
#include "kube/object_ref.h"

namespace leasehold::locks {

namespace internal {
struct CachedObject;
}

class LeaseLock final : public election::Lock {
 public:
  // Keeps a reference to `client`, which must outlive the lock.
  LeaseLock(kube::ApiClient& client, std::string name_space, std::string name);
  ~LeaseLock() override;

  // GET; caches the whole object. A NotFound also drops the cache, so has_cached_object() then
  // says the Lease is known to be missing.
  Result<election::LockObservation> Get(MonoTime deadline) override;
  // POSTs {apiVersion, kind, metadata: {name, namespace}, spec}; caches the server's answer.
  Status Create(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  // PUTs the cached object with `spec` replaced; caches the server's answer on success and keeps
  // the old cache on error. kFailedPrecondition when nothing is cached.
  Status Update(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  election::LockDescription Describe() const override;

  bool has_cached_object() const { return cached_ != nullptr; }

 private:
  kube::ApiClient& client_;
  const std::string ns_;
  const std::string name_;
  const kube::ObjectRef ref_;
  std::unique_ptr<internal::CachedObject> cached_;
};

}  // namespace leasehold::locks
