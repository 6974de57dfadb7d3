// `leasehold gate-probe`: the exec probe of a container run by `leasehold gate`, judging the
// gate's status file (gate/status.h says what live and ready mean).
#pragma once

#include <string>
#include <vector>

#include "app/options.h"

namespace leasehold::app {

// `leasehold gate-probe [--ready] [--status-file PATH]`: exit 0 when the gate is live (ready),
// 1 otherwise, 2 for bad arguments.
int RunGateProbe(const std::vector<std::string>& args, const Environment& env);

}  // namespace leasehold::app
