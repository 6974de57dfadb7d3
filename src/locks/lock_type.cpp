#include "locks/lock_type.h"

#include "locks/annotation_lock.h"
#include "locks/codec.h"

namespace leasehold::locks {

const LockObjectKind kLeaseObject{
    "coordination.k8s.io", "v1", "Lease", "leases", election::LockType::kLeases, &LeaseObservation};
const LockObjectKind kConfigMapObject{
    "", "v1", "ConfigMap", "configmaps", election::LockType::kConfigMaps, &AnnotationObservation};
const LockObjectKind kEndpointsObject{
    "", "v1", "Endpoints", "endpoints", election::LockType::kEndpoints, &AnnotationObservation};

std::string LockTypeNames() {
  std::string out;
  for (const election::LockType t : election::kAllLockTypes) {
    if (!out.empty()) out += ", ";
    out += election::LockTypeName(t);
  }
  return out;
}

std::string LockObjectKind::ApiVersion() const {
  return group.empty() ? std::string(version) : std::string(group) + "/" + std::string(version);
}

kube::ObjectRef LockObjectKind::Ref(std::string_view name_space, std::string_view name) const {
  return kube::ObjectRef{std::string(group), std::string(version), std::string(resource),
                         std::string(name_space), std::string(name)};
}

std::vector<const LockObjectKind*> LockObjects(election::LockType type) {
  switch (type) {
    case election::LockType::kAuto:
    case election::LockType::kLeases:
      return {&kLeaseObject};
    case election::LockType::kConfigMaps:
      return {&kConfigMapObject};
    case election::LockType::kEndpoints:
      return {&kEndpointsObject};
    case election::LockType::kConfigMapsLeases:
      return {&kConfigMapObject, &kLeaseObject};
    case election::LockType::kEndpointsLeases:
      return {&kEndpointsObject, &kLeaseObject};
    case election::LockType::kNone:
      return {};
  }
  return {};
}

const LockObjectKind* SingleLockObject(election::LockType type) {
  // `auto` lists the Lease before it has chosen, but is no single-object lock until it has.
  if (type == election::LockType::kAuto) return nullptr;
  const std::vector<const LockObjectKind*> objects = LockObjects(type);
  return objects.size() == 1 ? objects.front() : nullptr;
}

}  // namespace leasehold::locks
