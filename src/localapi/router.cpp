#include "localapi/router.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <utility>

#include "http/response.h"
#include "localapi/routes.h"

namespace leasehold::localapi {

Router::Router(SnapshotSource source, const Clock& clock, HandlerOptions options, WatchHub* watch)
    : source_(std::move(source)), clock_(clock), options_(std::move(options)), watch_(watch) {}

bool Router::Streams(const std::string& path) const {
  // The hub streams a watch route on a listener that shows it; without a hub, Handle() answers.
  // (localapi::Route: within Router, Route names the member function.)
  const localapi::Route* route = FindRoute(path);
  return route != nullptr && route->promise == Promise::kStream && watch_ != nullptr &&
         Shown(*route, options_);
}

Routed Router::Route(const http::RequestHead& head, const http::Peer& from) const {
  http::DecodedTarget target = http::DecodeTarget(head.target);
  Routed r;
  r.keep_alive = head.keep_alive;
  if (head.method == "GET" && Streams(target.path)) {
    auto client = watch_->Attach(from.address);
    if (!client.ok()) {
      r.answer = http::JsonError(503, client.status().message());
      r.answer.headers.emplace_back("Retry-After", "1");
      return r;
    }
    r.stream = WatchHub::AsStream(std::move(client).value());
    r.chunked = head.minor_version == 1;
    return r;
  }
  HttpQuery q;
  q.method = head.method;
  q.path = std::move(target.path);
  q.params = std::move(target.params);
  q.loopback_peer = from.loopback;
  if (q.method == "HEAD" && Streams(q.path)) {
    r.answer.content_type = "text/event-stream";
  } else {
    const bool promise = AnswersLeadership(q.path) && !options_.probe_only;
    try {
      r.answer = Handle(q, NeedsSnapshot(q.path) ? source_(promise) : election::Snapshot{}, clock_,
                        options_);
    } catch (const std::exception& e) {
      // Out of memory, most likely: this request fails, the loop and the election go on.
      spdlog::error("http {}: {} {} failed: {}", from.listener, q.method, q.path, e.what());
      r.answer = http::JsonError(500, "internal error");
      r.keep_alive = false;
    }
  }
  // The path may hold any byte: the log's formatter escapes every message (app/logging.cpp).
  spdlog::debug("http {}: {} {} from {} -> {}", from.listener, q.method, q.path, from.address,
                r.answer.status);
  return r;
}

}  // namespace leasehold::localapi
