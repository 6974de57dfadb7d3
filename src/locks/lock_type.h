// What a lock type is: its name on the command line and in the local API, and the API objects its
// record lives in. The one table the flags, the factory, the lock watcher and the announcer read,
// so that none of them branches on type names.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "election/lock.h"
#include "kube/object_ref.h"

namespace leasehold::locks {

// The lock types themselves and their names are election::LockType and election::LockTypeName
// (election/lock.h), under that one name everywhere; this file adds what each type is made of.

// "auto, leases, …, none", for --help and error messages.
std::string LockTypeNames();

// One kind of API object a record can live in.
struct LockObjectKind {
  std::string_view group;     // "" for the core group
  std::string_view version;   // "v1"
  std::string_view kind;      // "Lease", "ConfigMap", "Endpoints"
  std::string_view resource;  // "leases", "configmaps", "endpoints"
  // The lock type of a lock on this object alone: kLeases, kConfigMaps, kEndpoints.
  election::LockType single;
  // A whole object (a GET answer or a watch event's object) read exactly as the lock's Get reads
  // it: same record, same raw, so an unchanged object never counts as a change.
  Result<election::LockObservation> (*observe)(std::string_view object_json);

  // "coordination.k8s.io/v1" or "v1": the apiVersion of the object and of an Event about it.
  std::string ApiVersion() const;
  kube::ObjectRef Ref(std::string_view name_space, std::string_view name) const;
};

extern const LockObjectKind kLeaseObject;
extern const LockObjectKind kConfigMapObject;
extern const LockObjectKind kEndpointsObject;

// The objects a lock of `type` keeps its record in, the one it is judged by first: none for
// `none`; the Lease for `auto` until it has chosen (it chooses before anyone can lead, and then
// describes itself as the type it chose).
std::vector<const LockObjectKind*> LockObjects(election::LockType type);

// The one object a single-object lock (leases, configmaps, endpoints) lives in; nullptr for the
// others (`auto` before it chose, the multilocks, `none`), which the lock watcher does not watch.
const LockObjectKind* SingleLockObject(election::LockType type);

}  // namespace leasehold::locks
