// What the agent runs: an Elector (--agent-mode elect: contends for the lock) or an Observer
// (--agent-mode observe: reads the lock someone else elects with, never writes it). Both produce
// the same Snapshot and Gauges, so every reader (the local API, the publisher's sinks, the metrics)
// and the lock watcher that feeds them work unchanged in either mode.
#pragma once

#include <functional>

#include "election/lock.h"

namespace leasehold::election {

struct Snapshot;
struct Gauges;

// What a reader of the election does with a "yes" in its snapshot.
enum class Reading {
  kPeek,     // hands it to no one (probes, metrics): Runner::Peek, no promise is recorded
  kPromise,  // may tell someone "you lead": Runner::Take, which remembers the "yes" as a
             // promise that safe-mode shutdown honours
};

// Where a reader of the election gets a snapshot, once per question. Must be thread-safe; in
// production Runner::Source().
using SnapshotSource = std::function<Snapshot(Reading reading)>;

class Runner {
 public:
  virtual ~Runner() = default;
  // Until Stop() has been called (and, for the elector, the release is done).
  virtual void Run() = 0;
  // SIGTERM/SIGINT: stop answering "leader" at once.
  virtual void Stop() = 0;
  // POST /release: the main container's work has stopped.
  virtual void AcknowledgeRelease() = 0;
  // The lock watcher's feed: one version of the record, and whether the watch is established.
  virtual void Observe(const LockObservation& observation) = 0;
  virtual void SetWatchActive(bool active) = 0;
  // Thread-safe. Take() for an answer that tells someone "you lead", Peek() otherwise
  // (elector.h says what the difference is worth).
  virtual Snapshot Take() const = 0;
  virtual Snapshot Peek() const = 0;
  // Take() or Peek(), as each question's Reading says. The runner must outlive it.
  SnapshotSource Source() const;
  // Called (outside the runner's lock) after every change, with a Peek()ed snapshot.
  virtual void SetListener(std::function<void(const Snapshot&)> listener) = 0;
  // For /metrics; lives as long as the runner.
  virtual const Gauges& gauges() const = 0;
};

}  // namespace leasehold::election
