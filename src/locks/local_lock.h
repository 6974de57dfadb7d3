// `--lock-type none`: leader election switched off. The record lives in this process only, so
// this replica always leads and never calls the Kubernetes API. Two replicas would both lead; the
// app warns about it at start.
#pragma once

#include <mutex>
#include <string>

#include "election/lock.h"

namespace leasehold::locks {

class LocalLock final : public election::Lock {
 public:
  LocalLock(std::string name_space, std::string name)
      : ns_(std::move(name_space)), name_(std::move(name)) {}

  Result<election::LockObservation> Get(MonoTime deadline) override;
  Status Create(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  Status Update(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  election::LockDescription Describe() const override {
    return {election::LockType::kNone, ns_, name_};
  }

 private:
  const std::string ns_;
  const std::string name_;
  std::mutex mu_;
  bool exists_ = false;
  election::LeaderElectionRecord record_;
  uint64_t version_ = 0;
};

}  // namespace leasehold::locks
