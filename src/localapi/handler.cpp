#include "localapi/handler.h"

#include <rapidjson/prettywriter.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/rfc3339.h"
#include "contract/leader.h"
#include "localapi/metrics.h"
#include "localapi/routes.h"

namespace leasehold::localapi {
namespace {

using election::Phase;
using election::Snapshot;

constexpr const char* kJson = "application/json";
constexpr const char* kText = "text/plain; charset=utf-8";
constexpr const char* kGetAllow = "GET, HEAD";
constexpr const char* kPostAllow = "POST";
constexpr const char* kMetricsType = "text/plain; version=0.0.4; charset=utf-8";

bool WantsPretty(const HttpQuery& q) {
  const auto it = q.params.find("pretty");
  return it != q.params.end() && it->second != "0" && it->second != "false";
}

// Request text echoed into JSON is cut down to printable ASCII: the path arrives decoded and
// may hold any byte, and the writer does not check that strings are valid UTF-8.
std::string Printable(const std::string& s) {
  std::string out = s.substr(0, 200);
  for (char& c : out) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return out;
}

template <typename W>
void Str(W& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

template <typename Fn>
HttpAnswer Json(int status, bool pretty, Fn&& fill) {
  rapidjson::StringBuffer buf;
  if (pretty) {
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.SetIndent(' ', 2);
    fill(w);
  } else {
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    fill(w);
  }
  HttpAnswer a;
  a.status = status;
  a.content_type = kJson;
  a.body.assign(buf.GetString(), buf.GetSize());
  a.body += '\n';
  return a;
}

HttpAnswer Text(int status, std::string body) {
  HttpAnswer a;
  a.status = status;
  a.content_type = kText;
  a.body = std::move(body);
  return a;
}

HttpAnswer Error(int status, const HttpQuery& q, const std::string& message) {
  return Json(status, WantsPretty(q), [&](auto& w) {
    w.StartObject();
    w.Key("error");
    Str(w, message);
    w.EndObject();
  });
}

HttpAnswer NotAllowed(const HttpQuery& q, const char* allow) {
  HttpAnswer a = Error(405, q,
                       Printable(q.method) + " is not allowed on " + Printable(q.path) +
                           " (allowed: " + allow + ")");
  a.headers.emplace_back("Allow", allow);
  return a;
}

std::string NotObservedReason(const Snapshot& s) {
  std::string r = "the lock has not been read yet";
  if (!s.last_error.ok()) r += " (last error: " + s.last_error.ToString() + ")";
  return r;
}

HttpAnswer Leader(const Snapshot& s, const Clock& clock, bool pretty,
                  const HandlerOptions* options = nullptr) {
  HttpAnswer a;
  a.status = s.observed ? 200 : 503;
  a.content_type = kJson;
  a.body = contract::EncodeLeader(LeaderDocOf(s, clock, options), pretty);
  a.body += '\n';
  return a;
}

HttpAnswer IsLeader(const Snapshot& s, const Clock& clock) {
  return s.LeaderAt(clock.MonotonicNow()) ? Text(200, "true") : Text(503, "false");
}

HttpAnswer Release(const HttpQuery& q, const Snapshot& s, const HandlerOptions& options) {
  // Only a container of this pod may end its leadership: with --http-address on a pod or node
  // address, any peer that can reach it would otherwise make the leader let go.
  if (!q.loopback_peer) {
    return Error(403, q, "POST /release is only accepted from a loopback address");
  }
  // Whether this replica held the lock as last observed, i.e. whether the elector now writes
  // a released record (AcknowledgeRelease releases "if held").
  const bool held = s.observed && !s.identity.empty() && s.record.holder_identity == s.identity;
  if (options.release) options.release();
  return Json(202, WantsPretty(q), [&](auto& w) {
    w.StartObject();
    w.Key("released");
    w.Bool(held);
    w.Key("wasLeader");
    w.Bool(s.is_leader);
    w.Key("identity");
    Str(w, s.identity);
    w.Key("term");
    w.Int64(s.record.leader_transitions);
    w.EndObject();
  });
}

std::string Seconds(Duration d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1fs",
                std::chrono::duration_cast<std::chrono::duration<double>>(d).count());
  return buf;
}

HttpAnswer Healthz(const Snapshot& s, const Clock& clock, const HandlerOptions& options) {
  // Held off, stopping and done are deliberately idle (a hold-off may outlast the limit), so
  // only the two looping phases can be wedged.
  if (s.phase != Phase::kCandidate && s.phase != Phase::kLeader) return Text(200, "ok");
  // A watching follower attempts nothing while the leader renews, but its loop still judges
  // every event (last_progress_at), and without events it attempts when the lease would expire.
  const MonoTime since = s.last_progress_at.value_or(options.started_at);
  const Duration age = clock.MonotonicNow() - since;
  // A watching follower may sleep until the holder's lease expires, by the record's duration,
  // which may be longer than ours (a fleet that disagrees; warned about at start).
  const Duration lease = std::max<Duration>(
      options.timings.value_or(Timings{}).lease_duration,
      std::chrono::seconds(std::max<int64_t>(s.record.lease_duration_seconds, 0)));
  const Duration limit = lease + kWedgeGrace;
  if (age > limit) {
    return Text(503, std::string("wedged: the election loop made no progress ") +
                         (s.last_progress_at ? "for " : "since start, ") + Seconds(age) +
                         " (limit " + Seconds(limit) + ")");
  }
  return Text(200, "ok");
}

bool IsOutage(Code code) {
  return code == Code::kUnavailable || code == Code::kDeadlineExceeded ||
         code == Code::kTooManyRequests;
}

HttpAnswer Readyz(const HttpQuery& q, const Snapshot& s) {
  const Code code = s.last_error.code();
  const bool ready = ReadyFor(s.observed, code);
  std::string reason;
  if (ready) {
    // Outages (Unavailable, DeadlineExceeded, TooManyRequests) keep the agent ready, and so do
    // Conflict/NotFound/AlreadyExists/Gone, which are ordinary races.
  } else if (!s.observed) {
    reason = NotObservedReason(s);
  } else {
    const char* why = RefusalReason(code);  // never nullptr here: ReadyFor said not ready
    reason = std::string(why != nullptr ? why : "not ready") + ": " + s.last_error.ToString();
  }
  return Json(ready ? 200 : 503, WantsPretty(q), [&](auto& w) {
    w.StartObject();
    w.Key("ready");
    w.Bool(ready);
    if (!ready) {
      w.Key("reason");
      Str(w, reason);
    }
    w.Key("identity");
    Str(w, s.identity);
    w.Key("phase");
    w.String(election::PhaseName(s.phase));
    w.Key("observed");
    w.Bool(s.observed);
    w.Key("isLeader");
    w.Bool(s.is_leader);
    w.Key("apiOutage");
    w.Bool(IsOutage(code));
    w.Key("lastError");
    if (s.last_error.ok()) {
      w.Null();
    } else {
      Str(w, s.last_error.message());
    }
    w.Key("lastErrorCode");
    if (s.last_error.ok()) {
      w.Null();
    } else {
      w.String(CodeName(code));
    }
    w.EndObject();
  });
}

HttpAnswer MetricsAnswer(const HandlerOptions& options) {
  HttpAnswer a;
  a.status = 200;
  a.content_type = kMetricsType;
  a.body = options.metrics();
  return a;
}

// The routes' handlers: the request is shown on its listener and its method allowed.
HttpAnswer LeaderRoute(const RouteRequest& r) {
  return Leader(r.snapshot, r.clock, WantsPretty(r.query), &r.options);
}
HttpAnswer IsLeaderRoute(const RouteRequest& r) { return IsLeader(r.snapshot, r.clock); }
HttpAnswer WatchRoute(const RouteRequest& r) {
  // The router streams GET itself when it has a watch hub; reaching here means it has none.
  return Error(503, r.query, "the watch stream is off (--max-watchers=0)");
}
HttpAnswer ReleaseRoute(const RouteRequest& r) { return Release(r.query, r.snapshot, r.options); }
HttpAnswer HealthzRoute(const RouteRequest& r) { return Healthz(r.snapshot, r.clock, r.options); }
HttpAnswer ReadyzRoute(const RouteRequest& r) { return Readyz(r.query, r.snapshot); }
HttpAnswer MetricsRoute(const RouteRequest& r) { return MetricsAnswer(r.options); }
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

contract::LeaderDoc LeaderDocOf(const Snapshot& s, const Clock& clock,
                                const HandlerOptions* options) {
  const std::string& holder = s.record.holder_identity;
  contract::LeaderDoc d;
  d.name = holder;
  // null for a record this replica cannot read: the lock is held, by someone unknown.
  if (!s.opaque) d.leader = holder;
  d.identity = s.identity;
  // Judged now, at the answer, not when the snapshot was taken: a publication rendered after a
  // stalled sink, or an answer rendered late, says "no" once the claim ran out (publisher.h, (b)).
  const MonoTime now = clock.MonotonicNow();
  d.is_leader = s.LeaderAt(now);
  d.term = s.record.leader_transitions;
  d.term_reliable = s.term_reliable;
  d.term_reason = s.term_unreliable_reason;
  d.lock = {std::string(election::LockTypeName(s.lock.type)), s.lock.name_space, s.lock.name};
  d.acquire_time = s.record.acquire_time;
  d.renew_time = s.record.renew_time;
  d.lease_duration_seconds = s.record.lease_duration_seconds;
  if (d.is_leader) {
    // Rounded down, so a caller adding validForMs to its own clock never overshoots.
    const Duration left = s.valid_until - now;
    d.valid_for_ms = std::chrono::duration_cast<std::chrono::milliseconds>(left).count();
    d.valid_until = ToSystem(clock, s.valid_until);
  }
  if (options) d.timings = options->timings;
  if (!s.observed) {
    d.reason = NotObservedReason(s);
  } else if (s.opaque) {
    d.reason = "the lock holds a record this replica cannot read (" + s.unreadable +
               "); it counts as held until it has not changed for the lease duration";
  }
  return d;
}

std::string LeaderLine(const Snapshot& s, const Clock& clock) {
  return contract::EncodeLeader(LeaderDocOf(s, clock));
}

HttpAnswer LeaderAnswer(const Snapshot& s, const Clock& clock, bool pretty) {
  return Leader(s, clock, pretty);
}

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

bool AnswersLeadership(const std::string& path) {
  const Route* route = FindRoute(path);
  return route != nullptr && route->promise == Promise::kAnswer;
}

bool NeedsSnapshot(const std::string& path) {
  const Route* route = FindRoute(path);
  return route == nullptr || route->reads_snapshot;
}

HttpAnswer Handle(const HttpQuery& q, const Snapshot& s, const Clock& clock,
                  const HandlerOptions& options) {
  const Route* route = FindRoute(q.path);
  if (route == nullptr || !Shown(*route, options)) {
    return Error(404, q,
                 std::string(options.probe_only ? "no such endpoint on the probe listener: "
                                                : "no such endpoint: ") +
                     Printable(q.path) + " (endpoints: " + EndpointList(options.probe_only) + ")");
  }
  const bool get = q.method == "GET" || q.method == "HEAD";
  if (route->methods == Methods::kGet && !get) return NotAllowed(q, kGetAllow);
  if (route->methods == Methods::kPost && q.method != "POST") return NotAllowed(q, kPostAllow);
  return route->handler(RouteRequest{q, s, clock, options});
}

}  // namespace leasehold::localapi
