// Every command's settings, each declared in its own file (the agent's in flags.cpp, `gate`'s in
// gate_command.cpp, `gate-probe`'s in gate_probe.cpp, `probe`'s in probe.cpp), as the docs and
// the unknown-variable check see them.
#pragma once

#include <vector>

#include "app/options.h"

namespace leasehold::app {

std::vector<SettingDoc> AgentSettings();
std::vector<SettingDoc> GateSettings();
std::vector<SettingDoc> GateProbeSettings();
std::vector<SettingDoc> ProbeSettings();

// All of the above: a variable one command reads is no stranger to another (the sidecar's
// LEASEHOLD_HTTP_ADDRESS is also `probe`'s and `gate`'s).
std::vector<SettingDoc> AllSettings();

}  // namespace leasehold::app
