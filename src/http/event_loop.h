// One listening socket of the local API and the thread that serves it: accepts connections,
// reads request heads in order (pipelining), queues the router's answers, writes watch streams
// from their Stream, and keeps every bound of ListenerOptions (see listener.h): the connection
// cap and shedding, the request and write deadlines, the output cap, the linger before a close.
// Sockets, bounds and shedding only: which answer a request gets is the Router's.
#pragma once

#include <sys/epoll.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>

#include "base/clock.h"
#include "base/status.h"
#include "http/connection.h"
#include "http/listener.h"
#include "http/route.h"

namespace leasehold::http {

class EventLoop {
 public:
  // `options`, `router` and `clock` must outlive the loop. Every deadline is on `clock`.
  EventLoop(const ListenerOptions& options, const Router& router, const Clock& clock);
  ~EventLoop();  // closes every descriptor; Join() first once Start() was called
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Takes `listen_fd` (bound, listening, non-blocking; closed with the loop even on failure) and
  // makes the epoll set, the eventfd that wakes the loop and a spare descriptor (so that EMFILE
  // can still accept-and-close). Unavailable when one cannot be made.
  Status Open(int listen_fd);
  // Serves on a thread of its own; `label` names the endpoint in logs. After Open() succeeded.
  void Start(std::string label);
  // Stops accepting; what is queued has write_timeout to leave, then every connection closes
  // and the thread ends. End the streams first (ListenerOptions::on_stop), so that each has its
  // final frame queued.
  void RequestStop();
  void Join();
  // Makes the loop read the clock again at once (a FakeClock was advanced). Any thread.
  void Wake();

  const std::string& label() const { return label_; }

 private:
  void Run();
  void BeginStop();
  void Dispatch(const epoll_event& event);
  void Accept();
  void ShedOne(MonoTime now);
  void OnSocket(Connection& c, uint32_t events);
  void OnSignal(Connection& c);
  void Read(Connection& c);
  void Process(Connection& c);
  void Respond(Connection& c, const RequestHead& head, const Routed& routed);
  void StartStream(Connection& c, Routed routed);
  void TakeFrames(Connection& c);
  void Queue(Connection& c, std::string data);
  void Flush(Connection& c);
  void Interest(Connection& c);
  void Close(Connection& c);
  void Linger(Connection& c);
  bool Alive(int fd, uint32_t gen) const {
    const auto it = conns_.find(fd);
    return it != conns_.end() && it->second->gen == gen;
  }
  void Sweep(MonoTime now);
  void Arm(MonoTime at) { next_sweep_ = std::min(next_sweep_, at); }
  // epoll_ctl, its failure logged once per loop (an fd limit or ENOMEM hits every connection
  // alike: one line says it). False when it failed.
  bool Ctl(int op, int fd, uint32_t events, uint64_t key);
  // A connection epoll would not take cannot be served: it is closed at the next Sweep.
  void Break(Connection& c);

  const ListenerOptions& options_;
  const Router& router_;
  const Clock& clock_;
  std::string label_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;   // eventfd: RequestStop(), Wake()
  int spare_fd_ = -1;  // held open so that EMFILE can still accept-and-close
  std::thread thread_;
  std::atomic<bool> stopping_{false};

  // Loop thread only.
  std::unordered_map<int, std::unique_ptr<Connection>> conns_;
  std::unordered_map<int, Connection*> by_signal_;  // a Stream's signal fd -> its connection
  int ordinary_ = 0;                                // connections that are not streams
  uint32_t next_gen_ = 0;
  uint64_t next_wait_seq_ = 0;  // Connection::wait_seq
  MonoTime next_sweep_ = MonoTime::max();
  uint64_t shed_unlogged_ = 0;
  MonoTime shed_logged_at_{};
  bool ctl_failure_logged_ = false;
};

}  // namespace leasehold::http
