#include "election/config.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "base/duration.h"

namespace leasehold::election {
namespace {

// Durations in messages are shown in Go syntax, as the user may have typed them: 15s, 1.5s,
// 500ms, 1m30s (base/duration.h, the one formatter).
std::string Fmt(Duration d) { return FormatGoDuration(d); }

// "1.2": kJitterFactor as messages show it.
std::string JitterText() {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", kJitterFactor);
  return buf;
}

}  // namespace

const char* ReleaseModeName(ReleaseMode mode) {
  switch (mode) {
    case ReleaseMode::kSafe:
      return "safe";
    case ReleaseMode::kImmediate:
      return "immediate";
    case ReleaseMode::kOff:
      return "off";
  }
  return "?";
}

const char* PreferredHolderRuleName(PreferredHolderRule rule) {
  return rule == PreferredHolderRule::kYield ? "yield" : "keep";
}

Duration AutoRenewInterval(Duration renew_deadline, Duration retry_period) {
  const Duration room = renew_deadline - retry_period - kAutoRenewAttemptRoom - kRenewAttemptRoom;
  return std::max(retry_period, std::min(3 * retry_period, room));
}

int ElectionConfig::lease_duration_seconds() const {
  return static_cast<int>(
      std::chrono::duration_cast<std::chrono::seconds>(timings_.lease_duration).count());
}

Status ElectionConfig::CheckFloors(const Timings& t) {
  auto below = [](const char* flag, Duration got, Duration floor, const char* why) {
    return Status(Code::kBadConfig, std::string(flag) + " (" + Fmt(got) + ") must be at least " +
                                        Fmt(floor) + ": " + why);
  };
  if (t.retry_period < kMinRetryPeriod) {
    return below("--retry-period", t.retry_period, kMinRetryPeriod,
                 "records and client-go keep whole seconds, so renews less than a second apart "
                 "can look the same to rivals, which then keep the older observation");
  }
  if (t.renew_deadline < kMinRenewDeadline) {
    return below("--renew-deadline", t.renew_deadline, kMinRenewDeadline,
                 "two renew attempts with the shortest request timeout (1s) must fit, so one "
                 "lost request does not make the leader step down");
  }
  if (t.lease_duration < kMinLeaseDuration) {
    return below("--lease-duration", t.lease_duration, kMinLeaseDuration,
                 "the renew-deadline floor (2s) plus the 1s margin for latency and clock drift");
  }
  return Status::Ok();
}

Result<ElectionConfig> ElectionConfig::Create(std::string identity, Timings t, ReleaseMode mode,
                                              Duration release_holdoff) {
  using std::chrono::seconds;
  auto invalid = [](std::string m) { return Status(Code::kBadConfig, std::move(m)); };
  if (identity.empty()) return invalid("--identity must not be empty");
  if (t.retry_period <= Duration::zero()) {
    return invalid("--retry-period must be greater than 0 (e.g. 2s)");
  }
  if (t.renew_deadline <= Duration::zero()) {
    return invalid("--renew-deadline must be greater than 0 (e.g. 10s)");
  }
  if (t.lease_duration < seconds(1) || t.lease_duration % seconds(1) != Duration::zero()) {
    return invalid("--lease-duration must be a whole number of seconds, at least 1s (got " +
                   Fmt(t.lease_duration) + "): the lock stores whole seconds");
  }
  if (t.lease_duration <= t.renew_deadline) {
    return invalid("--lease-duration (" + Fmt(t.lease_duration) +
                   ") must be greater than --renew-deadline (" + Fmt(t.renew_deadline) + ")");
  }
  // Compared in nanoseconds as client-go does: renewDeadline > JitterFactor * retryPeriod.
  if (static_cast<double>(t.renew_deadline.count()) <=
      kJitterFactor * static_cast<double>(t.retry_period.count())) {
    return invalid("--renew-deadline (" + Fmt(t.renew_deadline) + ") must be greater than " +
                   JitterText() + " x --retry-period (" + Fmt(t.retry_period) + ")");
  }
  if (t.lease_duration - t.renew_deadline < seconds(1)) {
    return invalid("--lease-duration (" + Fmt(t.lease_duration) +
                   ") must exceed --renew-deadline (" + Fmt(t.renew_deadline) +
                   ") by at least 1s: the margin for request latency and clock-rate drift");
  }
  // Liveness, not safety: a "yes" ends renew-deadline after the last successful write was sent
  // whenever the next renew comes, and rivals count lease-duration from the last change they saw.
  // The interval decides whether a leader keeps the lock through a failed or hung renew.
  if (t.renew_interval < Duration::zero()) {
    return invalid("--renew-interval must not be negative (e.g. 5s, or auto)");
  }
  if (t.renew_interval == Duration::zero()) {
    t.renew_interval = AutoRenewInterval(t.renew_deadline, t.retry_period);
  } else if (t.renew_interval < t.retry_period) {
    // Renews closer together than retry-period (at least 1s, CheckFloors) could fall within one
    // whole second, which rivals that see records to the second cannot tell apart.
    return invalid("--renew-interval (" + Fmt(t.renew_interval) +
                   ") must be at least --retry-period (" + Fmt(t.retry_period) + ")");
  } else if (t.renew_interval > t.retry_period) {
    const Duration most = t.renew_deadline - t.retry_period - 2 * kRenewAttemptRoom;
    if (t.renew_interval > most) {
      return invalid("--renew-interval (" + Fmt(t.renew_interval) + ") must be at most " +
                     "--renew-deadline - --retry-period - " + Fmt(2 * kRenewAttemptRoom) + " (" +
                     Fmt(std::max(most, Duration::zero())) + ") or equal to --retry-period (" +
                     Fmt(t.retry_period) + "): a renew that hangs and one retry must fit " +
                     "before the claim ends");
    }
  }
  if (release_holdoff < Duration::zero()) {
    return invalid("--release-holdoff must not be negative");
  }
  ElectionConfig c;
  c.identity_ = std::move(identity);
  c.timings_ = t;
  c.release_mode_ = mode;
  c.release_holdoff_ = release_holdoff;
  return c;
}

}  // namespace leasehold::election
