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

#include "contract/leader.h"
#include "localapi/leader_doc.h"
#include "localapi/readiness.h"
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
http::Answer Json(int status, bool pretty, Fn&& fill) {
  rapidjson::StringBuffer buf;
  if (pretty) {
    rapidjson::PrettyWriter<rapidjson::StringBuffer> w(buf);
    w.SetIndent(' ', 2);
    fill(w);
  } else {
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    fill(w);
  }
  http::Answer a;
  a.status = status;
  a.content_type = kJson;
  a.body.assign(buf.GetString(), buf.GetSize());
  a.body += '\n';
  return a;
}

http::Answer Text(int status, std::string body) {
  http::Answer a;
  a.status = status;
  a.content_type = kText;
  a.body = std::move(body);
  return a;
}

http::Answer Error(int status, const HttpQuery& q, const std::string& message) {
  return Json(status, WantsPretty(q), [&](auto& w) {
    w.StartObject();
    w.Key("error");
    Str(w, message);
    w.EndObject();
  });
}

http::Answer NotAllowed(const HttpQuery& q, const char* allow) {
  http::Answer a = Error(405, q,
                         Printable(q.method) + " is not allowed on " + Printable(q.path) +
                             " (allowed: " + allow + ")");
  a.headers.emplace_back("Allow", allow);
  return a;
}

http::Answer Leader(const Snapshot& s, const Clock& clock, bool pretty,
                    const HandlerOptions* options = nullptr) {
  http::Answer a;
  a.status = s.observed ? 200 : 503;
  a.content_type = kJson;
  a.body = contract::EncodeLeader(LeaderDocOf(s, clock, options), pretty);
  a.body += '\n';
  return a;
}

http::Answer IsLeader(const Snapshot& s, const Clock& clock) {
  return s.LeaderAt(clock.MonotonicNow()) ? Text(200, "true") : Text(503, "false");
}

http::Answer Release(const HttpQuery& q, const Snapshot& s, const HandlerOptions& options) {
  // Only a container of this pod may end its leadership: with --http-address on a pod or node
  // address, any peer that can reach it would otherwise make the leader let go.
  if (!q.loopback_peer) {
    return Error(403, q, "POST /release is only accepted from a loopback address");
  }
  // An observer never wrote the lock: "released" would be a lie, and the holder (the operator
  // in this pod) is the only one who can let go of it.
  if (options.observe_only) {
    return Error(409, q,
                 "this agent observes the lock (--agent-mode observe) and never writes it: "
                 "nothing to release; the operator that holds it releases it");
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

http::Answer Healthz(const Snapshot& s, const Clock& clock, const HandlerOptions& options) {
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

http::Answer Readyz(const HttpQuery& q, const Snapshot& s) {
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

http::Answer MetricsAnswer(const HandlerOptions& options) {
  http::Answer a;
  a.status = 200;
  a.content_type = kMetricsType;
  a.body = options.metrics();
  return a;
}

}  // namespace

http::Answer LeaderRoute(const RouteRequest& r) {
  return Leader(r.snapshot, r.clock, WantsPretty(r.query), &r.options);
}
http::Answer IsLeaderRoute(const RouteRequest& r) { return IsLeader(r.snapshot, r.clock); }
http::Answer WatchRoute(const RouteRequest& r) {
  // The router streams GET itself when it has a watch hub; reaching here means it has none.
  return Error(503, r.query, "the watch stream is off (--max-watchers=0)");
}
http::Answer ReleaseRoute(const RouteRequest& r) { return Release(r.query, r.snapshot, r.options); }
http::Answer HealthzRoute(const RouteRequest& r) { return Healthz(r.snapshot, r.clock, r.options); }
http::Answer ReadyzRoute(const RouteRequest& r) { return Readyz(r.query, r.snapshot); }
http::Answer MetricsRoute(const RouteRequest& r) { return MetricsAnswer(r.options); }

http::Answer LeaderAnswer(const Snapshot& s, const Clock& clock, bool pretty) {
  return Leader(s, clock, pretty);
}

http::Answer Handle(const HttpQuery& q, const Route* route, const Snapshot& s, const Clock& clock,
                    const HandlerOptions& options) {
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
