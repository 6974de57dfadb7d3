// The evidence that a lock's transition count is not kept by every writer, as the elector and
// the observer read it (Snapshot::term_reliable).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "election/lock.h"
#include "election/record.h"

namespace leasehold::election {

// Why `next` shows that the count is no fencing token, given the record the same source
// delivered before it (`previous`, none after an unreadable one) and the largest count that
// source showed (`max_seen`); "" when nothing does.
std::string TermUnreliableReason(const LockObservation& next,
                                 const std::optional<LeaderElectionRecord>& previous,
                                 int64_t max_seen);

}  // namespace leasehold::election
