// The gate's subcommands: `leasehold gate [flags] -- CMD [ARGS...]`, `leasehold gate-probe` and
// `leasehold install DIR`. Parsing is pure (Environment in, options or one Invalid line out);
// the gate itself is src/gate.
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

// `leasehold gate-probe [--ready] [--status-file PATH]`: exit 0 when the gate is live (ready),
// 1 otherwise, 2 for bad arguments. See gate/status.h for what live and ready mean.
int RunGateProbe(const std::vector<std::string>& args, const Environment& env);

// `leasehold install DIR`: copies this binary to DIR/leasehold atomically (a temporary file in
// DIR, then rename) and exits 0; 1 with one line when it cannot.
int RunInstall(const std::vector<std::string>& args);

// Copies `source` to `dir`/`name` through a temporary file and rename, mode 0755.
Status InstallCopy(const std::string& source, const std::string& dir, const std::string& name);

// The directory of /proc/self/exe ("" when unknown).
std::string ExecutableDir();

}  // namespace leasehold::app
