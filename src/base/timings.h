// The election's timings, in the one struct every room that states them shares: the
// elector runs on them (election/config.h checks them), GET /leader and /metrics report them,
// the /leader JSON carries them (contract/leader.h) and the gate checks its --stop-grace against
// them. The defaults are the flags' (--lease-duration, --renew-deadline, --retry-period).
#pragma once

#include <chrono>

#include "base/clock.h"

namespace leasehold {

struct Timings {
  // How long rivals wait, after they last saw the record change, before they may take the lock.
  // Written to the record in whole seconds. Default 15s, as client-go's core clients.
  Duration lease_duration = std::chrono::seconds(15);
  // How long a leader keeps saying "yes" after the last successful write it *sent*; it steps
  // down when no renew succeeds within this. Default 10s.
  Duration renew_deadline = std::chrono::seconds(10);
  // Pause between attempts: retry-period × (1 + rand × election::kJitterFactor) while acquiring;
  // exactly this while leading after a failed renew. Default 2s.
  Duration retry_period = std::chrono::seconds(2);
  // Pause after a successful renew before the next one (--renew-interval). Zero means auto
  // (election::AutoRenewInterval); ElectionConfig::renew_interval() is the one in use. Safety
  // does not depend on it: a "yes" lasts renew-deadline from the last successful write's send,
  // whenever that was. The /leader JSON carries the one in use (contract/leader.h), for the
  // gate's --stop-grace check.
  Duration renew_interval = Duration::zero();

  bool operator==(const Timings& o) const {
    return lease_duration == o.lease_duration && renew_deadline == o.renew_deadline &&
           retry_period == o.retry_period && renew_interval == o.renew_interval;
  }
  bool operator!=(const Timings& o) const { return !(*this == o); }
};

}  // namespace leasehold
