// GET /metrics in the Prometheus text format 0.0.4.
//
//   leader_election_master_status{name="<lock>"}     gauge, 1 while leading (client-go's name)
//   leader_election_slowpath_total{name="<lock>"}    counter, renewals that had to GET first
//   leasehold_is_leader                              gauge, 1 while leading
//   leasehold_leader_transitions_total               counter, acquisitions by this replica
//   leasehold_renew_duration_seconds                 histogram, successful acquire/renew writes
//   leasehold_last_renew_age_seconds                 gauge, since the last successful write
//                                                    (absent until this replica first wrote)
//   leasehold_api_requests_total{verb,code}          counter, Kubernetes API requests by HTTP
//                                                    status; code "error" when no answer came
//   leasehold_watchers                               gauge, open /leader/watch streams
//   leasehold_build_info{version}                    gauge, always 1
//
// Gauges are computed at scrape time from a peeked snapshot (no promise is recorded).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "base/clock.h"
#include "election/elector.h"

namespace leasehold::server {

class Metrics {
 public:
  // Upper bounds of the renew-duration buckets, in seconds (Prometheus' defaults; +Inf added).
  static constexpr std::array<double, 11> kBuckets = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                      0.5,   1,    2.5,   5,    10};

  // `lock_name` labels client-go's series; `clock` (for the renew age) must outlive this.
  Metrics(std::string lock_name, std::string version, const Clock& clock);

  // A kube::RequestObserver: one Kubernetes API request ended with `http_status` (0 = no
  // answer). Thread-safe.
  void ObserveRequest(const std::string& verb, long http_status);
  // One successful acquire or renew write took `latency`. Thread-safe.
  void ObserveRenew(Duration latency);
  // Where leasehold_watchers comes from; unset = 0. Before the first Render().
  void SetWatchers(std::function<int()> watchers) { watchers_ = std::move(watchers); }

  // The exposition for `s` (peeked for this scrape). Thread-safe.
  std::string Render(const election::Snapshot& s) const;

 private:
  const std::string lock_name_;
  const std::string version_;
  const Clock& clock_;
  std::function<int()> watchers_;

  mutable std::mutex mu_;                                             // guards the fields below
  std::map<std::pair<std::string, std::string>, uint64_t> requests_;  // (verb, code) → count
  std::array<uint64_t, kBuckets.size()> bucket_counts_{};             // not cumulative
  uint64_t renew_count_ = 0;
  double renew_sum_ = 0;
};

// Escapes a label value for the text format: backslash, double quote and newline.
std::string EscapeLabelValue(const std::string& v);

}  // namespace leasehold::server
