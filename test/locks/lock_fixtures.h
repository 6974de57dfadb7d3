// Objects, records and a step runner shared by the lock tests. Every lock test is a table of
// named cases; each case is a list of steps (one Lock call each) with the exact API requests that
// step must send, and what it must return.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "election/lock.h"
#include "election/record.h"
#include "fakes/fake_clock.h"
#include "fakes/scripted_api_client.h"
#include "locks/codec.h"
#include "locks/factory.h"
#include "locks/go_json.h"

namespace leasehold::locks::testing {

using ::leasehold::testing::Answer;
using ::leasehold::testing::AnyBody;
using ::leasehold::testing::BytesEq;
using ::leasehold::testing::Call;
using ::leasehold::testing::Error;
using ::leasehold::testing::GET;
using ::leasehold::testing::JsonEq;
using ::leasehold::testing::POST;
using ::leasehold::testing::PUT;
using ::leasehold::testing::ScriptedApiClient;

inline constexpr const char* kNs = "ns";
inline constexpr const char* kName = "lock";
inline constexpr const char* kMe = "me_1";
inline constexpr const char* kOther = "other_2";

inline const std::string kDiscoveryPath = "/apis/coordination.k8s.io/v1";
inline const std::string kLeasesPath = "/apis/coordination.k8s.io/v1/namespaces/ns/leases";
inline const std::string kLeasePath = kLeasesPath + "/lock";
inline const std::string kConfigMapsPath = "/api/v1/namespaces/ns/configmaps";
inline const std::string kConfigMapPath = kConfigMapsPath + "/lock";
inline const std::string kEndpointsCollectionPath = "/api/v1/namespaces/ns/endpoints";
inline const std::string kEndpointsPath = kEndpointsCollectionPath + "/lock";

// Every request in these tests must carry exactly this deadline.
inline const MonoTime kDeadline = MonoTime(std::chrono::hours(7));

// The record this replica writes: nanosecond times, so the tests see them truncated on the wire.
inline election::LeaderElectionRecord MyRecord() {
  election::LeaderElectionRecord r;
  r.holder_identity = kMe;
  r.lease_duration_seconds = 15;
  r.acquire_time = SysTime(std::chrono::nanoseconds(1767323045123456789));
  r.renew_time = SysTime(std::chrono::nanoseconds(1767323055987654321));
  r.leader_transitions = 3;
  return r;
}

// MyRecord() as a Lease spec on the wire.
inline const std::string kMySpec =
    R"({"holderIdentity":"me_1","leaseDurationSeconds":15,)"
    R"("acquireTime":"2026-01-02T03:04:05.123456Z","renewTime":"2026-01-02T03:04:15.987654Z",)"
    R"("leaseTransitions":3})";

// MyRecord() with a coordinated election's fields, and as a Lease spec on the wire.
inline election::LeaderElectionRecord MyCoordinatedRecord() {
  election::LeaderElectionRecord r = MyRecord();
  r.strategy = "example.com/test";
  r.preferred_holder = "x";
  return r;
}
inline const std::string kMyCoordinatedSpec =
    kMySpec.substr(0, kMySpec.size() - 1) +
    R"(,"strategy":"example.com/test","preferredHolder":"x"})";

// MyRecord() as an annotation value, as client-go writes it.
inline const std::string kMyAnnotation =
    R"({"holderIdentity":"me_1","leaseDurationSeconds":15,)"
    R"("acquireTime":"2026-01-02T03:04:05Z","renewTime":"2026-01-02T03:04:15Z",)"
    R"("leaderTransitions":3})";

// A spec written by someone else, coordinated fields included, so tests see a write clear them.
inline std::string HeldSpec(const std::string& holder) {
  return R"({"holderIdentity":")" + holder +
         R"(","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:00:00.000001Z",)"
         R"("renewTime":"2026-01-02T03:00:10.000002Z","leaseTransitions":2,)"
         R"("strategy":"OldestEmulationVersion","preferredHolder":"x"})";
}

inline std::string AnnotationHeldBy(const std::string& holder) {
  return R"({"holderIdentity":")" + holder +
         R"(","leaseDurationSeconds":15,"acquireTime":"2026-01-02T03:00:00Z",)"
         R"("renewTime":"2026-01-02T03:00:10Z","leaderTransitions":2})";
}

// A Lease as the server returns it, with the metadata a PUT must carry back unchanged.
inline std::string LeaseObject(const std::string& resource_version, const std::string& spec) {
  return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"lock",)"
         R"("namespace":"ns","uid":"uid-lease","resourceVersion":")" +
         resource_version +
         R"(","creationTimestamp":"2025-01-01T00:00:00Z","labels":{"app":"demo"},)"
         R"("annotations":{"note":"keep"},"ownerReferences":[{"apiVersion":"apps/v1",)"
         R"("kind":"Deployment","name":"demo","uid":"uid-owner","controller":true}]},"spec":)" +
         spec + "}";
}

// A ConfigMap (or Endpoints) as the server returns it; `annotation` unset: no leader annotation.
inline std::string AnnotatedObject(const std::string& kind, const std::string& resource_version,
                                   const std::optional<std::string>& annotation) {
  std::string annotations = R"("other/annotation":"keep")";
  if (annotation)
    annotations += ",\"control-plane.alpha.kubernetes.io/leader\":" + GoJsonQuote(*annotation);
  return R"({"apiVersion":"v1","kind":")" + kind +
         R"(","metadata":{"name":"lock","namespace":"ns","uid":"uid-cm","resourceVersion":")" +
         resource_version + R"(","labels":{"app":"demo"},"annotations":{)" + annotations +
         R"(}},"data":{"config":"value"}})";
}

inline std::string ConfigMapObject(const std::string& resource_version,
                                   const std::optional<std::string>& annotation) {
  return AnnotatedObject("ConfigMap", resource_version, annotation);
}

// What a watcher computes for this object; the lock's Get must report the same raw.
inline std::string LeaseRawOf(const std::string& lease_object) {
  auto observation = LeaseObservation(lease_object);
  REQUIRE(observation.ok());
  return observation->raw;
}

enum class Op { kGet, kCreate, kUpdate };

class Step {
 public:
  Step(const char* what_, Op op_, std::vector<Call> calls_)
      : what(what_), op(op_), calls(std::move(calls_)) {}

  Step&& Want(Code c) && {
    want = c;
    return std::move(*this);
  }
  Step&& Holder(std::string h) && {
    want_holder = std::move(h);
    return std::move(*this);
  }
  Step&& Raw(std::string r) && {
    want_raw = std::move(r);
    return std::move(*this);
  }
  Step&& Message(std::string m) && {
    want_message = std::move(m);
    return std::move(*this);
  }
  Step&& Type(std::string t) && {
    want_type = std::move(t);
    return std::move(*this);
  }
  Step&& After(Duration d) && {
    advance = d;
    return std::move(*this);
  }
  Step&& Writing(election::LeaderElectionRecord r) && {
    record = std::move(r);
    return std::move(*this);
  }

  const char* what;
  Op op;
  std::vector<Call> calls;
  Code want = Code::kOk;
  // Get only, when OK.
  std::optional<std::string> want_holder;
  std::optional<std::string> want_raw;
  // A substring the error message must contain.
  std::optional<std::string> want_message;
  // Describe().type after the step.
  std::optional<std::string> want_type;
  // Moves the FakeClock forward before the step.
  Duration advance{};
  // Create and Update: the record written, when not MyRecord().
  std::optional<election::LeaderElectionRecord> record;
};

inline Step GetStep(const char* what, std::vector<Call> calls) {
  return Step(what, Op::kGet, std::move(calls));
}
inline Step CreateStep(const char* what, std::vector<Call> calls) {
  return Step(what, Op::kCreate, std::move(calls));
}
inline Step UpdateStep(const char* what, std::vector<Call> calls) {
  return Step(what, Op::kUpdate, std::move(calls));
}

struct LockCase {
  const char* name;
  std::string type;
  std::vector<Step> steps;
};

inline void RunLockCase(const LockCase& c) {
  FakeClock clock;
  ScriptedApiClient api(kDeadline);
  LockOptions options;
  options.type = election::ParseLockType(c.type).value();
  options.name_space = kNs;
  options.name = kName;
  options.identity = kMe;
  options.lease_duration = std::chrono::seconds(15);
  auto lock = NewLock(options, api, clock);
  REQUIRE_MESSAGE(lock.ok(), lock.status().ToString());
  for (const Step& step : c.steps) {
    INFO("step: " << step.what);
    clock.Advance(step.advance);
    api.Expect(step.calls);
    Status status;
    if (step.op == Op::kGet) {
      auto got = (*lock)->Get(kDeadline);
      status = got.status();
      if (got.ok()) {
        if (step.want_holder) CHECK(got->record.holder_identity == *step.want_holder);
        if (step.want_raw) CHECK(got->raw == *step.want_raw);
      }
    } else if (step.op == Op::kCreate) {
      status = (*lock)->Create(step.record.value_or(MyRecord()), kDeadline);
    } else {
      status = (*lock)->Update(step.record.value_or(MyRecord()), kDeadline);
    }
    CHECK_MESSAGE(status.code() == step.want, "got " << status.ToString());
    if (step.want_message) {
      CHECK_MESSAGE(status.message().find(*step.want_message) != std::string::npos,
                    "message: " << status.message());
    }
    if (step.want_type) CHECK(election::LockTypeName((*lock)->Describe().type) == *step.want_type);
    api.VerifyDone();
  }
  const election::LockDescription d = (*lock)->Describe();
  CHECK(d.name_space == kNs);
  CHECK(d.name == kName);
}

}  // namespace leasehold::locks::testing
