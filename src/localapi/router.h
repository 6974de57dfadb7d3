// Which route a request takes, between the listener (event_loop.cpp), which knows sockets,
// bounds and shedding only, and the pure Handle(), which answers from one snapshot. The route is
// looked up once (FindRoute), and what it says decides the rest:
//
//   GET /leader/watch    a watch stream from the hub (the router's `watch`), on the main listener
//                        only; 503 JSON with "Retry-After: 1" when the hub refuses (--max-watchers
//                        streams open, or closed)
//   HEAD /leader/watch   200 text/event-stream with no body (same condition)
//   everything else      Handle(), given a snapshot taken as a promise when the route's answer is
//                        one (Promise::kAnswer) on the main listener, else peeked, and none for a
//                        route that reads none; 500 JSON and the connection's last answer when
//                        that throws (out of memory, most likely)
// Without a hub, or on the probe listener, /leader/watch is Handle()'s too (503, 405 or 404).
//
// Listen() puts a router in front of the bounded listener (http/listener.h, which knows no
// election): the main listener and the probe listener are one each (HandlerOptions::probe_only).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "http/listener.h"
#include "http/request.h"
#include "http/route.h"
#include "localapi/handler.h"
#include "localapi/routes.h"
#include "localapi/watch_hub.h"

namespace leasehold::localapi {

class Router final : public http::Router {
 public:
  // `source` is asked once per request answered; `clock` and `watch` (nullptr: no streams) must
  // outlive the router. Serve() is called from every listener thread at once.
  Router(election::SnapshotSource source, const Clock& clock, HandlerOptions options,
         WatchHub* watch);

  // `head` is complete and its body read and discarded.
  http::Routed Serve(const http::RequestHead& head, const http::Peer& from) const override;

  bool probe_only() const { return options_.probe_only; }

 private:
  // Whether the hub streams `route` (nullptr: no route) on this listener.
  bool Streams(const Route* route) const;

  const election::SnapshotSource source_;
  const Clock& clock_;
  const HandlerOptions options_;
  WatchHub* const watch_;
};

// The local API on `address`: a Router in front of the bounded listener, not started yet.
// Validates the address (see ParseListenAddress); binds nothing. `source` is asked once per
// request (see election::Reading); `clock` and `watch` must outlive the listener. `watch`
// (nullptr: 503 on GET /leader/watch) serves the watch streams; Stop() closes it first, so that
// every stream ends with its final event.
Result<std::unique_ptr<http::Listener>> Listen(std::string_view address,
                                               election::SnapshotSource source, const Clock& clock,
                                               HandlerOptions handler_options, WatchHub* watch,
                                               http::ListenerOptions options = {});

}  // namespace leasehold::localapi
