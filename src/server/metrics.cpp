#include "server/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace leasehold::server {
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

Metrics::Metrics(std::string lock_name, std::string version, const Clock& clock)
    : lock_name_(std::move(lock_name)), version_(std::move(version)), clock_(clock) {}

void Metrics::ObserveRequest(const std::string& verb, long http_status) {
  const std::string code = http_status > 0 ? std::to_string(http_status) : "error";
  std::lock_guard<std::mutex> l(mu_);
  ++requests_[{verb, code}];
}

void Metrics::ObserveRenew(Duration latency) {
  const double seconds = std::chrono::duration<double>(latency).count();
  std::lock_guard<std::mutex> l(mu_);
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      ++bucket_counts_[i];
      break;
    }
  }
  ++renew_count_;
  renew_sum_ += seconds;
}

std::string Metrics::Render(const election::Snapshot& s) const {
  const std::string name = "{name=\"" + EscapeLabelValue(lock_name_) + "\"}";
  const char* leading = s.is_leader ? "1" : "0";
  std::string out;
  Family(out, "leader_election_master_status", "gauge",
         "Whether this replica leads the lock named by name (1) or not (0).");
  out += "leader_election_master_status" + name + " " + leading + "\n";
  Family(out, "leader_election_slowpath_total", "counter",
         "Renewals that had to read the lock before writing it.");
  out += "leader_election_slowpath_total" + name + " " + std::to_string(s.slowpath_total) + "\n";
  Family(out, "leasehold_is_leader", "gauge", "Whether this replica leads (1) or not (0).");
  out += std::string("leasehold_is_leader ") + leading + "\n";
  Family(out, "leasehold_leader_transitions_total", "counter", "Times this replica became leader.");
  out += "leasehold_leader_transitions_total " + std::to_string(s.acquired_total) + "\n";
  Family(out, "leasehold_last_renew_age_seconds", "gauge",
         "Seconds since this replica's last successful acquire or renew write.");
  if (s.last_renew_at) {
    const double age =
        std::chrono::duration<double>(clock_.MonotonicNow() - *s.last_renew_at).count();
    out += "leasehold_last_renew_age_seconds " + Num(age < 0 ? 0 : age) + "\n";
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    Family(out, "leasehold_renew_duration_seconds", "histogram",
           "Latency of successful acquire and renew writes of the lock, in seconds.");
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += bucket_counts_[i];
      out += "leasehold_renew_duration_seconds_bucket{le=\"" + Num(kBuckets[i]) + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += "leasehold_renew_duration_seconds_bucket{le=\"+Inf\"} " + std::to_string(renew_count_) +
           "\n";
    out += "leasehold_renew_duration_seconds_sum " + Num(renew_sum_) + "\n";
    out += "leasehold_renew_duration_seconds_count " + std::to_string(renew_count_) + "\n";
    Family(out, "leasehold_api_requests_total", "counter",
           "Kubernetes API requests by verb and HTTP status (code \"error\": no answer).");
    for (const auto& [key, count] : requests_) {
      out += "leasehold_api_requests_total{verb=\"" + EscapeLabelValue(key.first) + "\",code=\"" +
             EscapeLabelValue(key.second) + "\"} " + std::to_string(count) + "\n";
    }
  }
  Family(out, "leasehold_watchers", "gauge", "Open GET /leader/watch streams.");
  out += "leasehold_watchers " + std::to_string(watchers_ ? watchers_() : 0) + "\n";
  Family(out, "leasehold_build_info", "gauge", "Always 1; the version is in the label.");
  out += "leasehold_build_info{version=\"" + EscapeLabelValue(version_) + "\"} 1\n";
  return out;
}

}  // namespace leasehold::server
