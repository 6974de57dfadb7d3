#include "locks/multi_lock.h"

#include <utility>

namespace leasehold::locks {

using election::LeaderElectionRecord;
using election::LockObservation;

MultiLock::MultiLock(election::LockType type, std::unique_ptr<election::Lock> primary,
                     std::unique_ptr<LeaseLock> secondary)
    : type_(type), primary_(std::move(primary)), secondary_(std::move(secondary)) {}

Result<LockObservation> MultiLock::Get(MonoTime deadline) {
  return GetAfterPrimary(primary_->Get(deadline), deadline);
}

Result<LockObservation> MultiLock::GetAfterPrimary(Result<LockObservation> primary,
                                                   MonoTime deadline) {
  // A NotFound primary is returned as is, so the elector Creates both objects.
  if (!primary.ok()) return primary.status();
  auto secondary = secondary_->Get(deadline);
  if (!secondary.ok()) {
    // A missing Lease: the primary's record decides, whoever holds it. Held by an old client
    // (which knows nothing of the Lease), the elector waits it out and takes over by Update;
    // held by this replica (a Create whose Lease POST failed, or a restart under the same
    // identity), it renews by Update. Either way the primary is PUT with the version read and
    // the Lease POSTed (Update below). client-go returns NotFound for the second case and POSTs
    // the primary again, ignoring AlreadyExists: unconditional, so an old client that took the
    // ConfigMap meanwhile would lead beside us, and the term restarts at 0.
    if (secondary.code() == Code::kNotFound) return primary;
    return secondary.status();
  }
  LockObservation out = std::move(primary).value();
  if (out.record.holder_identity != secondary->record.holder_identity) {
    out.record.holder_identity = election::kUnknownLeader;
  }
  out.raw += ",";
  out.raw += secondary->raw;
  return out;
}

Status MultiLock::Create(const LeaderElectionRecord& record, MonoTime deadline) {
  // Only after a Get found no primary; AlreadyExists means someone created it since.
  Status s = primary_->Create(record, deadline);
  if (!s.ok()) return s;
  return secondary_->Create(record, deadline);
}

Status MultiLock::Update(const LeaderElectionRecord& record, MonoTime deadline) {
  Status s = primary_->Update(record, deadline);
  if (!s.ok()) return s;
  return secondary_->has_cached_object() ? secondary_->Update(record, deadline)
                                         : secondary_->Create(record, deadline);
}

election::LockDescription MultiLock::Describe() const {
  election::LockDescription d = secondary_->Describe();
  d.type = type_;
  return d;
}

}  // namespace leasehold::locks
