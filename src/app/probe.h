// `leasehold probe [--leader] [--address ADDR]`: an exec probe for images without curl.
// GET /readyz (or /is-leader with --leader) on the agent's local API with a 1s timeout; exit 0
// on a 200 answer, else 1 (2 for bad arguments).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "app/options.h"
#include "base/clock.h"
#include "base/status.h"

namespace leasehold::app {

struct ProbeCommand {
  // Set: print it to stdout and exit 0 (--help).
  std::string output;
  std::string path;     // "/readyz" or "/is-leader"
  std::string address;  // as given, for messages
  // Where to ask, in order: the next one only when a connection cannot be made. A wildcard
  // listen address (":4040", "[::]:4040") is asked on loopback.
  std::vector<std::pair<std::string, int>> targets;
};

// `args` follow "probe". --address defaults to $LEASEHOLD_HTTP_ADDRESS (the agent's own
// setting, present in the sidecar's environment), else localhost:4040. kBadConfig messages name
// the flag, like the agent's.
Result<ProbeCommand> ParseProbeCommand(const std::vector<std::string>& args,
                                       const Environment& env);

// Asks once. Returns the HTTP status of the first target that answered, or 0 when none did;
// `detail` gets a one-line account for a failure message.
int ProbeOnce(const ProbeCommand& command, Duration timeout, std::string* detail);

// The whole subcommand: exit code 0, 1 or 2, one line on stderr when it is not 0.
int RunProbe(const std::vector<std::string>& args, const Environment& env);

}  // namespace leasehold::app
