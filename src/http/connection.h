// One accepted connection of the listener: what was received and not yet parsed,
// what waits to be sent, its deadlines and its place in the shedding order, and, once
// the Router handed it a Stream, that stream. State only; the event loop
// (event_loop.cpp) does the I/O and keeps the bounds (see http/listener.h).
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/clock.h"
#include "http/route.h"

namespace leasehold::http {

struct Connection {
  int fd = -1;
  uint32_t gen = 0;  // tells this connection from a later one with the same fd (24 bits)
  std::string peer;  // for logs
  bool loopback = false;
  std::string in;      // received and not yet parsed
  std::string out;     // to send
  size_t out_off = 0;  // bytes of `out` already sent
  // Not streaming: the request (head and body) must be complete by `request_deadline`; queued
  // output must be gone by `write_deadline`.
  MonoTime wait_since;    // start of the current wait for a request: shedding order
  uint64_t wait_seq = 0;  // the order in which waits began, for ties of wait_since
  MonoTime request_deadline;
  MonoTime write_deadline;
  int answered = 0;
  bool close_after_write = false;  // the last answer was sent with "Connection: close"
  bool lingering = false;          // it was sent; input is dropped until the linger has passed
  size_t lingered = 0;             // bytes dropped meanwhile
  bool peer_closed = false;
  bool processing = false;  // inside Process(): Flush() must not re-enter it
  uint32_t interest = 0;    // the epoll events registered
  bool registered = false;
  bool broken = false;  // epoll would not take it: the next Sweep closes it (never served blind)

  // A stream, once the Router handed one out.
  std::shared_ptr<Stream> client;
  bool chunked = false;
  bool stream_ended = false;  // the Stream said so: close once `out` is sent
  MonoTime last_frame;

  size_t pending() const { return out.size() - out_off; }
  bool streaming() const { return client != nullptr; }

  // The epoll events this connection can act on now, given how much output may wait before
  // the next request is read. Level-triggered: asking for more makes the loop spin.
  uint32_t WantedEvents(size_t max_pending_output) const {
    uint32_t want = 0;
    if (pending() > 0) want |= EPOLLOUT;
    if (lingering ||
        (!peer_closed && (streaming() || (!close_after_write && pending() < max_pending_output)))) {
      want |= EPOLLIN | EPOLLRDHUP;
    }
    return want;
  }
};

}  // namespace leasehold::http
