// The /leader contract between two processes: the sidecar writes it (GET /leader, the data of
// every GET /leader/watch event, the --status-file content), and `leasehold gate` and any main
// container read it. One home for its keys, their order and their meaning: the sidecar encodes
// with EncodeLeader, the gate parses with ParseLeader, and test/golden/leader/ pins the bytes
// (captured before this file existed), so that a key renamed on both sides still fails.
//
//   {"name":"pod-a_1a2b3c4d","leader":"pod-a_1a2b3c4d","identity":"pod-a_1a2b3c4d",
//    "isLeader":true,"term":4,"termReliable":true,
//    "lock":{"type":"leases","namespace":"default","name":"my-lock"},
//    "acquireTime":"2026-...Z","renewTime":"2026-...Z","leaseDurationSeconds":15,
//    "validForMs":9876,"validUntil":"2026-...Z",
//    "timings":{"leaseDurationMs":15000,"renewDeadlineMs":10000,"retryPeriodMs":2000,
//               "renewIntervalMs":5500}}
//
// Depends on base only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "base/timings.h"

namespace leasehold::contract {

// One /leader object, key by key, in the order written.
struct LeaderDoc {
  // "name": the holder ("" when none, or unknown). First: the classic leader-elector image
  // answered {"name": "<holder>"}.
  std::string name;
  // "leader": the holder, or null (nullopt) for a record this replica cannot read: the lock is
  // held, by someone unknown.
  std::optional<std::string> leader;
  std::string identity;    // "identity": this replica's
  bool is_leader = false;  // "isLeader"; a reader without it has no answer
  int64_t term = 0;        // "term": the lock's leaderTransitions
  // "termReliable": false once a writer was seen that does not keep the transition count (the
  // term is then no fencing token; docs/migration.md#foreign-records-and-mixed-fleets). Read as
  // false when absent or not a bool: an older sidecar's term is not trusted.
  bool term_reliable = false;
  std::string term_reason;  // "termReason": written only when !term_reliable
  struct Lock {
    std::string type;  // "auto", "none", "leases", "configmaps", ... (the wire strings)
    std::string name_space;
    std::string name;
  } lock;                               // "lock": {"type", "namespace", "name"}
  std::optional<SysTime> acquire_time;  // "acquireTime": RFC 3339 UTC, millis, or null
  std::optional<SysTime> renew_time;    // "renewTime": the same
  int lease_duration_seconds = 0;       // "leaseDurationSeconds": the record's
  // While leading only: "validForMs" (rounded down from the moment of writing) and "validUntil"
  // (RFC 3339 UTC, millis). Written when valid_until is set; a reader treats a validUntil that
  // does not parse as absent, so a "yes" without one is no yes.
  int64_t valid_for_ms = 0;
  std::optional<SysTime> valid_until;
  // "timings": the sidecar's configured timings, {"leaseDurationMs", "renewDeadlineMs",
  // "retryPeriodMs", "renewIntervalMs"}, so that the gate can check its --stop-grace. Only
  // GET /leader carries them, and only when the sidecar knows the first three;
  // "renewIntervalMs" (the interval in use, --renew-interval resolved) is written when
  // renew_interval is positive and read when present: zero means an older sidecar, which
  // renews every retry-period.
  std::optional<Timings> timings;
  std::optional<std::string> reason;  // "reason": why the answer is a 503, or opaque
};

// The JSON of `d`, without a trailing newline: on one line, or indented by two spaces (`pretty`,
// GET /leader?pretty). Keys come in LeaderDoc's order.
std::string EncodeLeader(const LeaderDoc& d, bool pretty = false);

// One /leader object. kMalformed when it is not a JSON object or isLeader is missing or not a
// bool; every other key is optional, and a key of the wrong type counts as absent (termReliable
// then false, validUntil then none, timings none unless all three are whole non-negative ms).
Result<LeaderDoc> ParseLeader(std::string_view json);

// "2026-01-02T03:04:05.123Z" (any number of fractional digits, or none; UTC "Z" only, as the
// sidecar writes it). kMalformed otherwise.
Result<SysTime> ParseRfc3339Utc(std::string_view s);

}  // namespace leasehold::contract
