// The leader election record, as client-go's resourcelock.LeaderElectionRecord carries it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/clock.h"

namespace leasehold::election {

struct LeaderElectionRecord {
  // Empty means "released": any candidate may take the lock at once.
  std::string holder_identity;
  // Whole seconds; rivals wait this long after they last saw the record change.
  int lease_duration_seconds = 0;
  // Wall-clock timestamps written to the API; absent when the server had none.
  std::optional<SysTime> acquire_time;
  std::optional<SysTime> renew_time;
  // Grows by one on every change of holder: the fencing token ("term").
  int64_t leader_transitions = 0;
  // False when the record read had no transition count (the Python client's annotation record);
  // the count then reads as 0. Never written; not part of the record's value (operator==).
  bool transitions_recorded = true;
  // Coordinated leader election (KEP-4355, client-go v0.31+; only a Lease carries them): the
  // strategy that picks this lock's holders, and the candidate it would rather see hold it
  // next. Empty when absent. What each write keeps of them is decided in elector.cpp
  // ("Coordinated leader election").
  std::string strategy;
  std::string preferred_holder;

  bool operator==(const LeaderElectionRecord& o) const {
    return holder_identity == o.holder_identity &&
           lease_duration_seconds == o.lease_duration_seconds && acquire_time == o.acquire_time &&
           renew_time == o.renew_time && leader_transitions == o.leader_transitions &&
           strategy == o.strategy && preferred_holder == o.preferred_holder;
  }
};

// client-go's MultiLock reports this holder when its two locks name different holders.
inline constexpr const char* kUnknownLeader = "leaderelection.k8s.io/unknown";

}  // namespace leasehold::election
