// The local API as a pure function: one request and one election snapshot in, one answer out.
// No sockets and no Kubernetes calls, so it can be tested over tables of snapshots and fuzzed.
//
//   GET /leader, GET /   200 JSON leader view (503 with "reason" until the lock was read once)
//   GET /is-leader       200 "true" | 503 "false" (text/plain), for `curl -sf ... && ...`
//   POST /release        202 JSON; calls HandlerOptions::release (Elector::AcknowledgeRelease)
//   GET /healthz         200 "ok" | 503 when the election loop looks wedged
//   GET /readyz          200 JSON | 503 JSON with "reason" while the agent cannot take part
//   anything else        404 JSON; a known path with another method 405 JSON with Allow
// HEAD is accepted wherever GET is. `?pretty` (any value but 0/false) indents JSON answers.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "election/elector.h"

namespace leasehold::server {

struct HttpQuery {
  std::string method;                              // as received: "GET", "HEAD", "POST", ...
  std::string path;                                // decoded, without the query string
  std::multimap<std::string, std::string> params;  // decoded query parameters
};

struct HttpAnswer {
  int status = 200;
  std::string content_type;
  std::string body;
  // Besides Content-Type, e.g. {"Allow", "GET, HEAD"}.
  std::vector<std::pair<std::string, std::string>> headers;
};

// /healthz calls the loop wedged when no attempt completed for lease-duration + this.
inline constexpr Duration kWedgeGrace = std::chrono::seconds(20);

struct HandlerOptions {
  // When the process started (monotonic): /healthz measures "no attempt yet" from here.
  MonoTime started_at{};
  // The configured --lease-duration (not the one in the record, which a rival may have set).
  Duration lease_duration = std::chrono::seconds(15);
  // POST /release calls this; in production Elector::AcknowledgeRelease. May be empty.
  std::function<void()> release;
};

// `s` must be taken (Elector::Take) for this request; `clock` gives "now" for validForMs,
// validUntil and the /healthz age.
// True for the paths whose answer can say "you lead".
bool AnswersLeadership(const std::string& path);

HttpAnswer Handle(const HttpQuery& q, const election::Snapshot& s, const Clock& clock,
                  const HandlerOptions& options);

}  // namespace leasehold::server
