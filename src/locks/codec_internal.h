// Internal to src/locks: the codecs' entry points on already-parsed RapidJSON values, for the locks
// that keep the parsed object as their cache (a second parse of the same bytes would be waste).
#pragma once

#include <rapidjson/document.h>

#include "base/status.h"
#include "election/lock.h"
#include "locks/codec.h"

namespace leasehold::locks::internal {

// DecodeLeaseObject on an already-parsed Lease object.
Result<election::LeaderElectionRecord> DecodeLeaseSpecIn(const rapidjson::Value& lease);

// The same, reading every field even after one fails: `out` holds what could be read and the
// first failure is returned.
Status DecodeLeaseSpecInto(const rapidjson::Value& lease, election::LeaderElectionRecord* out);
Status DecodeAnnotationRecordInto(std::string_view json, election::LeaderElectionRecord* r);

// An opaque holder's observation (see LockObservation::opaque) of `object`, whose record failed
// to read with `why`; `readable` is what could be read of it (its lease duration and count).
election::LockObservation OpaqueObservation(const rapidjson::Value& object,
                                            const election::LeaderElectionRecord& readable,
                                            const Status& why);

// What a Lease observer sees of a parsed Lease object: the record and its raw, or an opaque
// holder. Shared by LeaseLock::Get and LeaseObservation, so a watch and a Get agree.
election::LockObservation ObserveLease(const rapidjson::Value& lease);

}  // namespace leasehold::locks::internal
