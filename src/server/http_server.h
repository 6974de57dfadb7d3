// The httplib listener around Handle(). One httplib::Server per endpoint of the listen address
// (127.0.0.1 and ::1 for "localhost"), each accepting on its own thread.
//
// cpp-httplib (0.11) serves each connection on a worker thread for as long as it stays open: a
// keep-alive connection for up to keep_alive_timeout after its last request, a watch stream
// until it ends. A connection that finds every worker busy waits for one, so the pool's limit
// must cover the streams (--max-watchers) and the keep-alive clients expected at once, with room
// to spare for probes; see the app's sizing. Threads start on demand and leave when idle.
//
// Every path that can say "you lead" (/, /leader, /is-leader, /leader/watch) takes its snapshot
// as a promise on the main listener. The probe listener (HandlerOptions::probe_only) is for the
// kubelet: it only peeks, so its /is-leader never delays a safe-mode release.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "election/elector.h"
#include "server/handler.h"
#include "server/listen_address.h"
#include "server/watch_hub.h"

namespace leasehold::server {

struct ServerOptions {
  // Small: the callers are local probes and the main container, never slow networks.
  Duration read_timeout = std::chrono::seconds(2);
  Duration write_timeout = std::chrono::seconds(2);
  // An idle keep-alive connection holds a worker thread this long (whole seconds).
  std::chrono::seconds keep_alive_timeout{2};
  // Most worker threads per listening socket (see above).
  int threads = 4;
  // A worker thread idle this long exits; the next connection that needs one starts it again.
  Duration idle_thread_exit = std::chrono::seconds(60);
  // Serves GET /leader/watch as Server-Sent Events; nullptr answers 503 there. Must outlive the
  // server. Stop() closes it first, so that no stream holds the listener's threads.
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

  // Binds every endpoint and starts serving; returns once all accept. Unavailable when a
  // required endpoint cannot be bound (e.g. the port is taken); an optional one (::1 of
  // "localhost") is skipped with a warning. Call once; Invalid after Start() or Stop().
  Status Start();

  // Stops accepting, finishes in-flight requests and joins the threads. Idempotent.
  void Stop();

  // The bound port (the kernel's choice when the address said 0); 0 before Start().
  int port() const;
  // What is being served, e.g. {"127.0.0.1:4040", "[::1]:4040"}; empty before Start().
  std::vector<std::string> listening() const;

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasehold::server
