// `leasehold gate-probe`: the exec probe of a container run by `leasehold gate`, judging the
// gate's status file (gate/status.h says what live and ready mean).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/options.h"
#include "base/status.h"

namespace leasehold::app {

struct GateProbeCommand {
  std::string output;  // set: print it to stdout and exit 0 (--help)
  bool ready = false;  // --ready
  // --status-file; nullopt: the gate's default, gate::kStatusFileName beside this binary.
  std::optional<std::string> status_file;
};

// `args` follow "gate-probe". Errors (kBadConfig) are one line naming the flag.
Result<GateProbeCommand> ParseGateProbeCommand(const std::vector<std::string>& args,
                                               const Environment& env);

// `leasehold gate-probe [--ready] [--status-file PATH]`: exit 0 when the gate is live (ready),
// 1 otherwise, 2 for bad arguments.
int RunGateProbe(const std::vector<std::string>& args, const Environment& env);

}  // namespace leasehold::app
