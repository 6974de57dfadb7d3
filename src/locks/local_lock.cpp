#include "locks/local_lock.h"

namespace leasehold::locks {

Result<election::LockObservation> LocalLock::Get(MonoTime) {
  std::lock_guard<std::mutex> l(mu_);
  if (!exists_) return Status(Code::kNotFound, "local lock not created yet");
  return election::LockObservation{record_, "local/" + std::to_string(version_)};
}

Status LocalLock::Create(const election::LeaderElectionRecord& record, MonoTime) {
  std::lock_guard<std::mutex> l(mu_);
  if (exists_) return Status(Code::kAlreadyExists, "local lock exists");
  exists_ = true;
  record_ = record;
  ++version_;
  return Status::Ok();
}

Status LocalLock::Update(const election::LeaderElectionRecord& record, MonoTime) {
  std::lock_guard<std::mutex> l(mu_);
  if (!exists_) return Status(Code::kFailedPrecondition, "local lock not created yet");
  record_ = record;
  ++version_;
  return Status::Ok();
}

}  // namespace leasehold::locks
