// The local API as a pure function: one request and one election snapshot in, one answer out.
// No sockets and no Kubernetes calls, so it can be tested over tables of snapshots and fuzzed.
//
//   GET /leader, GET /   200 JSON leader view (503 with "reason" until the lock was read once)
//   GET /is-leader       200 "true" | 503 "false" (text/plain), for `curl -sf ... && ...`
//   POST /release        202 JSON; calls HandlerOptions::release (Elector::AcknowledgeRelease);
//                        403 unless the peer is a loopback address; 409 JSON in observe mode
//                        (HandlerOptions::observe_only), which has no lock of its own to release
//   GET /healthz         200 "ok" | 503 when the election loop looks wedged
//   GET /readyz          200 JSON | 503 JSON with "reason" while the agent cannot take part
//   GET /metrics         200 Prometheus text format 0.0.4 (HandlerOptions::metrics); also on
//                        the probe listener: read-only, and it needs no snapshot (see
//                        Route::reads_snapshot), so a flood of scrapes never waits on the elector
//   GET /leader/watch    Server-Sent Events, routed to the watch hub by router.cpp before this
//                        function; here only its 405 and, without a hub, its 503
//   anything else        404 JSON; a known path with another method 405 JSON with Allow
// HEAD is accepted wherever GET is. `?pretty` (any value but 0/false) indents JSON answers.
// The probe listener (HandlerOptions::probe_only) serves /healthz, /readyz, /is-leader and
// /metrics only. Which route takes which methods, shows on which listener and promises what is
// said once, by the route table (routes.h); the router looks a request's route up there once and
// hands it to Handle().
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/timings.h"
#include "election/elector.h"
#include "http/route.h"

namespace leasehold::localapi {

struct HttpQuery {
  std::string method;                              // as received: "GET", "HEAD", "POST", ...
  std::string path;                                // decoded, without the query string
  std::multimap<std::string, std::string> params;  // decoded query parameters
  // The connection's peer (from accept(), never from a header) is 127.0.0.0/8, ::1 or
  // ::ffff:127.0.0.0/104. Requests that change state need it; false refuses them.
  bool loopback_peer = false;
};

// /healthz calls the loop wedged when no attempt completed for lease-duration + this.
inline constexpr Duration kWedgeGrace = std::chrono::seconds(20);

struct HandlerOptions {
  // When the process started (monotonic): /healthz measures "no attempt yet" from here.
  MonoTime started_at{};
  // The configured timings; /healthz takes the lease duration from them (not from the record,
  // which a rival may have set), Timings' default when unset. When set, GET /leader (not the
  // watch events, nor the status file) adds "timings": {"leaseDurationMs", "renewDeadlineMs",
  // "retryPeriodMs"}, so that `leasehold gate` can check its stop-grace.
  std::optional<Timings> timings;
  // POST /release calls this; in production Elector::AcknowledgeRelease. May be empty.
  std::function<void()> release;
  // --agent-mode observe: the agent never writes the lock, so POST /release is refused with
  // 409 (after the loopback check) and `release` is never called.
  bool observe_only = false;
  // GET /metrics answers with this text (Metrics::Render, which takes no lock the elector
  // takes); empty = 404.
  std::function<std::string()> metrics;
  // The probe listener (--probe-address, reachable on the pod IP): /healthz, /readyz,
  // /is-leader and /metrics only, every other path 404. It never records a promise (see
  // localapi/routes.h, kAnswer).
  bool probe_only = false;
};

struct Route;

// One request as a route's handler sees it.
struct RouteRequest {
  const HttpQuery& query;
  const election::Snapshot& snapshot;  // empty when the route reads none
  const Clock& clock;
  const HandlerOptions& options;
};

// The routes' handlers (routes.cpp's table names each): the request is shown on its listener
// and its method allowed.
http::Answer LeaderRoute(const RouteRequest& r);
http::Answer IsLeaderRoute(const RouteRequest& r);
http::Answer WatchRoute(const RouteRequest& r);
http::Answer ReleaseRoute(const RouteRequest& r);
http::Answer HealthzRoute(const RouteRequest& r);
http::Answer ReadyzRoute(const RouteRequest& r);
http::Answer MetricsRoute(const RouteRequest& r);

// The body of GET /leader for `s` (newline-terminated JSON) and its status: 200, or 503 with
// "reason" before the lock was read once. validForMs is counted from `clock`'s now.
http::Answer LeaderAnswer(const election::Snapshot& s, const Clock& clock, bool pretty = false);

// The answer to `q` on `route` (FindRoute(q.path), looked up once by the caller; nullptr: 404).
// `s` must be taken (Elector::Take) when the route's answer is a promise (Promise::kAnswer) on the
// main listener, else peeked, and may be empty when the route reads none; `clock` gives "now"
// for validForMs, validUntil and the /healthz age.
http::Answer Handle(const HttpQuery& q, const Route* route, const election::Snapshot& s,
                    const Clock& clock, const HandlerOptions& options);

}  // namespace leasehold::localapi
