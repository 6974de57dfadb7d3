#include "locks/multi_lock.h"

#include <utility>

namespace leasehold::locks {

using election::LeaderElectionRecord;
using election::LockObservation;

MultiLock::MultiLock(std::string type, std::unique_ptr<election::Lock> primary,
                     std::unique_ptr<LeaseLock> secondary, std::string identity)
    : type_(std::move(type)),
      primary_(std::move(primary)),
      secondary_(std::move(secondary)),
      identity_(std::move(identity)) {}

Result<LockObservation> MultiLock::Get(MonoTime deadline) {
  return GetAfterPrimary(primary_->Get(deadline), deadline);
}

Result<LockObservation> MultiLock::GetAfterPrimary(Result<LockObservation> primary,
                                                   MonoTime deadline) {
  // A NotFound primary is returned as is, so the elector Creates both objects.
  primary_found_ = primary.ok();
  if (!primary.ok()) return primary.status();
  auto secondary = secondary_->Get(deadline);
  if (!secondary.ok()) {
    // Only an old client, which knows nothing of the Lease, can hold a lock whose Lease is
    // missing. When the holder is this replica, NotFound makes the elector Create the Lease.
    if (secondary.code() == Code::kNotFound && primary->record.holder_identity != identity_) {
      return primary;
    }
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
  Status s = primary_->Create(record, deadline);
  if (!s.ok() && !(s.code() == Code::kAlreadyExists && primary_found_)) return s;
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
