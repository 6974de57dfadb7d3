// The one place an election snapshot becomes the /leader contract (contract/leader.h), for its
// three readers: GET /leader (handler.cpp), the watch stream's events (watch_hub.cpp) and the
// status file (status_file.cpp).
#pragma once

#include <string>

#include "base/clock.h"
#include "contract/leader.h"
#include "election/elector.h"

namespace leasehold::localapi {

struct HandlerOptions;

// The /leader document for `s`, judged and counted at `clock`'s now: isLeader only while
// s.LeaderAt(now), validForMs from now; "timings" only when `options` is given and has them
// (GET /leader alone).
contract::LeaderDoc LeaderDocOf(const election::Snapshot& s, const Clock& clock,
                                const HandlerOptions* options = nullptr);

// LeaderDocOf(s, clock) as one line of JSON, without the trailing newline: the data of a watch
// event and the status file's content, rendered by each when it writes.
std::string LeaderLine(const election::Snapshot& s, const Clock& clock);

// Why `s` cannot answer yet, before the lock was read once: the "reason" of /leader and /readyz.
std::string NotObservedReason(const election::Snapshot& s);

}  // namespace leasehold::localapi
