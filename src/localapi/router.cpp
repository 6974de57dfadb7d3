#include "localapi/router.h"

#include <spdlog/spdlog.h>

#include <exception>
#include <utility>

#include "http/response.h"

namespace leasehold::localapi {

using election::Reading;

Router::Router(election::SnapshotSource source, const Clock& clock, HandlerOptions options,
               WatchHub* watch)
    : source_(std::move(source)), clock_(clock), options_(std::move(options)), watch_(watch) {}

bool Router::Streams(const Route* route) const {
  // The hub streams a watch route on a listener that shows it; without a hub, Handle() answers.
  return route != nullptr && route->promise == Promise::kStream && watch_ != nullptr &&
         Shown(*route, options_);
}

http::Routed Router::Serve(const http::RequestHead& head, const http::Peer& from) const {
  http::DecodedTarget target = http::DecodeTarget(head.target);
  const Route* route = FindRoute(target.path);
  http::Routed r;
  r.keep_alive = head.keep_alive;
  if (head.method == "GET" && Streams(route)) {
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
  if (q.method == "HEAD" && Streams(route)) {
    r.answer.content_type = "text/event-stream";
  } else {
    // A path this listener does not serve is a 404 that reads nothing: a flood of them (the
    // pod IP is open to any pod) never takes the election's lock.
    const bool served = route != nullptr && Shown(*route, options_);
    const bool promise = served && route->promise == Promise::kAnswer;
    const Reading reading = promise && !options_.probe_only ? Reading::kPromise : Reading::kPeek;
    const bool reads_snapshot = served && route->reads_snapshot;
    try {
      r.answer = Handle(q, route, reads_snapshot ? source_(reading) : election::Snapshot{}, clock_,
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

Result<std::unique_ptr<http::Listener>> Listen(std::string_view address,
                                               election::SnapshotSource source, const Clock& clock,
                                               HandlerOptions handler_options, WatchHub* watch,
                                               http::ListenerOptions options) {
  if (!source) return Status(Code::kFailedPrecondition, "http server: no snapshot source");
  options.name = "the local API";
  if (watch != nullptr) options.on_stop = [watch] { watch->Close(); };
  if (!handler_options.probe_only) {
    options.off_loopback_warning =
        "every peer that can reach it can read the leader and the lock (POST /release is still "
        "refused from off the loopback)";
  }
  auto router =
      std::make_shared<const Router>(std::move(source), clock, std::move(handler_options), watch);
  return http::Listener::Create(address, std::move(router), clock, std::move(options));
}

}  // namespace leasehold::localapi
