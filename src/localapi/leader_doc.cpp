#include "localapi/leader_doc.h"

#include <chrono>
#include <string>

#include "localapi/handler.h"

namespace leasehold::localapi {

std::string NotObservedReason(const election::Snapshot& s) {
  std::string r = "the lock has not been read yet";
  if (!s.last_error.ok()) r += " (last error: " + s.last_error.ToString() + ")";
  return r;
}

contract::LeaderDoc LeaderDocOf(const election::Snapshot& s, const Clock& clock,
                                const HandlerOptions* options) {
  const std::string& holder = s.record.holder_identity;
  contract::LeaderDoc d;
  d.name = holder;
  // null for a record this replica cannot read: the lock is held, by someone unknown.
  if (!s.opaque) d.leader = holder;
  d.identity = s.identity;
  // Judged now, at the answer, not when the snapshot was taken: a publication rendered after a
  // stalled sink, or an answer rendered late, says "no" once the claim ran out (publisher.h, (b)).
  const MonoTime now = clock.MonotonicNow();
  d.is_leader = s.LeaderAt(now);
  d.term = s.record.leader_transitions;
  d.term_reliable = s.term_reliable();
  d.term_reason = s.term_unreliable_reason;
  d.lock = {std::string(election::LockTypeName(s.lock.type)), s.lock.name_space, s.lock.name};
  d.acquire_time = s.record.acquire_time;
  d.renew_time = s.record.renew_time;
  d.lease_duration_seconds = s.record.lease_duration_seconds;
  if (d.is_leader) {
    // Rounded down, so a caller adding validForMs to its own clock never overshoots.
    const Duration left = s.valid_until - now;
    d.valid_for_ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
    d.valid_until = ToSystem(clock, s.valid_until);
  }
  if (options && options->timings) {
    d.timings = *options->timings;
  }
  if (!s.observed) {
    d.reason = NotObservedReason(s);
  } else if (s.opaque) {
    d.reason = "the lock holds a record this replica cannot read (" + s.unreadable +
               "); it counts as held until it has not changed for the lease duration";
  }
  return d;
}

std::string LeaderLine(const election::Snapshot& s, const Clock& clock) {
  return contract::EncodeLeader(LeaderDocOf(s, clock));
}

}  // namespace leasehold::localapi
