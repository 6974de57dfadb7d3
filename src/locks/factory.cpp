#include "locks/factory.h"

#include <utility>

#include "locks/annotation_lock.h"
#include "locks/auto_lock.h"
#include "locks/lease_lock.h"
#include "locks/local_lock.h"
#include "locks/multi_lock.h"

namespace leasehold::locks {

Result<std::unique_ptr<election::Lock>> NewLock(const LockOptions& options, kube::ApiClient& client,
                                                const Clock& clock) {
  if (options.name_space.empty()) return Status(Code::kBadConfig, "lock namespace is empty");
  if (options.name.empty()) return Status(Code::kBadConfig, "lock name is empty");
  if (options.identity.empty()) return Status(Code::kBadConfig, "lock identity is empty");

  const std::string& ns = options.name_space;
  const std::string& name = options.name;
  auto lease = [&] { return std::make_unique<LeaseLock>(client, ns, name); };
  auto annotated = [&](const LockObjectKind& kind) {
    return std::make_unique<AnnotationLock>(kind, client, ns, name);
  };
  switch (options.type) {
    case election::LockType::kNone:
      return std::unique_ptr<election::Lock>(std::make_unique<LocalLock>(ns, name));
    case election::LockType::kAuto:
      return std::unique_ptr<election::Lock>(
          std::make_unique<AutoLock>(client, ns, name, options.lease_duration, clock));
    case election::LockType::kLeases:
      return std::unique_ptr<election::Lock>(lease());
    case election::LockType::kConfigMaps:
      return std::unique_ptr<election::Lock>(annotated(kConfigMapObject));
    case election::LockType::kEndpoints:
      return std::unique_ptr<election::Lock>(annotated(kEndpointsObject));
    case election::LockType::kConfigMapsLeases:
      return std::unique_ptr<election::Lock>(
          std::make_unique<MultiLock>(options.type, annotated(kConfigMapObject), lease()));
    case election::LockType::kEndpointsLeases:
      return std::unique_ptr<election::Lock>(
          std::make_unique<MultiLock>(options.type, annotated(kEndpointsObject), lease()));
  }
  return Status(Code::kBadConfig, "unknown lock type");
}

}  // namespace leasehold::locks
