// One listening socket of the local API and the thread that serves it: accepts connections,
// reads request heads in order (pipelining), queues the router's answers, writes watch streams
// from the hub, and keeps every bound of ServerOptions (see http_server.h): the connection cap
// and shedding, the request and write deadlines, the output cap, the linger before a close.
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

#include "base/status.h"
#include "server/connection.h"
#include "server/http_server.h"
#include "server/router.h"

namespace leasehold::server {

class EventLoop {
 public:
  // `options` and `router` must outlive the loop.
  EventLoop(const ServerOptions& options, const Router& router);
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
  // and the thread ends. Call WatchHub::Close() first, so that every stream has its final event.
  void RequestStop();
  void Join();

  const std::string& label() const { return label_; }

 private:
  using Steady = std::chrono::steady_clock;

  void Run();
  void BeginStop();
  void Dispatch(const epoll_event& event);
  void Accept();
  void ShedOne(Steady::time_point now);
  void OnSocket(Connection& c, uint32_t events);
  void OnSignal(Connection& c);
  void Read(Connection& c);
  void Process(Connection& c);
  void Respond(Connection& c, const RequestHead& head, Routed routed);
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
  void Sweep(Steady::time_point now);
  void Arm(Steady::time_point at) { next_sweep_ = std::min(next_sweep_, at); }

  const ServerOptions& options_;
  const Router& router_;
  std::string label_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;   // eventfd: RequestStop()
  int spare_fd_ = -1;  // held open so that EMFILE can still accept-and-close
  std::thread thread_;
  std::atomic<bool> stopping_{false};

  // Loop thread only.
  std::unordered_map<int, std::unique_ptr<Connection>> conns_;
  std::unordered_map<int, Connection*> by_signal_;  // a stream's hub eventfd -> its connection
  int ordinary_ = 0;                                // connections that are not streams
  uint32_t next_gen_ = 0;
  Steady::time_point next_sweep_ = Steady::time_point::max();
  uint64_t shed_unlogged_ = 0;
  Steady::time_point shed_logged_at_{};
};

}  // namespace leasehold::server
