#include "locks/factory.h"

#include <utility>

#include "locks/annotation_lock.h"
#include "locks/auto_lock.h"
#include "locks/lease_lock.h"
#include "locks/local_lock.h"
#include "locks/multi_lock.h"

namespace leasehold::locks {

bool IsValidLockType(const std::string& type) {
  for (const char* t : kLockTypes) {
    if (type == t) return true;
  }
  return false;
}

Result<std::unique_ptr<election::Lock>> NewLock(const LockOptions& options, kube::ApiClient& client,
                                                const Clock& clock) {
  if (!IsValidLockType(options.type)) {
    std::string valid;
    for (const char* t : kLockTypes) valid += std::string(valid.empty() ? "" : ", ") + t;
    return Status(Code::kInvalid,
                  "unknown lock type \"" + options.type + "\"; want one of " + valid);
  }
  if (options.name_space.empty()) return Status(Code::kInvalid, "lock namespace is empty");
  if (options.name.empty()) return Status(Code::kInvalid, "lock name is empty");
  if (options.identity.empty()) return Status(Code::kInvalid, "lock identity is empty");

  const std::string& ns = options.name_space;
  const std::string& name = options.name;
  auto lease = [&] { return std::make_unique<LeaseLock>(client, ns, name); };
  auto annotated = [&](AnnotatedKind kind) {
    return std::make_unique<AnnotationLock>(kind, client, ns, name);
  };
  std::unique_ptr<election::Lock> lock;
  if (options.type == "none") {
    lock = std::make_unique<LocalLock>(ns, name);
  } else if (options.type == "auto") {
    lock = std::make_unique<AutoLock>(client, ns, name, options.lease_duration, clock);
  } else if (options.type == "leases") {
    lock = lease();
  } else if (options.type == "configmaps") {
    lock = annotated(AnnotatedKind::kConfigMap);
  } else if (options.type == "endpoints") {
    lock = annotated(AnnotatedKind::kEndpoints);
  } else if (options.type == "configmapsleases") {
    lock = std::make_unique<MultiLock>("configmapsleases", annotated(AnnotatedKind::kConfigMap),
                                       lease());
  } else {
    lock = std::make_unique<MultiLock>("endpointsleases", annotated(AnnotatedKind::kEndpoints),
                                       lease());
  }
  return lock;
}

}  // namespace leasehold::locks
