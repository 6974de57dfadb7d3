// The bounded HTTP/1.1 listener: one event loop thread per listening socket (127.0.0.1 and ::1
// for "localhost"), non-blocking sockets and epoll, in front of a Router (http/route.h). This
// file binds the sockets and starts and stops the loops; event_loop.h keeps the bounds below over
// each socket's connections; the Router decides what each request gets (an answer or a Stream).
// It knows no election, no route and no JSON but its own error answers: the local API
// (src/localapi) is one Router.
//
// Why our own and not cpp-httplib's server: every peer is hostile (the probe listener is on the
// pod IP), and cpp-httplib (0.11 in Debian 12, 0.18 in Debian 13) cannot bound a request: no
// limit on header count or total size, a read timeout per recv() instead of per request, a
// thread held per connection, a full pool that turns the newcomer away, dropped pipelined
// requests, unread bodies parsed as requests, multi-range answers, and a peer address a client
// can overwrite with its own REMOTE_ADDR header. Here every one of those is bounded:
//
//   request head    at most ListenerOptions::limits (http/request.h), else 431 + close
//   request time    head (and its body, at most HeadLimits::max_body_bytes, read and discarded)
//                   complete within head_timeout of the accept or of the end of the previous
//                   answer, else 408 + close; a connection that sends nothing is closed at that
//                   time too, so head_timeout is also the idle keep-alive timeout
//   requests        at most max_requests_per_connection on one connection; pipelined requests
//                   are answered in order, never dropped
//   answers         every byte written within write_timeout of being queued, else close; no more
//                   requests are read while max_pending_output waits
//   connections     at most max_connections per listening socket (each caller sets its own; the
//                   probe listener's is kProbeConnections in app.cpp), streams not counted; one
//                   more sheds the connection that has waited longest for its request (idle or
//                   slow), never the newcomer
//   streams         as many as the Router hands out (the local API: --max-watchers); a stream
//                   takes frames only while less than kStreamOutputLow (event_loop.cpp) of its
//                   output waits, so a reader that falls behind is cut off by its Stream (the
//                   local API: the hub's queue limit) or by write_timeout; Stream::KeepAlive()
//                   after each Stream::Heartbeat() of silence; HTTP/1.0 gets a close-delimited
//                   stream, HTTP/1.1 a chunked one
//   Range           ignored everywhere: always the full body
//   peer address    from accept(), never from a header (Peer::loopback): the Router refuses
//                   state changes from off the loopback
//   time            every deadline on the injected Clock; Wake() makes the loops look at it
//                   again (tests that advance a FakeClock)
//
// Threads: one per listening socket. File descriptors: per listening socket, max_connections
// sockets plus one; per stream, its socket and its signal fd.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/listen_address.h"
#include "base/status.h"
#include "http/request.h"
#include "http/route.h"

namespace leasehold::http {

struct ListenerOptions {
  HeadLimits limits;
  // From the accept, or the end of the previous answer, to the whole request. Short: the
  // callers are local probes and the main container, never slow networks.
  Duration head_timeout = std::chrono::seconds(2);
  // From queuing an answer (or a stream frame) to its last byte leaving.
  Duration write_timeout = std::chrono::seconds(2);
  // Open connections per listening socket, streams not counted.
  int max_connections = 256;
  // Answers on one connection; the last one says "Connection: close".
  int max_requests_per_connection = 1000;
  // Output queued on one connection before its next request is read.
  size_t max_pending_output = size_t{64} * 1024;
  // Called first by Stop(), before the loops stop: the Router's streams end there (the local
  // API's WatchHub::Close), so that every stream's final frame is queued and then written.
  std::function<void()> on_stop;
  // What is listening, for logs, e.g. "the local API".
  std::string name = "the listener";
  // Logged as a warning, after "<name> listens on <endpoint>, which is not a loopback address: ",
  // for every endpoint that is not a loopback address (empty: no warning).
  std::string off_loopback_warning;
};

class Listener {
 public:
  // Validates the address (see ParseListenAddress); binds nothing yet. The listener keeps
  // `router` (non-null) until it is destroyed; `clock` must outlive it.
  static Result<std::unique_ptr<Listener>> Create(std::string_view address,
                                                  std::shared_ptr<const Router> router,
                                                  const Clock& clock, ListenerOptions options = {});
  ~Listener();  // Stop()s
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  // Binds every endpoint and starts serving; returns once all accept. Unavailable when a
  // required endpoint cannot be bound (e.g. the port is taken); an optional one (::1 of
  // "localhost") is skipped with a warning. Call once; kFailedPrecondition after Start() or Stop().
  Status Start();

  // Stops accepting, writes what is queued (every stream's final event included) for at most
  // write_timeout, closes every connection and joins the threads. Idempotent.
  void Stop();

  // The bound port (the kernel's choice when the address said 0); 0 before Start().
  int port() const;
  // What is being served, e.g. {"127.0.0.1:4040", "[::1]:4040"}; empty before Start().
  std::vector<std::string> listening() const;

  // Makes every loop read the clock again at once: for tests that advance a FakeClock, so that a
  // deadline passed on it is acted on without anyone waiting in real time.
  void Wake();

 private:
  struct Impl;
  explicit Listener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace leasehold::http
