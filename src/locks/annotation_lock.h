// The `configmaps` and `endpoints` locks (client-go ≤ v0.23, and the primary half of the
// v0.17-v0.27 multilocks): the record is a JSON string in one annotation of a core/v1 object.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "election/lock.h"
#include "kube/api_client.h"
#include "kube/object_ref.h"
#include "locks/lock_type.h"

namespace leasehold::locks {

namespace internal {
struct CachedObject;
}

// A whole ConfigMap or Endpoints object (a GET answer or a watch event's object) as the
// annotation lock's Get reports it: same record, same raw, so a watch and Get agree.
Result<election::LockObservation> AnnotationObservation(std::string_view object_json);

class AnnotationLock final : public election::Lock {
 public:
  // `kind` is kConfigMapObject or kEndpointsObject (lock_type.h). Keeps a reference to `client`,
  // which must outlive the lock.
  AnnotationLock(const LockObjectKind& kind, kube::ApiClient& client, std::string name_space,
                 std::string name);
  ~AnnotationLock() override;

  // GET; caches the whole object. An object without the annotation (or without annotations)
  // reads as the zero record with raw "", as in client-go; NotFound drops the cache.
  Result<election::LockObservation> Get(MonoTime deadline) override;
  // POSTs {apiVersion: v1, kind, metadata: {name, namespace, annotations: {key: record}}}.
  Status Create(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  // Sets the annotation on the cached object and PUTs it; cache handling as LeaseLock.
  Status Update(const election::LeaderElectionRecord& record, MonoTime deadline) override;
  election::LockDescription Describe() const override;

  // "configmaps" or "endpoints".
  std::string_view resource() const { return kind_.resource; }

 private:
  // "configmaps ns/name", for messages.
  std::string Where() const;

  const LockObjectKind& kind_;
  kube::ApiClient& client_;
  const std::string ns_;
  const std::string name_;
  const kube::ObjectRef ref_;
  const std::string kind_name_;  // "ConfigMap", "Endpoints": NUL-terminated for the parser
  std::unique_ptr<internal::CachedObject> cached_;
};

}  // namespace leasehold::locks
