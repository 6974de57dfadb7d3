// GET /metrics in the Prometheus text format 0.0.4, on the local API and on the probe listener.
// L below is {lock_namespace="<ns>",lock_name="<lock>"}: every series of one agent carries the
// same one (never a label named "namespace": the scrape target's own label has that name).
//
//   leader_election_master_status{name="<lock>"}  gauge, 1 while leading (client-go's name)
//   leader_election_slowpath_total{name="<lock>"} counter, renewals that had to GET first
//   leasehold_lock_info{L,lock_type}              gauge, always 1 (lock_type: --lock-type)
//   leasehold_is_leader{L}                        gauge, 1 while this replica may say "you lead"
//   leasehold_observed{L}                         gauge, 1 once the lock was read
//   leasehold_ready{L}                            gauge, what GET /readyz says (1 ready, 0 not)
//   leasehold_lock_held{L}                        gauge, the observed record names a holder (or
//                                                 cannot be read: an unknown holder)
//   leasehold_holder_is_me{L}                     gauge, the observed holder is this replica
//   leasehold_holder_hash{L}                      gauge, FNV-1a 32 of the holder (0: none, or
//                                                 unreadable); replicas that agree show one value
//   leasehold_term{L}                             gauge, the observed transition count
//   leasehold_term_reliable{L}                    gauge, 0 once the term is no fencing token
//   leasehold_leader_transitions_total{L}         counter, acquisitions by this replica
//   leasehold_renew_failures_total{L}             counter, failed renew attempts while leading
//   leasehold_promise_overtaken_total{L}          counter, another holder's acquisition seen
//                                                 while a "yes" of ours still ran (elector.cpp,
//                                                 "Promises overtaken"): a safety violation
//   leasehold_last_renew_timestamp_seconds{L}     gauge, Unix time of the last successful
//                                                 acquire/renew write's answer; 0 = never
//   leasehold_promise_end_timestamp_seconds{L}    gauge, Unix time at which a "yes" given now
//                                                 would end; 0 while not leading (so 0 after a
//                                                 release or a stop)
//   leasehold_lease_duration_seconds{L}, leasehold_renew_deadline_seconds{L},
//   leasehold_retry_period_seconds{L},
//   leasehold_renew_interval_seconds{L}           gauges, the configured timings (the interval
//                                                 as resolved from auto)
//   leasehold_renew_duration_seconds{L}           histogram, successful acquire/renew writes
//   leasehold_api_requests_total{L,verb,code}     counter, Kubernetes API requests; verb one of
//                                                 kVerbs, code one of kCodes ("error": no answer,
//                                                 "other": a status not listed), all pre-set to 0
//   leasehold_watchers{L}                         gauge, open /leader/watch streams
//   leasehold_watch_restarts_total{L,reason}      counter, watches of the lock that started
//                                                 over from its current state instead of the
//                                                 last version seen; reason one of
//                                                 kWatchRestartReasons, each pre-set to 0
//   leasehold_build_info{version}                 gauge, always 1
//
// Every series is present from the first scrape, and the set never grows: a replica renders
// the same number of series whatever happens (label values are fixed at start, except
// holder-free numbers). A scrape takes no lock that the elector or a request takes: it loads
// election::Gauges and this class's own atomics (no scrape can delay a renew, nor a renew a
// scrape).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/status.h"
#include "base/timings.h"
#include "election/elector.h"
#include "election/publisher.h"

namespace leasehold::localapi {

struct MetricsLabels {
  std::string lock_namespace;
  std::string lock_name;
  std::string lock_type;  // as configured (--lock-type), e.g. "auto" or "leases"
  std::string version;
  Timings timings;  // as configured
};

// The election's WriteHook: the publisher's listener hands it every write on the elector's thread,
// and ObserveRenew is atomics only, so a renew never waits for the metrics.
class Metrics final : public election::WriteHook {
 public:
  // Upper bounds of the renew-duration buckets, in seconds (Prometheus' defaults; +Inf added).
  static constexpr std::array<double, 11> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,    2.5,   5,    10};
  // The closed label sets of leasehold_api_requests_total.
  static constexpr std::array<const char*, 6> kVerbs = {"GET",   "POST",  "PUT",
                                                        "PATCH", "WATCH", "OTHER"};
  static constexpr std::array<const char*, 15> kCodes = {"200", "201", "400", "401",   "403",
                                                         "404", "409", "410", "422",   "429",
                                                         "500", "503", "504", "other", "error"};

  // The closed label set of leasehold_watch_restarts_total: cluster::LockWatcher's reasons
  // (cluster/lock_watcher.h, kRestart*): "expired" (410 Gone, the version is too old),
  // "lock_type" (--lock-type=auto switched the object watched).
  static constexpr std::array<const char*, 2> kWatchRestartReasons = {"expired", "lock_type"};

  // `clock` (for "now") must outlive this.
  explicit Metrics(const Clock& clock) : clock_(clock) {}

  // Once, before the first Render() (the lock's namespace may be known only then).
  void SetLabels(MetricsLabels labels) { labels_ = std::move(labels); }

  // A kube::RequestObserver: one Kubernetes API request ended with `http_status` (0 = no
  // answer). Thread-safe, lock-free.
  void ObserveRequest(const std::string& verb, long http_status);
  // One successful acquire or renew write took `latency`. Thread-safe, lock-free.
  void ObserveRenew(Duration latency);
  // election::WriteHook: ObserveRenew.
  void OnWrite(Duration latency) override { ObserveRenew(latency); }
  // A cluster::LockWatcher::RestartObserver: one watch started over for `reason` (one of
  // kWatchRestartReasons; any other is not counted). Thread-safe, lock-free.
  void ObserveWatchRestart(const char* reason);
  // Where leasehold_watchers comes from; unset = 0. Before the first Render().
  void SetWatchers(std::function<int()> watchers) { watchers_ = std::move(watchers); }

  // The exposition, from `g` (the elector's) at this instant. Thread-safe; takes no lock.
  std::string Render(const election::Gauges& g) const;

 private:
  const Clock& clock_;
  MetricsLabels labels_;
  std::function<int()> watchers_;

  std::array<std::array<std::atomic<uint64_t>, kCodes.size()>, kVerbs.size()> requests_{};
  std::array<std::atomic<uint64_t>, kBuckets.size()> bucket_counts_{};  // not cumulative
  std::array<std::atomic<uint64_t>, kWatchRestartReasons.size()> watch_restarts_{};
  std::atomic<uint64_t> renew_count_{0};
  std::atomic<uint64_t> renew_sum_ns_{0};
};

// Escapes a label value for the text format: backslash, double quote and newline.
std::string EscapeLabelValue(const std::string& v);

}  // namespace leasehold::localapi
