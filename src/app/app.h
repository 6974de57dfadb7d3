// The leasehold binary's entry point: flags → cluster config → lock → elector + local API.
#pragma once

namespace leasehold::app {

// Exit codes: 0 after a clean stop (SIGTERM/SIGINT, lock released as --release-on-shutdown
// says) or after --help/--version; 1 when the agent cannot run (e.g. the HTTP port is taken)
// or on a second SIGTERM/SIGINT while stopping; 2 for any invalid flag, environment variable
// or API configuration, with one line on stderr naming what is wrong.
int Main(int argc, char** argv);

}  // namespace leasehold::app
