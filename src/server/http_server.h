// The local API's HTTP/1.1 listener: one event loop thread per listening socket (127.0.0.1 and
// ::1 for "localhost"), non-blocking sockets and epoll, in front of the pure Handle(). This file
// binds the sockets and starts and stops the loops; event_loop.h keeps the bounds below over
// each socket's connections; router.h decides what each request gets (the watch stream, or
// Handle() with a taken or peeked snapshot).
//
// Why our own and not cpp-httplib's server: every peer is hostile (the probe listener is on the
// pod IP), and cpp-httplib (0.11 in Debian 12, 0.18 in Debian 13) cannot bound a request: no
// limit on header count or total size, a read timeout per recv() instead of per request, a
// thread held per connection, a full pool that turns the newcomer away, dropped pipelined
// requests, unread bodies parsed as requests, multi-range answers, and a peer address a client
// can overwrite with its own REMOTE_ADDR header. Here every one of those is bounded:
//
//   request head    at most ServerOptions::limits (16 KiB, 64 header fields), else 431 + close
//   request time    head (and its <= 1 KiB body, read and discarded) complete within
//                   head_timeout (2 s) of the accept or of the end of the previous answer, else
//                   408 + close; a connection that sends nothing is closed at that time too, so
//                   the idle keep-alive timeout is also 2 s
//   requests        at most max_requests_per_connection (1000) on one connection; pipelined
//                   requests are answered in order, never dropped
//   answers         every byte written within write_timeout (2 s) of being queued, else close;
//                   no more requests are read while max_pending_output (64 KiB) waits
//   connections     at most max_connections (256; the probe listener 32) per listening socket,
//                   watch streams not counted; one more sheds the connection that has waited
//                   longest for its request (idle or slow), never the newcomer
//   watch streams   at most --max-watchers in all (WatchHub); a stream takes frames from its
//                   queue only while less than 16 KiB of its output waits, so a reader that
//                   falls behind is cut off by the hub's queue limit or by write_timeout; a
//                   ": ping" after each heartbeat of silence; HTTP/1.0 gets a close-delimited
//                   stream, HTTP/1.1 a chunked one
//   Range           ignored everywhere: always the full body
//   state changes   POST /release only from a loopback peer address (from accept(), never from
//                   a header), whatever the bind address (see Handle)
//
// Threads: one per listening socket. File descriptors: per listening socket, max_connections
// sockets plus one; per watch stream, its socket and an eventfd.
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
#include "server/http_request.h"
#include "base/listen_address.h"
#include "server/watch_hub.h"

namespace leasehold::server {

struct ServerOptions {
  HeadLimits limits;
  // From the accept, or the end of the previous answer, to the whole request. Default 2 s: the
  // callers are local probes and the main container, never slow networks.
  Duration head_timeout = std::chrono::seconds(2);
  // From queuing an answer (or a stream frame) to its last byte leaving. Default 2 s.
  Duration write_timeout = std::chrono::seconds(2);
  // Open connections per listening socket, watch streams not counted. Default 256.
  int max_connections = 256;
  // Answers on one connection; the last one says "Connection: close". Default 1000.
  int max_requests_per_connection = 1000;
  // Output queued on one connection before its next request is read. Default 64 KiB.
  size_t max_pending_output = 64 * 1024;
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

  // Binds every endpoint and starts serving; returns once all accept. Unavailable when a
  // required endpoint cannot be bound (e.g. the port is taken); an optional one (::1 of
  // "localhost") is skipped with a warning. Call once; Invalid after Start() or Stop().
  Status Start();

  // Stops accepting, writes what is queued (every stream's final event included) for at most
  // write_timeout, closes every connection and joins the threads. Idempotent.
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
