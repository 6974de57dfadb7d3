#include "localapi/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "localapi/readiness.h"

namespace leasehold::localapi {
namespace {

// The shortest text that reads back as the same double, in plain notation between 1e-4 and
// 1e21 (as Go's strconv.FormatFloat(v, 'g', -1, 64), which Prometheus clients use): "10",
// "0.005", "0.039581525".
std::string Num(double v) {
  if (v == 0) return "0";
  char buf[64];
  int precision = 1;
  for (; precision < 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  const int exponent = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (exponent >= -4 && exponent < 21) {
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, precision - 1 - exponent), v);
  } else {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
  }
  return buf;
}

void Family(std::string& out, const char* name, const char* type, const char* help) {
  out += "# HELP ";
  out += name;
  out += ' ';
  out += help;
  out += "\n# TYPE ";
  out += name;
  out += ' ';
  out += type;
  out += '\n';
}

}  // namespace

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  for (const char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

size_t VerbIndex(const std::string& verb) {
  for (size_t i = 0; i + 1 < Metrics::kVerbs.size(); ++i) {
    if (verb == Metrics::kVerbs[i]) return i;
  }
  return Metrics::kVerbs.size() - 1;  // "OTHER"
}

size_t CodeIndex(long http_status) {
  if (http_status <= 0) return Metrics::kCodes.size() - 1;  // "error"
  const std::string code = std::to_string(http_status);
  for (size_t i = 0; i + 2 < Metrics::kCodes.size(); ++i) {
    if (code == Metrics::kCodes[i]) return i;
  }
  return Metrics::kCodes.size() - 2;  // "other"
}

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

// Unix seconds of a monotonic instant given in nanoseconds (Gauges), 0 for 0.
double UnixSeconds(const Clock& clock, int64_t mono_ns) {
  if (mono_ns == 0) return 0;
  const SysTime t = ToSystem(clock, MonoTime(Duration(mono_ns)));
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

void Metrics::ObserveRequest(const std::string& verb, long http_status) {
  requests_[VerbIndex(verb)][CodeIndex(http_status)].fetch_add(1, std::memory_order_relaxed);
}

void Metrics::ObserveWatchRestart(const char* reason) {
  for (size_t i = 0; i < kWatchRestartReasons.size(); ++i) {
    if (std::string_view(reason) == kWatchRestartReasons[i]) {
      watch_restarts_[i].fetch_add(1, std::memory_order_relaxed);
    }
  }
}

void Metrics::ObserveRenew(Duration latency) {
  const double seconds = Seconds(latency);
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      bucket_counts_[i].fetch_add(1, std::memory_order_relaxed);
      break;
    }
  }
  renew_sum_ns_.fetch_add(static_cast<uint64_t>(std::max<int64_t>(latency.count(), 0)),
                          std::memory_order_relaxed);
  // Last: a scrape that sees this count sees a bucket for it too (or a later one).
  renew_count_.fetch_add(1, std::memory_order_release);
}

std::string Metrics::Render(const election::Gauges& g) const {
  const std::string l = "lock_namespace=\"" + EscapeLabelValue(labels_.lock_namespace) +
                        "\",lock_name=\"" + EscapeLabelValue(labels_.lock_name) + "\"";
  const std::string braced = "{" + l + "}";
  const MonoTime now = clock_.MonotonicNow();
  const int64_t now_ns = std::chrono::duration_cast<Duration>(now.time_since_epoch()).count();
  const int64_t leader_until = g.leader_until_ns.load();
  const bool leading = leader_until != 0 && now_ns < leader_until;
  const char* leading_text = leading ? "1" : "0";
  std::string out;
  auto gauge = [&](const char* name, const char* type, const char* help, const std::string& v) {
    Family(out, name, type, help);
    out += name;
    out += braced;
    out += ' ';
    out += v;
    out += '\n';
  };
  auto flag = [](bool b) { return std::string(b ? "1" : "0"); };

  const std::string name = "{name=\"" + EscapeLabelValue(labels_.lock_name) + "\"}";
  Family(out, "leader_election_master_status", "gauge",
         "Whether this replica leads the lock named by name (1) or not (0).");
  out += "leader_election_master_status" + name + " " + leading_text + "\n";
  Family(out, "leader_election_slowpath_total", "counter",
         "Renewals that had to read the lock before writing it.");
  out += "leader_election_slowpath_total" + name + " " + std::to_string(g.slowpath_total.load()) +
         "\n";
  Family(out, "leasehold_lock_info", "gauge", "Always 1; the lock in the labels.");
  out += "leasehold_lock_info{" + l + ",lock_type=\"" + EscapeLabelValue(labels_.lock_type) +
         "\"} 1\n";
  gauge("leasehold_is_leader", "gauge", "Whether this replica leads (1) or not (0).", leading_text);
  gauge("leasehold_observed", "gauge", "Whether the lock was read at least once.",
        flag(g.observed.load()));
  gauge("leasehold_ready", "gauge", "What GET /readyz says: 1 ready, 0 not ready.",
        flag(ReadyFor(g.observed.load(), static_cast<Code>(g.last_error.load()))));
  gauge("leasehold_lock_held", "gauge",
        "Whether the observed record names a holder (or cannot be read: an unknown holder).",
        flag(g.held.load()));
  gauge("leasehold_holder_is_me", "gauge", "Whether the observed holder is this replica.",
        flag(g.holder_is_me.load()));
  gauge("leasehold_holder_hash", "gauge",
        "FNV-1a (32 bits) of the observed holder's identity; 0 when none is named.",
        std::to_string(g.holder_hash.load()));
  gauge("leasehold_term", "gauge", "The lock's transition count as this replica observes it.",
        std::to_string(g.term.load()));
  gauge("leasehold_term_reliable", "gauge",
        "0 once a writer was seen that does not keep the transition count (no fencing token).",
        flag(g.term_reliable.load()));
  gauge("leasehold_leader_transitions_total", "counter", "Times this replica became leader.",
        std::to_string(g.acquired_total.load()));
  gauge("leasehold_renew_failures_total", "counter",
        "Renew attempts that failed while this replica led.",
        std::to_string(g.renew_failures_total.load()));
  gauge("leasehold_promise_overtaken_total", "counter",
        "Another holder's acquisition observed while a \"you lead\" of this replica still ran.",
        std::to_string(g.promise_overtaken_total.load()));
  gauge("leasehold_last_renew_timestamp_seconds", "gauge",
        "Unix time of this replica's last successful acquire or renew write; 0 = never.",
        Num(UnixSeconds(clock_, g.last_renew_ns.load())));
  gauge("leasehold_promise_end_timestamp_seconds", "gauge",
        "Unix time at which a \"you lead\" given now would end; 0 while not leading.",
        Num(leading ? UnixSeconds(clock_, leader_until) : 0));
  gauge("leasehold_lease_duration_seconds", "gauge", "The configured --lease-duration.",
        Num(Seconds(labels_.timings.lease_duration)));
  gauge("leasehold_renew_deadline_seconds", "gauge", "The configured --renew-deadline.",
        Num(Seconds(labels_.timings.renew_deadline)));
  gauge("leasehold_retry_period_seconds", "gauge", "The configured --retry-period.",
        Num(Seconds(labels_.timings.retry_period)));
  gauge("leasehold_renew_interval_seconds", "gauge",
        "The pause after a successful renew (--renew-interval, auto resolved).",
        Num(Seconds(labels_.timings.renew_interval)));

  Family(out, "leasehold_renew_duration_seconds", "histogram",
         "Latency of successful acquire and renew writes of the lock, in seconds.");
  const uint64_t count = renew_count_.load(std::memory_order_acquire);
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    cumulative += bucket_counts_[i].load(std::memory_order_relaxed);
    out += "leasehold_renew_duration_seconds_bucket{" + l + ",le=\"" + Num(kBuckets[i]) + "\"} " +
           std::to_string(std::min(cumulative, count)) + "\n";
  }
  out += "leasehold_renew_duration_seconds_bucket{" + l + ",le=\"+Inf\"} " + std::to_string(count) +
         "\n";
  out += "leasehold_renew_duration_seconds_sum" + braced + " " +
         Num(static_cast<double>(renew_sum_ns_.load(std::memory_order_relaxed)) / 1e9) + "\n";
  out += "leasehold_renew_duration_seconds_count" + braced + " " + std::to_string(count) + "\n";
  Family(out, "leasehold_api_requests_total", "counter",
         "Kubernetes API requests by verb and HTTP status (code \"error\": no answer; \"other\": "
         "a status not listed).");
  for (size_t v = 0; v < kVerbs.size(); ++v) {
    for (size_t c = 0; c < kCodes.size(); ++c) {
      out += std::string("leasehold_api_requests_total{") + l + ",verb=\"" + kVerbs[v] +
             "\",code=\"" + kCodes[c] + "\"} " +
             std::to_string(requests_[v][c].load(std::memory_order_relaxed)) + "\n";
    }
  }
  gauge("leasehold_watchers", "gauge", "Open GET /leader/watch streams.",
        std::to_string(watchers_ ? watchers_() : 0));
  Family(out, "leasehold_watch_restarts_total", "counter",
         "Watches of the lock that started over from its current state (reason \"expired\": 410 "
         "Gone, the last version seen is too old; \"lock_type\": --lock-type=auto switched).");
  for (size_t r = 0; r < kWatchRestartReasons.size(); ++r) {
    out += std::string("leasehold_watch_restarts_total{") + l + ",reason=\"" +
           kWatchRestartReasons[r] + "\"} " +
           std::to_string(watch_restarts_[r].load(std::memory_order_relaxed)) + "\n";
  }
  Family(out, "leasehold_build_info", "gauge", "Always 1; the version is in the label.");
  out += "leasehold_build_info{version=\"" + EscapeLabelValue(labels_.version) + "\"} 1\n";
  return out;
}

}  // namespace leasehold::localapi
