// Election settings, validated once: an ElectionConfig is valid or does not exist.
#pragma once

#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "base/timings.h"

namespace leasehold::election {

// What happens to the lock when the process is told to stop (SIGTERM/SIGINT).
enum class ReleaseMode {
  // Release only after every "yes" already given has expired (at most renew-deadline), or at once
  // when the main container acknowledges with POST /release. For classic sidecar containers,
  // which get SIGTERM at the same moment as the main container.
  kSafe,
  // Release at once. For native sidecars, which the kubelet stops after the main container.
  kImmediate,
  // Never release; rivals take over when the lease expires.
  kOff,
};

const char* ReleaseModeName(ReleaseMode mode);

// What this replica makes of a Lease whose spec.preferredHolder (coordinated leader election)
// names another candidate (--preferred-holder). Either way a renew writes the field back as read.
enum class PreferredHolderRule {
  // Elect as client-go's plain elector does: the field changes nothing.
  kKeep,
  // As client-go's coordinated elector: a leader stops renewing (its term ends with its last
  // claim), and a candidate lets the preferred one go first (elector.cpp, "Coordinated leader
  // election").
  kYield,
};

// "keep", "yield": the one spelling of --preferred-holder's values.
const char* PreferredHolderRuleName(PreferredHolderRule rule);

// client-go's JitterFactor (wait.JitterUntil in its acquire loop): a candidate waits
// retry-period × (1 + rand × kJitterFactor) between attempts, and renew-deadline must exceed
// retry-period × kJitterFactor. The one spelling of it; model/leasehold.pml mirrors it in ticks.
inline constexpr double kJitterFactor = 1.2;

// The least time the renew-interval rule (ElectionConfig::Create) leaves each of two renew
// attempts within one renew-deadline: the attempt due at the interval, cut early enough that one
// retry a retry-period later still has this much before the claim ends
// (Elector::StepCandidateOrLeader). Equal to the request timeout's floor (app.cpp): below it a
// healthy but busy API server would time out.
inline constexpr Duration kRenewAttemptRoom = std::chrono::seconds(1);
// What the auto interval leaves, at the least, for the attempt due at the interval: 0.5s more
// than kRenewAttemptRoom, so that at the defaults a renew answered within the request timeout's
// floor refreshes validUntil while it still lies more than the gate's default stop-grace plus
// margin (3.25s) ahead.
inline constexpr Duration kAutoRenewAttemptRoom = std::chrono::milliseconds(1500);

// --renew-interval=auto: 3 × retry-period (a third of the writes of renewing every
// retry-period), capped so that the attempt due at the interval gets kAutoRenewAttemptRoom and
// one retry kRenewAttemptRoom within renew-deadline, and never below retry-period. 5.5s at the
// defaults (15s/10s/2s); retry-period, as before, at short timings such as 4s/3s/1s.
Duration AutoRenewInterval(Duration renew_deadline, Duration retry_period);

// The product's lower bounds. ParseCommandLine (the only way the binary builds an
// ElectionConfig) applies them through CheckFloors; Create does not, so unit tests on a FakeClock
// and component tests on real time may use shorter periods to run fast.
//
// retry-period >= 1s: annotation records (ConfigMap/Endpoints) store whole seconds, and so does
//   client-go's view of any record, so two renews within one second can write bytes that rivals
//   cannot tell apart; they keep the older observation and the 1s margin of the invariant is used
//   up. It also bounds the load: at most one write per second per agent (1ns drove ~45 req/s).
// renew-deadline >= 2s: room for two attempts of the shortest request timeout
//   (max(renew-deadline / 2, 1s)), so one lost request does not make the leader step down.
// lease-duration >= 3s: renew-deadline's floor plus the 1s margin Create requires.
inline constexpr Duration kMinRetryPeriod = std::chrono::seconds(1);
inline constexpr Duration kMinRenewDeadline = std::chrono::seconds(2);
inline constexpr Duration kMinLeaseDuration = std::chrono::seconds(3);

// After POST /release without SIGTERM, how long to stay out of the election (--release-holdoff).
inline constexpr Duration kDefaultReleaseHoldoff = std::chrono::seconds(30);

class ElectionConfig {
 public:
  // kBadConfig naming the flag, the floor and the reason when a timing is below the product's
  // lower bound (kMin* above); OK otherwise. Independent of Create's rules.
  static Status CheckFloors(const Timings& timings);

  // Validates: lease-duration > renew-deadline > 1.2 × retry-period > 0; lease-duration is a
  // whole number of seconds ≥ 1; lease-duration − renew-deadline ≥ 1s (the margin that absorbs
  // request latency, clock-rate drift and client-go's one-second view of renewTime); a
  // renew-interval other than auto is at least retry-period and, when longer, at most
  // renew-deadline − retry-period − 2 × kRenewAttemptRoom (liveness, docs/safety.md). Messages
  // name the flags.
  static Result<ElectionConfig> Create(std::string identity, Timings timings, ReleaseMode mode,
                                       Duration release_holdoff);

  const std::string& identity() const { return identity_; }
  const Timings& timings() const { return timings_; }
  Duration lease_duration() const { return timings_.lease_duration; }
  Duration renew_deadline() const { return timings_.renew_deadline; }
  Duration retry_period() const { return timings_.retry_period; }
  // The interval in use: the one given, or AutoRenewInterval for zero (auto).
  Duration renew_interval() const { return timings_.renew_interval; }
  int lease_duration_seconds() const;
  ReleaseMode release_mode() const { return release_mode_; }
  // After POST /release without SIGTERM, how long to stay out of the election.
  Duration release_holdoff() const { return release_holdoff_; }
  PreferredHolderRule preferred_holder_rule() const { return preferred_holder_rule_; }
  // Needs no validation: every rule is valid with every timing.
  void set_preferred_holder_rule(PreferredHolderRule rule) { preferred_holder_rule_ = rule; }

 private:
  ElectionConfig() = default;
  std::string identity_;
  Timings timings_;
  ReleaseMode release_mode_ = ReleaseMode::kSafe;
  Duration release_holdoff_ = kDefaultReleaseHoldoff;
  PreferredHolderRule preferred_holder_rule_ = PreferredHolderRule::kKeep;
};

}  // namespace leasehold::election
