// How `auto` decides.
//
// Discovery (once): GET /apis/coordination.k8s.io/v1. A 200 listing `leases` means the Lease API
// is served; a 404, or a 200 without `leases`, means it is not (Kubernetes < 1.14) and the lock
// is the ConfigMap. Any other answer (timeout, 5xx, 401, 403, an unreadable body) decides nothing:
// Get returns it, the elector counts a failed attempt, and the next Get asks again.
//
// With the Lease API: GET the ConfigMap of the lock's name. If it exists, an old replica may
// still be using it, so hold both (client-go's configmapsleases, primary ConfigMap); if not, use
// the Lease alone. In multilock mode every Get reads the ConfigMap first anyway, so it re-checks
// each time and drops to Lease-only once the ConfigMap is deleted; Lease-only mode re-checks
// when a lease duration has passed since the last check, on a Get and on a leader's Update
// (which then fails with Conflict if the ConfigMap appeared, so the elector re-reads both). A
// 403 on the check fails closed: not knowing whether old replicas hold the ConfigMap, we must not
// act on the Lease alone.
//
// Why switching between Lease-only and multilock mode cannot make two leaders:
//  1. Others see only our writes, never our mode. Both modes write the Lease, and every write is
//     conditional: a PUT carries the resourceVersion of the read the elector decided from (or of
//     our own last successful write) and a POST fails with AlreadyExists. In multilock mode the
//     ConfigMap PUT is conditional too, and so is the Lease write after it (MultiLock does not
//     re-GET the Lease before writing it, as client-go's does, see multi_lock.h), so it cannot
//     overwrite a Lease that a Lease-only replica took a moment earlier. So of any
//     replicas, in any mix of modes, that decide from the same Lease version, at most one Lease
//     write succeeds, and a replica whose write fails does not lead.
//  2. A switch changes the raw record (Lease raw vs ConfigMap raw + "," + Lease raw). The elector
//     takes a changed raw as a changed record and restarts its expiry timer at "now", which only
//     ever makes a replica wait longer before it takes over; it never makes a held lock look free.
//  3. No switch shows a holder more permissively than a peer would see it. Lease-only mode reports
//     the Lease's holder, as every Lease-only peer (client-go v0.28+) sees it. Multilock mode
//     reports the common holder, or kUnknownLeader when the objects disagree, or the ConfigMap's
//     holder when the Lease is missing: never this replica unless the objects say so. Entering
//     multilock mode can therefore only take leadership away, not grant it.
//  4. A leader renews by Update alone (no Get) while its lease is valid. Its Update re-checks for
//     the ConfigMap when due; finding it, it writes nothing and fails, so the switch to multilock
//     mode takes effect only through the Get that follows, which decides afresh.
//
// What auto cannot do: stop a replica that uses the ConfigMap lock alone and starts (creating
// the ConfigMap) while we run Lease-only. It never reads the Lease, so it leads at once; our
// leader notices within a lease duration (the re-check) and stops renewing, and its "yes" ends at
// most renew-deadline after its last renew. Until then there are two leaders, which no mode of
// ours can prevent; a deployment that can still start such replicas must use
// --lock-type=configmapsleases.
#include "locks/auto_lock.h"

#include <rapidjson/document.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "locks/annotation_lock.h"
#include "locks/json_object.h"
#include "locks/lock_type.h"

namespace leasehold::locks {

using election::LeaderElectionRecord;
using election::LockObservation;

AutoLock::AutoLock(kube::ApiClient& client, std::string name_space, std::string name,
                   Duration recheck_every, const Clock& clock)
    : client_(client),
      ns_(std::move(name_space)),
      name_(std::move(name)),
      recheck_every_(recheck_every),
      clock_(clock),
      multi_(election::LockType::kConfigMapsLeases,
             std::make_unique<AnnotationLock>(kConfigMapObject, client, ns_, name_),
             std::make_unique<LeaseLock>(client, ns_, name_)) {}

namespace {

const char* LogName(int e) {
  static constexpr const char* kNames[] = {"nothing yet", "leases, pending a ConfigMap check",
                                           "configmaps", "leases", "configmapsleases"};
  return kNames[e];
}

}  // namespace

void AutoLock::Become(Effective e, const std::string& why) {
  if (effective_.load() == e) return;
  effective_.store(e);
  spdlog::info("lock {}/{}: auto uses {}: {}", ns_, name_, LogName(static_cast<int>(e)), why);
}

Status AutoLock::Discover(MonoTime deadline) {
  // The discovery document of the Lease API's group version says whether it serves Leases.
  const std::string discovery = kLeaseObject.Ref("", "").GroupVersionPath();
  kube::Request request;
  request.method = "GET";
  request.path = discovery;
  auto response = client_.Do(request, deadline);
  if (!response.ok()) {
    if (response.code() == Code::kNotFound) {
      Become(Effective::kConfigMaps,
             std::string("GET ") + discovery +
                 " is 404: the cluster has no Lease API (Kubernetes < 1.14)");
      return Status::Ok();
    }
    return Status(response.code(), std::string("auto lock: cannot tell whether the cluster serves "
                                               "Leases (GET ") +
                                       discovery + "): " + response.status().message());
  }
  rapidjson::Document doc;
  Status s = internal::ParseObject(response->body, "APIResourceList", doc);
  if (!s.ok()) return Status(s.code(), "auto lock: " + s.message());
  bool has_leases = false;
  if (const rapidjson::Value* resources = internal::FindMember(doc, "resources")) {
    if (!resources->IsNull() && !resources->IsArray()) {
      return Status(Code::kMalformed, "auto lock: APIResourceList.resources is not a list");
    }
    if (resources->IsArray()) {
      for (const auto& r : resources->GetArray()) {
        const rapidjson::Value* name = internal::FindMember(r, "name");
        if (name != nullptr && name->IsString() &&
            std::string_view(name->GetString()) == kLeaseObject.resource) {
          has_leases = true;
        }
      }
    }
  }
  if (has_leases) {
    Become(Effective::kLeasesUnchecked, "the cluster serves coordination.k8s.io/v1 leases");
  } else {
    Become(Effective::kConfigMaps, discovery + " does not list leases: using the ConfigMap lock");
  }
  return Status::Ok();
}

Result<LockObservation> AutoLock::Get(MonoTime deadline) {
  if (effective_.load() == Effective::kUndecided) {
    Status s = Discover(deadline);
    if (!s.ok()) return s;
  }
  if (effective_.load() == Effective::kConfigMaps) return multi_.primary().Get(deadline);
  return GetLeases(deadline);
}

bool AutoLock::RecheckDue(MonoTime now) const {
  return effective_.load() != Effective::kLeases || !last_check_ ||
         now - *last_check_ >= recheck_every_;
}

Result<LockObservation> AutoLock::GetLeases(MonoTime deadline) {
  if (!RecheckDue(clock_.MonotonicNow())) return multi_.secondary().Get(deadline);
  auto configmap = Recheck(deadline);
  if (configmap.ok()) return multi_.GetAfterPrimary(std::move(configmap), deadline);
  if (configmap.code() == Code::kNotFound) return multi_.secondary().Get(deadline);
  return configmap.status();
}

Result<LockObservation> AutoLock::Recheck(MonoTime deadline) {
  const MonoTime now = clock_.MonotonicNow();
  auto configmap = multi_.primary().Get(deadline);
  if (configmap.ok()) {
    last_check_ = now;
    forbidden_logged_ = false;
    Become(Effective::kConfigMapsLeases,
           "ConfigMap " + ns_ + "/" + name_ +
               " exists: holding it and the Lease, so replicas still on the ConfigMap lock see "
               "the same leader");
    return configmap;
  }
  if (configmap.code() == Code::kNotFound) {
    last_check_ = now;
    forbidden_logged_ = false;
    Become(Effective::kLeases, "no ConfigMap " + ns_ + "/" + name_ + ": using the Lease alone");
    return configmap;
  }
  if (configmap.code() == Code::kForbidden) {
    const std::string message =
        "auto lock: checking for an old ConfigMap lock needs permission to get configmaps \"" +
        name_ + "\" in namespace \"" + ns_ +
        "\" (or use --lock-type=leases): " + configmap.status().message();
    if (!forbidden_logged_) {
      spdlog::error("lock {}/{}: {}", ns_, name_, message);
      forbidden_logged_ = true;
    }
    return Status(Code::kForbidden, message);
  }
  return configmap;
}

election::Lock* AutoLock::Current() {
  switch (effective_.load()) {
    case Effective::kConfigMaps:
      return &multi_.primary();
    case Effective::kLeases:
      return &multi_.secondary();
    case Effective::kConfigMapsLeases:
      return &multi_;
    case Effective::kUndecided:
    case Effective::kLeasesUnchecked:
      break;
  }
  return nullptr;
}

Status AutoLock::Create(const LeaderElectionRecord& record, MonoTime deadline) {
  election::Lock* lock = Current();
  if (lock == nullptr)
    return Status(Code::kFailedPrecondition, "auto lock: type not decided yet; Get first");
  return lock->Create(record, deadline);
}

Status AutoLock::Update(const LeaderElectionRecord& record, MonoTime deadline) {
  election::Lock* lock = Current();
  if (lock == nullptr)
    return Status(Code::kFailedPrecondition, "auto lock: type not decided yet; Get first");
  // A leader renews by Update alone, so without this it would never look again for a ConfigMap
  // that replicas on the ConfigMap lock create after it took the Lease.
  if (effective_.load() == Effective::kLeases && RecheckDue(clock_.MonotonicNow())) {
    auto configmap = Recheck(deadline);
    if (configmap.ok()) {
      // Not renewed: the elector's next Get reads both objects and decides afresh.
      return Status(Code::kConflict, "auto lock: ConfigMap " + ns_ + "/" + name_ +
                                         " appeared; deciding again from it and the Lease");
    }
    if (configmap.code() != Code::kNotFound) return configmap.status();  // fails closed
  }
  return lock->Update(record, deadline);
}

election::LockDescription AutoLock::Describe() const {
  election::LockType type = election::LockType::kAuto;
  switch (effective_.load()) {
    case Effective::kConfigMaps:
      type = election::LockType::kConfigMaps;
      break;
    case Effective::kLeases:
      type = election::LockType::kLeases;
      break;
    case Effective::kConfigMapsLeases:
      type = election::LockType::kConfigMapsLeases;
      break;
    case Effective::kUndecided:
    case Effective::kLeasesUnchecked:
      break;
  }
  return {type, ns_, name_};
}

}  // namespace leasehold::locks
