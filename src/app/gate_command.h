// `leasehold gate [flags] -- CMD [ARGS...]` (its exec probe is app/gate_probe.h, the copy into an
// image app/install.h). Parsing is pure (Environment in, options or one BadConfig line out); the
// gate itself is src/gate.
//
// Every flag can also be set with LEASEHOLD_GATE_<FLAG> (the flag wins; empty counts as unset);
// the flags, their defaults and help are gate_command.cpp's option table (app/options.h).
// --stop-grace's default, 3s, fits the sidecar's default timings: (10s - 2s) / 2 - 250ms = 3.75s
// at most.
#pragma once

#include <string>
#include <vector>

#include "app/flags.h"  // LogSettings
#include "base/status.h"
#include "gate/gate.h"

namespace leasehold::app {

struct GateCommand {
  std::string output;  // set: print it and exit 0 (--help)
  // Logged as warnings once logging is set up: LEASEHOLD_* variables that are near misses of a
  // setting's (UnknownVariableWarnings).
  std::vector<std::string> warnings;
  gate::GateOptions options;
  LogSettings log;
};

// `args` follow "gate". `exe_dir` is where the binary lives (the default status file's
// directory).
Result<GateCommand> ParseGateCommand(const std::vector<std::string>& args, const Environment& env,
                                     const std::string& exe_dir);
// `leasehold gate --help`.
std::string GateHelp();
int RunGateCommand(const std::vector<std::string>& args, const Environment& env);

}  // namespace leasehold::app
