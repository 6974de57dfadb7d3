// The one interface the election algorithm depends on, like client-go's resourcelock.Interface.
// Implementations live in src/locks/.
#pragma once

#include <optional>
#include <string>
#include <string_view>

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

// What kind of lock a Lock is. A type, not a string, across this interface: the elector, the
// local API, the lock watcher and the announcer read it, and only the wire (--lock-type, the
// local API's "lock.type", logs) spells it, through LockTypeName. Here rather than in
// locks/lock_type.h, because locks depends on election; what each type's objects are is
// locks/lock_type.h's.
enum class LockType {
  kAuto,              // a Lease, or a ConfigMap where the cluster has no Lease API (auto_lock.cpp)
  kLeases,            // coordination.k8s.io/v1 Lease
  kConfigMaps,        // the leader annotation on a ConfigMap (client-go ≤ v0.27)
  kEndpoints,         // the leader annotation on an Endpoints object
  kConfigMapsLeases,  // client-go's MultiLock: ConfigMap first, then Lease
  kEndpointsLeases,   // client-go's MultiLock: Endpoints first, then Lease
  kNone,              // no election: this replica always leads (local_lock.h)
};

// Every type, "auto" first: the order of --help and of error messages.
inline constexpr LockType kAllLockTypes[] = {
    LockType::kAuto,      LockType::kLeases,           LockType::kConfigMaps,
    LockType::kEndpoints, LockType::kConfigMapsLeases, LockType::kEndpointsLeases,
    LockType::kNone};

// "auto", "leases", "configmaps", "endpoints", "configmapsleases", "endpointsleases", "none":
// client-go's names, the one spelling of --lock-type and of the local API's "lock.type".
constexpr std::string_view LockTypeName(LockType type) {
  switch (type) {
    case LockType::kAuto:
      return "auto";
    case LockType::kLeases:
      return "leases";
    case LockType::kConfigMaps:
      return "configmaps";
    case LockType::kEndpoints:
      return "endpoints";
    case LockType::kConfigMapsLeases:
      return "configmapsleases";
    case LockType::kEndpointsLeases:
      return "endpointsleases";
    case LockType::kNone:
      return "none";
  }
  return "";
}

// The type of a name above; nullopt for anything else.
inline std::optional<LockType> ParseLockType(std::string_view name) {
  for (const LockType t : kAllLockTypes) {
    if (LockTypeName(t) == name) return t;
  }
  return std::nullopt;
}

struct LockDescription {
  // For `auto`, the type chosen so far (kAuto until it chose).
  LockType type = LockType::kAuto;
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

  // There is deliberately no Delete. A release is an Update to an empty holder, conditional on
  // the resourceVersion. A DELETE with a resourceVersion precondition is no substitute: a
  // Kubernetes 1.11 apiserver (OpenShift 3.11) deletes the object even when that precondition
  // is stale (only a uid precondition is enforced), so it would remove a record a rival wrote
  // meanwhile. The e2e test e2e_v1_11_delete_precondition_ignored checks that server fact and
  // that no agent sends a DELETE.
};

}  // namespace leasehold::election
