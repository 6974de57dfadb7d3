// The local API on one address: the Router (router.h) in front of the bounded listener
// (http/listener.h, which knows no election). The main listener and the probe listener are one
// each (HandlerOptions::probe_only).
//
// Every path that can say "you lead" (/, /leader, /is-leader, /leader/watch) takes its snapshot
// as a promise on the main listener. The probe listener (HandlerOptions::probe_only) is for the
// kubelet: it only peeks, so its /is-leader never delays a safe-mode release.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "http/listener.h"
#include "localapi/handler.h"
#include "localapi/watch_hub.h"

namespace leasehold::localapi {

// The listener's bounds (http/listener.h), and the watch hub.
struct ServerOptions : http::ListenerOptions {
  // Serves GET /leader/watch as Server-Sent Events; nullptr answers 503 there. Must outlive the
  // server. Stop() closes it first, so that every stream ends with its final event.
  WatchHub* watch = nullptr;
};

class HttpServer {
 public:
  // Validates the address (see ParseListenAddress); binds nothing yet. `source` is asked once
  // per request (see SnapshotSource); `clock` must outlive the server.
  static Result<std::unique_ptr<HttpServer>> Create(std::string_view address, SnapshotSource source,
                                                    const Clock& clock,
                                                    HandlerOptions handler_options,
                                                    ServerOptions options = {});
  ~HttpServer();  // Stop()s
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // See http::Listener.
  Status Start();
  void Stop();
  int port() const;
  std::vector<std::string> listening() const;
  void Wake();

 private:
  HttpServer() = default;
  std::unique_ptr<http::Router> router_;
  std::unique_ptr<http::Listener> listener_;  // after router_: stopped before it goes
};

}  // namespace leasehold::localapi
