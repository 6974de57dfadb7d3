// client-go's MultiLock (v0.17-v0.27): `configmapsleases` and `endpointsleases` hold an annotation
// lock (primary) and a Lease (secondary) together, so replicas still on the old lock and replicas
// on the Lease agree on one leader while a Deployment migrates.
#pragma once

#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "election/lock.h"
#include "locks/lease_lock.h"

namespace leasehold::locks {

// How Update writes the secondary (the Lease).
enum class SecondaryWrite {
  // client-go exactly: GET the Lease, then PUT it (POST when missing). That PUT is conditional
  // only on the version it just fetched, not on the one the elector decided from; safe among
  // peers that all use this multilock, since the conditional primary write serialises them.
  kRefetch,
  // No GET: PUT the Lease version cached by the last Get/Create/Update (POST when the last Get
  // found no Lease), so a Lease written by anyone since the decision fails the Update with
  // Conflict. For `auto`, whose replicas may run Lease-only and multilock side by side; the
  // requests are a subset of client-go's and the objects written are the same.
  kFenced,
};

class MultiLock final : public election::Lock {
 public:
  // `type` is what Describe() reports ("configmapsleases" or "endpointsleases"). `identity` is
  // this replica's: a missing Lease next to a primary held by someone else means an old client
  // holds the lock.
  MultiLock(std::string type, std::unique_ptr<election::Lock> primary,
            std::unique_ptr<LeaseLock> secondary, std::string identity, SecondaryWrite write);

  // Primary (any error is returned), then secondary: a NotFound secondary with a primary held by
  // someone else returns the primary; differing holders read as election::kUnknownLeader; raw is
  // primary raw + "," + secondary raw.
  Result<election::LockObservation> Get(MonoTime deadline) override;
  // Primary (AlreadyExists ignored), then secondary.
  Status Create(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  // Primary, then the secondary as SecondaryWrite says.
  Status Update(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  election::LockDescription Describe() const override;

  // The rest of Get, for a caller that has already read the primary (AutoLock's ConfigMap check).
  Result<election::LockObservation> GetAfterPrimary(Result<election::LockObservation> primary,
                                                    MonoTime deadline);

  election::Lock& primary() { return *primary_; }
  LeaseLock& secondary() { return *secondary_; }

 private:
  const std::string type_;
  std::unique_ptr<election::Lock> primary_;
  std::unique_ptr<LeaseLock> secondary_;
  const std::string identity_;
  const SecondaryWrite write_;
};

}  // namespace leasehold::locks
