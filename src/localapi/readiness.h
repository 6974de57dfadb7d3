// The readiness rule, in one home: what GET /readyz (handler.cpp) and the leasehold_ready gauge
// (metrics.cpp) say, from whether the lock was read and the last attempt's code.
#pragma once

#include "base/status.h"

namespace leasehold::localapi {

// What GET /readyz and leasehold_ready say: ready once the lock was read, unless the last
// attempt was refused (401, 403: credentials or RBAC), its record rejected (400, 422), our
// configuration unusable, the answer unreadable (kMalformed) or a precondition broken.
bool ReadyFor(bool observed, Code last_error);
// The one-line reason /readyz states for a code that makes a replica not ready; nullptr for the
// codes that keep it ready (outages, conflicts: the elector retries them).
const char* RefusalReason(Code code);

}  // namespace leasehold::localapi
