// The httplib listener around Handle(). One httplib::Server per endpoint of the listen address
// (127.0.0.1 and ::1 for "localhost"), each accepting on its own thread.
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

namespace leasehold::server {

// Called once per request; in production [&] { return elector.Take(); }. Must be thread-safe.
// Called once per request. `promise` is true when the answer may tell the caller "you lead"
// (/leader, /, /is-leader): the elector then remembers the "yes" as a promise that safe-mode
// shutdown honours. Probes pass false, so they never delay a release.
using SnapshotSource = std::function<election::Snapshot(bool promise)>;

struct ServerOptions {
  // Small: the callers are local probes and the main container, never slow networks.
  Duration read_timeout = std::chrono::seconds(2);
  Duration write_timeout = std::chrono::seconds(2);
  // An idle keep-alive connection holds a worker thread this long (whole seconds).
  std::chrono::seconds keep_alive_timeout{2};
  // Worker threads per listening socket.
  int threads = 4;
};

class HttpServer {
 public:
  // Validates the address (see ParseListenAddress); binds nothing yet. `clock` must outlive
  // the server.
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
