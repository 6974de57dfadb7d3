// Wire codecs for the lock objects: timestamps, the Lease spec and the annotation record. Pure
// functions over strings, so they can be table-tested and fuzzed without any transport.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "base/text.h"
#include "election/lock.h"
#include "election/record.h"

namespace leasehold::locks {

// The annotation that holds the record on ConfigMap and Endpoints locks (client-go ≤ v0.27).
inline constexpr const char* kLeaderAnnotationKey = "control-plane.alpha.kubernetes.io/leader";

// Microseconds since 1970-01-01T00:00:00Z. Spans every RFC 3339 year (0000-9999), which SysTime
// (nanoseconds in 64 bits: years 1678-2261) cannot.
using UnixMicros = int64_t;

// 0001-01-01T00:00:00Z, Go's zero time.Time. Go writes it as null and treats it as "no time".
inline constexpr UnixMicros kGoZeroTimeMicros = -62135596800LL * 1000000;

// "YYYY-MM-DDTHH:MM:SS.ffffffZ" (with_fraction) or "YYYY-MM-DDTHH:MM:SSZ", in UTC. Sub-unit digits
// are dropped, never rounded, so a written time is never ahead of the clock it was read from.
// Years outside 0000-9999 cannot be written in RFC 3339; they are clamped to that range.
std::string FormatUnixMicros(UnixMicros t, bool with_fraction);

// metav1.MicroTime, as the Lease API stores acquireTime/renewTime: exactly six fraction digits.
std::string FormatMicroTime(SysTime t);

// metav1.Time, as annotation records store times: whole seconds.
std::string FormatRfc3339Seconds(SysTime t);

// Parses "YYYY-MM-DDTHH:MM:SS[.f…](Z|±hh:mm)": two-digit fields, an optional fraction of any
// length (digits past the sixth are dropped), uppercase T and Z. Anything else, and any
// out-of-range field (month 13, Feb 30, second 60, offset hour 24), is Invalid.
Result<UnixMicros> ParseRfc3339Micros(std::string_view text);

// As above, then Invalid when the instant does not fit SysTime (years before 1678 or after 2261).
Result<SysTime> ParseRfc3339(std::string_view text);

// The LeaseSpec fields leasehold reads. strategy and preferred_holder belong to coordinated
// election (client-go v0.31+); leasehold never writes them but counts them as part of the record.
struct LeaseSpec {
  election::LeaderElectionRecord record;
  std::string strategy;
  std::string preferred_holder;
};

// Reads `spec` of a whole Lease object. A missing spec or field, or a null one, reads as the zero
// value (nullopt for times); a field of the wrong type, or a body that is not a JSON object, is
// Invalid.
Result<LeaseSpec> DecodeLeaseObject(std::string_view object_json);

// The `spec` object leasehold writes, as client-go's LeaderElectionRecordToLeaseSpec builds it:
// holderIdentity (even ""), leaseDurationSeconds, acquireTime, renewTime (MicroTime, null when
// absent), leaseTransitions. Never strategy or preferredHolder: like client-go's non-coordinated
// elector, a write clears them.
std::string EncodeLeaseSpec(const election::LeaderElectionRecord& record);

// What Lease observers compare (client-go's rawRecord): every field of the spec, times to the
// microsecond. Finer than client-go's whole-second JSON, so it can only make an observer notice a
// change Go would miss and wait longer, never shorter.
std::string LeaseRawRecord(const LeaseSpec& spec);

// A whole Lease object (a GET answer or a watch event's object) as the `leases` lock's Get
// reports it: same record, same raw. A watch feeding the elector must use this, so that its raw
// and Get's agree and an unchanged Lease does not count as a change.
Result<election::LockObservation> LeaseObservation(std::string_view object_json);

// The annotation value, byte for byte as client-go ≤ v0.23 writes it (json.Marshal of
// LeaderElectionRecord without the v0.31 fields): fixed field order, whole-second times, null for
// an absent time, Go's string escaping.
std::string EncodeAnnotationRecord(const election::LeaderElectionRecord& record);

// Reads an annotation value as Go's json.Unmarshal does: unknown fields (strategy,
// preferredHolder, …) are ignored, field names match case-insensitively and the last duplicate
// wins, null leaves a field at its zero value, times may carry a fraction or an offset. A wrong
// type, an empty string or malformed JSON is Invalid. The JSON literal null reads as the zero
// record, as in Go.
Result<election::LeaderElectionRecord> DecodeAnnotationRecord(std::string_view json);

// A JSON string literal (with quotes) escaped as Go's encoding/json does: \" \\ \n \r \t;
// other bytes below 0x20 and < > & as \u00XX (lowercase hex; \b and \f too, as before Go 1.22);
// U+2028/U+2029 as \u2028/\u2029; each byte of invalid UTF-8 as \ufffd; everything else as is.
std::string GoJsonQuote(std::string_view s);

// Moved to base/text.h (the log escaper shares it); kept here for existing callers.
using leasehold::Utf8SequenceLength;

}  // namespace leasehold::locks
