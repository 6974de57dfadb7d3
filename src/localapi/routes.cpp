#include "localapi/routes.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace leasehold::localapi {
namespace {

bool HasMetrics(const HandlerOptions& o) { return static_cast<bool>(o.metrics); }

// clang-format off
// The one route table (routes.h). A row's columns: path, methods, shown on the probe listener,
// promise, reads a snapshot, handler, enabled, alias, --help text.
const std::vector<Route> kRoutes = {
    {"/leader", Methods::kGet, /*on_probe=*/false, Promise::kAnswer, /*reads_snapshot=*/true,
     LeaderRoute, nullptr, /*alias=*/false,
     "JSON: name/leader (holder), identity, isLeader, term, lock, acquireTime,\n"
     "renewTime, leaseDurationSeconds, and while leading validForMs, validUntil"},
    {"/", Methods::kGet, /*on_probe=*/false, Promise::kAnswer, /*reads_snapshot=*/true,
     LeaderRoute, nullptr, /*alias=*/true, nullptr},
    {"/is-leader", Methods::kGet, /*on_probe=*/true, Promise::kAnswer, /*reads_snapshot=*/true,
     IsLeaderRoute, nullptr, /*alias=*/false,
     "200 \"true\" or 503 \"false\", e.g. curl -sf localhost:4040/is-leader && ..."},
    {"/leader/watch", Methods::kGet, /*on_probe=*/false, Promise::kStream, /*reads_snapshot=*/true,
     WatchRoute, nullptr, /*alias=*/false,
     "Server-Sent Events: the /leader JSON now, then on every change and renew"},
    {"/release", Methods::kPost, /*on_probe=*/false, Promise::kNone, /*reads_snapshot=*/true,
     ReleaseRoute, nullptr, /*alias=*/false,
     "the main container has stopped leading work: release now"},
    {"/healthz", Methods::kGet, /*on_probe=*/true, Promise::kNone, /*reads_snapshot=*/true,
     HealthzRoute, nullptr, /*alias=*/false, "liveness and readiness probes"},
    {"/readyz", Methods::kGet, /*on_probe=*/true, Promise::kNone, /*reads_snapshot=*/true,
     ReadyzRoute, nullptr, /*alias=*/false, nullptr},
    {"/metrics", Methods::kGet, /*on_probe=*/true, Promise::kNone, /*reads_snapshot=*/false,
     MetricsRoute, HasMetrics, /*alias=*/false, "Prometheus text format"},
};
// clang-format on

}  // namespace

const std::vector<Route>& Routes() { return kRoutes; }

const Route* FindRoute(const std::string& path) {
  for (const Route& route : kRoutes) {
    if (path == route.path) return &route;
  }
  return nullptr;
}

bool Shown(const Route& route, const HandlerOptions& options) {
  // The probe listener is reachable from the pod network: nothing that reveals more than a
  // probe or a scrape needs, and no way to release the lock.
  if (options.probe_only && !route.on_probe) return false;
  return route.enabled == nullptr || route.enabled(options);
}

std::string EndpointList(bool probe_only) {
  std::string out;
  for (const Route& route : kRoutes) {
    if (route.alias || (probe_only && !route.on_probe)) continue;
    if (!out.empty()) out += ", ";
    out += route.path;
  }
  return out;
}

std::string ProbeEndpoints() {
  std::string list = EndpointList(/*probe_only=*/true);
  const size_t last = list.rfind(", ");
  if (last != std::string::npos) list.replace(last, 2, " and ");
  return list;
}

std::string RoutesHelp() {
  // Each line's label: its route's path ("POST " first for a POST route), then the paths of the
  // rows after it that have no text of their own.
  std::vector<std::pair<std::string, std::string>> lines;
  for (const Route& route : kRoutes) {
    const std::string path =
        std::string(route.methods == Methods::kPost ? "POST " : "") + route.path;
    if (route.help == nullptr && !lines.empty()) {
      lines.back().first += (route.alias ? ", " : " ") + path;
    } else {
      lines.emplace_back(path, route.help == nullptr ? "" : route.help);
    }
  }
  size_t width = 0;
  for (const auto& [label, text] : lines) width = std::max(width, label.size());
  std::string out;
  for (const auto& [label, text] : lines) {
    std::string line = "  " + label + std::string(width - label.size() + 2, ' ');
    for (char c : text) {
      if (c == '\n') {
        out += line + '\n';
        line = std::string(width + 4, ' ');
      } else {
        line += c;
      }
    }
    out += line + '\n';
  }
  return out;
}

}  // namespace leasehold::localapi
