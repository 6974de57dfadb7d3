#include "election/term_evidence.h"

#include "base/text.h"

namespace leasehold::election {

std::string TermUnreliableReason(const LockObservation& next,
                                 const std::optional<LeaderElectionRecord>& previous,
                                 int64_t max_seen) {
  const LeaderElectionRecord& r = next.record;
  if (next.opaque) return "an unreadable record was written to the lock";
  if (!r.holder_identity.empty() && !r.transitions_recorded) {
    return "a record without a transition count (holder " + EscapeForLog(r.holder_identity) +
           ") was written to the lock";
  }
  if (r.leader_transitions < max_seen) {
    return "the transition count went back from " + std::to_string(max_seen) + " to " +
           std::to_string(r.leader_transitions);
  }
  if (previous && !r.holder_identity.empty() && !previous->holder_identity.empty() &&
      r.holder_identity != previous->holder_identity &&
      r.leader_transitions <= previous->leader_transitions) {
    return "the holder changed to " + EscapeForLog(r.holder_identity) +
           " without raising the transition count";
  }
  return "";
}

}  // namespace leasehold::election
