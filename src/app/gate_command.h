// `leasehold gate [flags] -- CMD [ARGS...]` (its exec probe is app/gate_probe.h, the copy into an
// image app/install.h). Parsing is pure (Environment in, options or one BadConfig line out); the
// gate itself is src/gate.
//
// Every flag can also be set with LEASEHOLD_GATE_<FLAG> (the flag wins; empty counts as unset):
//   --address ADDR        the sidecar's --http-address; default $LEASEHOLD_GATE_ADDRESS, else
//                         $LEASEHOLD_HTTP_ADDRESS, else localhost:4040 (asked on 127.0.0.1)
//   --stop-signal SIG     sent first when CMD must stop; default SIGTERM
//   --stop-grace D        from the stop signal to SIGKILL; default 3s (fits the sidecar's
//                         default timings: (10s - 2s) / 2 - 250ms = 3.75s at most)
//   --poll-interval D     GET /leader when the stream is unavailable; default 500ms
//   --status-file PATH    for gate-probe; default gate-status.json beside the binary (the
//                         emptyDir the init container copied it into); "off" for none
//   --log-format, --log-level   as the agent's
#pragma once

#include <string>
#include <vector>

#include "app/flags.h"
#include "base/status.h"
#include "gate/gate.h"

namespace leasehold::app {

struct GateCommand {
  std::string output;  // set: print it and exit 0 (--help)
  gate::GateOptions options;
  LogFormat log_format = LogFormat::kText;
  LogLevel log_level = LogLevel::kInfo;
};

// `args` follow "gate". `exe_dir` is where the binary lives (the default status file's
// directory).
Result<GateCommand> ParseGateCommand(const std::vector<std::string>& args, const Environment& env,
                                     const std::string& exe_dir);
int RunGateCommand(const std::vector<std::string>& args, const Environment& env);

}  // namespace leasehold::app
