// Wire codecs for the lock objects: the Lease spec and the annotation record (timestamps are in
// base/rfc3339.h, Go's string escaping in locks/go_json.h). Pure functions over strings, so they
// can be table-tested and fuzzed without any transport.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/rfc3339.h"
#include "base/status.h"
#include "election/lock.h"
#include "election/record.h"

namespace leasehold::locks {

// The annotation that holds the record on ConfigMap and Endpoints locks (client-go ≤ v0.27).
inline constexpr const char* kLeaderAnnotationKey = "control-plane.alpha.kubernetes.io/leader";

// Reads `spec` of a whole Lease object, strategy and preferredHolder included. A missing spec or
// field, or a null one, reads as the zero value (nullopt for times); a field of the wrong type,
// or a body that is not a JSON object, is kMalformed.
Result<election::LeaderElectionRecord> DecodeLeaseObject(std::string_view object_json);

// The `spec` object leasehold writes, as client-go's LeaderElectionRecordToLeaseSpec builds it:
// holderIdentity (even ""), leaseDurationSeconds, acquireTime, renewTime (MicroTime, null when
// absent), leaseTransitions, then strategy and preferredHolder only when not empty. A PUT
// replaces the whole spec, so a field the elector leaves empty is cleared (which ones it keeps:
// elector.cpp, "Coordinated leader election").
std::string EncodeLeaseSpec(const election::LeaderElectionRecord& record);

// What Lease observers compare (client-go's rawRecord): every field of the spec, times to the
// microsecond. Finer than client-go's whole-second JSON, so it can only make an observer notice a
// change Go would miss and wait longer, never shorter.
std::string LeaseRawRecord(const election::LeaderElectionRecord& record);

// A whole Lease object (a GET answer or a watch event's object) as the `leases` lock's Get
// reports it: same record, same raw. A watch feeding the elector must use this, so that its raw
// and Get's agree and an unchanged Lease does not count as a change.
Result<election::LockObservation> LeaseObservation(std::string_view object_json);

// The annotation value, byte for byte as client-go ≤ v0.23 writes it (json.Marshal of
// LeaderElectionRecord without the v0.31 fields: strategy and preferred_holder are never written):
// fixed field order, whole-second times, null for an absent time, Go's string escaping.
std::string EncodeAnnotationRecord(const election::LeaderElectionRecord& record);

// Reads an annotation value as Go's json.Unmarshal does: unknown fields (strategy,
// preferredHolder, …) are ignored, field names match case-insensitively and the last duplicate
// wins, null leaves a field at its zero value, times may carry a fraction or an offset. A wrong
// type, an empty string or malformed JSON is kMalformed. The JSON literal null reads as the zero
// record, as in Go.
Result<election::LeaderElectionRecord> DecodeAnnotationRecord(std::string_view json);

}  // namespace leasehold::locks
