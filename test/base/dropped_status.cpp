// Compiled by the tests base_nodiscard_control (must compile) and base_nodiscard_dropped (must
// NOT compile, -Werror): Status and Result are [[nodiscard]], so a dropped error fails the build.
// The control compiles the same file without the drop, so the expected failure cannot come from
// anything else (a missing include, a typo).
#include "base/status.h"

namespace {
leasehold::Status Fails() { return leasehold::Status(leasehold::Code::kUnavailable, "x"); }
leasehold::Result<int> FailsToo() { return Fails(); }
}  // namespace

int main() {
#ifdef LEASEHOLD_DROP_STATUS
  Fails();
#elif defined(LEASEHOLD_DROP_RESULT)
  FailsToo();
#else
  return Fails().ok() || FailsToo().ok() ? 1 : 0;
#endif
}
