// `leasehold gate -- CMD`: the I/O shell around GateCore (core.h). One thread, one poll loop
// over a signalfd (SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2), a CLOCK_BOOTTIME
// timerfd armed at the core's next deadline, and the sidecar connection:
//
//   check    GET /leader until it answers (a refused connection or a 503 before the lock was
//            read: wait with backoff, logged once, never exit), to check --stop-grace against
//            the sidecar's "timings"; at start, and again after every lost stream (the sidecar
//            may have restarted alone, with other flags); then
//   stream   GET /leader/watch; every event goes to the core. The stream ending, a refused
//            connection, no answer head within kHeadTimeout or kStreamIdle without a byte (the
//            sidecar pings more often: localapi's WatchHubOptions::heartbeat) is "not leader"
//            now, then a reconnect with backoff (kBackoffMin .. kBackoffMax);
//   poll     when the stream is refused with an HTTP status (503: --max-watchers reached or 0;
//            404), GET /leader every poll-interval, the stream tried again every
//            kRetryStreamAfter. The constants are gate.cpp's.
//
// Never /is-leader (it carries no validity) and never the probe listener (its answers are no
// promise). See core.h for the decisions, process.h for the process tree.
#pragma once

#include <string>
#include <vector>

#include "base/clock.h"
#include "contract/loopback_client.h"
#include "gate/core.h"

namespace leasehold::gate {

struct GateOptions {
  std::vector<std::string> command;  // CMD and its arguments; not empty
  // The sidecar's local API on loopback, every endpoint of its address in order
  // (contract::SidecarTargets); not empty. The gate moves to the next one when one cannot be
  // reached.
  std::vector<contract::Target> sidecars;
  CoreOptions core;
  Duration poll_interval = std::chrono::milliseconds(500);
  // The status file for `leasehold gate-probe`; empty: none.
  std::string status_file;
};

// Runs until shutdown or CMD's own exit; returns the process exit code (CMD's, 128 + n for a
// signal n, 0 after a shutdown while CMD was not running, 2 for a --stop-grace the sidecar's
// timings refuse, at start or when they change). Blocks SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGUSR1
// and SIGUSR2 in the calling thread, which must be the process's only thread.
int RunGate(const GateOptions& options);

}  // namespace leasehold::gate
