// The lock codecs on untrusted bytes: a Lease object (DecodeLeaseObject, LeaseObservation), an
// annotation record (DecodeAnnotationRecord / EncodeAnnotationRecord) and a ConfigMap/Endpoints
// object carrying one (AnnotationObservation). Beyond "no crash, no UB": every error is Invalid,
// observations agree with the decoders (an unreadable record is an opaque holder, never a
// holder's name), and what decodes survives re-encoding.
#include <chrono>
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "locks/annotation_lock.h"
#include "locks/codec.h"
#include "locks/go_json.h"

namespace leasehold::locks {
namespace {

using election::LeaderElectionRecord;
using fuzz::ValidUtf8;

// The annotation keeps whole seconds.
LeaderElectionRecord ToSeconds(LeaderElectionRecord r) {
  if (r.acquire_time) r.acquire_time = std::chrono::floor<std::chrono::seconds>(*r.acquire_time);
  if (r.renew_time) r.renew_time = std::chrono::floor<std::chrono::seconds>(*r.renew_time);
  return r;
}

void CheckOpaque(const election::LockObservation& o) {
  FUZZ_CHECK(o.opaque);
  FUZZ_CHECK(o.record.holder_identity.empty());
  FUZZ_CHECK(o.raw.rfind("opaque:", 0) == 0);
  FUZZ_CHECK(!o.unreadable.empty());
  FUZZ_CHECK(o.record.lease_duration_seconds >= 0);
}

void FuzzLease(std::string_view in) {
  const Result<LeaderElectionRecord> lease = DecodeLeaseObject(in);
  FUZZ_CHECK(lease.ok() || lease.code() == Code::kMalformed);
  const Result<election::LockObservation> observation = LeaseObservation(in);
  if (!lease.ok()) {
    // A Lease object whose spec cannot be read is an opaque holder: never a holder's name.
    if (observation.ok()) CheckOpaque(*observation);
    return;
  }
  FUZZ_CHECK(observation.ok() && !observation->opaque);
  FUZZ_CHECK(observation->record == *lease);
  FUZZ_CHECK(observation->raw == LeaseRawRecord(*lease));

  // What leasehold would write back (the spec of a PUT) reads as the same record: times are
  // MicroTime both ways, so nothing is lost but invalid UTF-8 in the holder (then U+FFFD).
  const std::string written = "{\"spec\":" + EncodeLeaseSpec(*lease) + "}";
  const Result<LeaderElectionRecord> again = DecodeLeaseObject(written);
  FUZZ_CHECK(again.ok());
  if (ValidUtf8(lease->holder_identity) && ValidUtf8(lease->strategy) &&
      ValidUtf8(lease->preferred_holder)) {
    FUZZ_CHECK(*again == *lease);
  } else {
    LeaderElectionRecord want = *lease;
    want.holder_identity = again->holder_identity;
    want.strategy = again->strategy;
    want.preferred_holder = again->preferred_holder;
    FUZZ_CHECK(*again == want);
  }
  // And from there on it is a fixed point.
  const Result<LeaderElectionRecord> third =
      DecodeLeaseObject("{\"spec\":" + EncodeLeaseSpec(*again) + "}");
  FUZZ_CHECK(third.ok() && *third == *again);
}

void FuzzAnnotation(std::string_view in) {
  const Result<LeaderElectionRecord> record = DecodeAnnotationRecord(in);
  FUZZ_CHECK(record.ok() || record.code() == Code::kMalformed);
  if (record.ok()) {
    // decode(encode(decode(x))) is a fixed point; with valid UTF-8 it is decode(x) at whole
    // seconds, and encoding it again gives the same bytes.
    const std::string e1 = EncodeAnnotationRecord(*record);
    const Result<LeaderElectionRecord> r2 = DecodeAnnotationRecord(e1);
    FUZZ_CHECK(r2.ok());
    const std::string e2 = EncodeAnnotationRecord(*r2);
    const Result<LeaderElectionRecord> r3 = DecodeAnnotationRecord(e2);
    FUZZ_CHECK(r3.ok());
    FUZZ_CHECK(*r3 == *r2);
    FUZZ_CHECK(EncodeAnnotationRecord(*r3) == e2);
    if (ValidUtf8(record->holder_identity)) {
      FUZZ_CHECK(*r2 == ToSeconds(*record));
      FUZZ_CHECK(e2 == e1);
    }
  }

  // The input as the value of the leader annotation on a ConfigMap: the observation reports it
  // byte for byte as raw and decodes it as DecodeAnnotationRecord does.
  if (ValidUtf8(in)) {
    const std::string object =
        std::string(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"l",)") +
        R"("annotations":{")" + kLeaderAnnotationKey + "\":" + GoJsonQuote(in) + "}}}";
    const Result<election::LockObservation> observation = AnnotationObservation(object);
    // Whatever the annotation holds, the object reads: a record, or an opaque holder.
    FUZZ_CHECK(observation.ok());
    if (record.ok()) {
      FUZZ_CHECK(!observation->opaque);
      FUZZ_CHECK(observation->raw == in);
      FUZZ_CHECK(observation->record == *record);
    } else {
      CheckOpaque(*observation);
    }
  }
}

void FuzzAnnotationObject(std::string_view in) {
  const Result<election::LockObservation> observation = AnnotationObservation(in);
  FUZZ_CHECK(observation.ok() || observation.code() == Code::kMalformed);
  if (!observation.ok()) return;
  if (observation->opaque) {
    CheckOpaque(*observation);
    return;
  }
  if (observation->raw.empty()) {
    // No annotation: the zero record, as in client-go.
    FUZZ_CHECK(observation->record == LeaderElectionRecord{});
    return;
  }
  const Result<LeaderElectionRecord> record = DecodeAnnotationRecord(observation->raw);
  FUZZ_CHECK(record.ok());
  FUZZ_CHECK(*record == observation->record);
}

}  // namespace
}  // namespace leasehold::locks

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = leasehold::fuzz::AsText(data, size);
  leasehold::locks::FuzzLease(in);
  leasehold::locks::FuzzAnnotation(in);
  leasehold::locks::FuzzAnnotationObject(in);
  // Any bytes quote to a JSON string literal.
  const std::string quoted = leasehold::locks::GoJsonQuote(in);
  FUZZ_CHECK(quoted.size() >= 2 && quoted.front() == '"' && quoted.back() == '"');
  return 0;
}
