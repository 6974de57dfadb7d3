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

// Where this differs from client-go, it writes less and only ever fails where client-go would
// overwrite (safety over matching the request sequence; the objects written are the same):
//  - Update PUTs the Lease with the version cached by the last Get/Create/Update (POST when the
//    last Get found none). client-go re-GETs the Lease first and PUTs what it fetched, so it
//    overwrites a Lease that a Lease-only replica took after the elector's decision; here that
//    write fails with Conflict. This is what makes multilock and `leases` replicas safe side by
//    side during a migration.
//  - A missing Lease never makes Get return NotFound while the primary exists: the primary's
//    record decides, and the writes are Update's (conditional PUT of the primary, POST of the
//    Lease). Create runs only when the primary is missing and fails on its AlreadyExists.
//    client-go returns NotFound when this replica holds the primary, then POSTs the primary
//    again ignoring AlreadyExists: an old client that took the ConfigMap meanwhile would lead
//    beside us, and the term (leaderTransitions) restarts at 0.
class MultiLock final : public election::Lock {
 public:
  // `type` is what Describe() reports (kConfigMapsLeases or kEndpointsLeases).
  MultiLock(election::LockType type, std::unique_ptr<election::Lock> primary,
            std::unique_ptr<LeaseLock> secondary);

  // Primary (any error is returned), then secondary: a NotFound secondary returns the primary's
  // observation; differing holders read as election::kUnknownLeader; raw is primary raw + "," +
  // secondary raw.
  Result<election::LockObservation> Get(MonoTime deadline) override;
  // Primary (any error, AlreadyExists included, is returned), then secondary.
  Status Create(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  // Primary, then the secondary with its cached version (POST if the last Get found none).
  Status Update(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  election::LockDescription Describe() const override;

  // The rest of Get, for a caller that has already read the primary (AutoLock's ConfigMap check).
  Result<election::LockObservation> GetAfterPrimary(Result<election::LockObservation> primary,
                                                    MonoTime deadline);

  election::Lock& primary() { return *primary_; }
  LeaseLock& secondary() { return *secondary_; }

 private:
  const election::LockType type_;
  std::unique_ptr<election::Lock> primary_;
  std::unique_ptr<LeaseLock> secondary_;
};

}  // namespace leasehold::locks
