// The one interface the election algorithm depends on, like client-go's resourcelock.Interface.
// Implementations live in src/locks/.
#pragma once

#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "election/record.h"

namespace leasehold::election {

struct LockObservation {
  LeaderElectionRecord record;
  // Bytes that identify this version of the record (client-go's rawRecord). Observers compare
  // these to notice a change; an unchanged raw never refreshes the expiry timer.
  std::string raw;
  // The object holds a record that cannot be read (garbage in the annotation, a field of the
  // wrong type): an opaque holder, written by someone this replica cannot understand. `record`
  // then has an empty holder and only the lease duration, if that much could be read; `raw` is
  // "opaque:" + the object's resourceVersion, so that any write to the object counts as a
  // change; `unreadable` says what could not be read. See "Opaque holders" in elector.cpp.
  bool opaque = false;
  std::string unreadable = {};
};

struct LockDescription {
  std::string type;  // "leases", "configmaps", "endpoints", "configmapsleases", ...
  std::string name_space;
  std::string name;
};

class Lock {
 public:
  virtual ~Lock() = default;

  // Reads the record and caches the object it came from. NotFound when the object is missing.
  // Every call must return by `deadline` (monotonic), with DeadlineExceeded if need be.
  virtual Result<LockObservation> Get(MonoTime deadline) = 0;

  // Creates the object holding `record`; AlreadyExists when someone else was first.
  virtual Status Create(const LeaderElectionRecord& record, MonoTime deadline) = 0;

  // PUTs the whole cached object (from the last Get or Create) with `record` in place and the
  // cached resourceVersion, so a concurrent writer gets Conflict. The cache is kept on error.
  virtual Status Update(const LeaderElectionRecord& record, MonoTime deadline) = 0;

  // What the local API reports under "lock". For `auto`, the type chosen so far.
  virtual LockDescription Describe() const = 0;
};

}  // namespace leasehold::election
