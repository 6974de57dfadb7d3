#include "server/http_server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

namespace leasehold::server {
namespace {

int PortOf(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
  if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
  return -1;
}

// cpp-httplib 0.11 does not hand a handler its connection's socket, and a watch stream needs it
// to notice a client that hangs up while no event is due. A TCP connection is the one socket of
// this process with that pair of ports, so look it up; -1 when it cannot be found (then the
// hang-up is noticed at the next write, within one heartbeat). The socket stays httplib's: it is
// only polled, and given a send timeout.
#if defined(__SANITIZE_THREAD__)
// ThreadSanitizer counts an fstat() of a socket that another thread created as a race on that
// descriptor. The scan only inspects descriptors, so those accesses are not tracked.
extern "C" void __tsan_ignore_thread_begin();
extern "C" void __tsan_ignore_thread_end();
struct TsanIgnore {
  TsanIgnore() { __tsan_ignore_thread_begin(); }
  ~TsanIgnore() { __tsan_ignore_thread_end(); }
};
#else
struct TsanIgnore {};
#endif

int FindConnectionSocket(int local_port, int remote_port) {
  [[maybe_unused]] TsanIgnore ignore;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int found = -1;
  while (const dirent* e = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || fd == dirfd(dir)) continue;
    struct stat st;
    if (fstat(static_cast<int>(fd), &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    sockaddr_storage local{}, peer{};
    socklen_t local_len = sizeof local, peer_len = sizeof peer;
    if (getsockname(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&local), &local_len) != 0 ||
        PortOf(local) != local_port) {
      continue;
    }
    if (getpeername(static_cast<int>(fd), reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 ||
        PortOf(peer) != remote_port) {
      continue;
    }
    found = static_cast<int>(fd);
    break;
  }
  closedir(dir);
  return found;
}

void SetAnswer(httplib::Response& res, const HttpAnswer& a) {
  res.status = a.status;
  for (const auto& [name, value] : a.headers) res.set_header(name, value);
  res.set_header("Cache-Control", "no-store");
  res.set_content(a.body, a.content_type);
}

// httplib's own ThreadPool starts all its threads at once and keeps them. This one starts a
// thread only when a connection finds none idle, up to `max` (the pool size the listener is
// configured with), and lets a thread that stayed idle for `idle_exit` go: an agent nobody
// watches runs a handful of threads, not hundreds, which matters under a pod's pids limit.
class ElasticThreadPool final : public httplib::TaskQueue {
 public:
  ElasticThreadPool(size_t max, Duration idle_exit) : max_(max), idle_exit_(idle_exit) {}
  ~ElasticThreadPool() override { shutdown(); }

  void enqueue(std::function<void()> fn) override {
    std::lock_guard<std::mutex> l(mu_);
    ReapLocked();
    jobs_.push_back(std::move(fn));
    if (jobs_.size() > idle_ && live_ < max_) {
      ++live_;
      const uint64_t id = next_id_++;
      threads_.emplace(id, std::thread([this, id] { Work(id); }));
    }
    cv_.notify_one();
  }

  // Runs the jobs already queued, then joins every thread (as httplib's ThreadPool does).
  void shutdown() override {
    std::map<uint64_t, std::thread> threads;
    {
      std::lock_guard<std::mutex> l(mu_);
      shutdown_ = true;
      threads.swap(threads_);
    }
    cv_.notify_all();
    for (auto& [id, t] : threads) t.join();
  }

 private:
  void Work(uint64_t id) {
    std::unique_lock<std::mutex> l(mu_);
    while (true) {
      ++idle_;
      const bool woken =
          cv_.wait_for(l, idle_exit_, [this] { return !jobs_.empty() || shutdown_; });
      --idle_;
      if (!jobs_.empty()) {
        std::function<void()> job = std::move(jobs_.front());
        jobs_.pop_front();
        l.unlock();
        job();
        l.lock();
        continue;
      }
      if (shutdown_ || !woken) {
        --live_;
        if (!shutdown_) done_.push_back(id);  // joined by the next enqueue()
        return;
      }
    }
  }

  // Joins the threads that left for idleness.
  void ReapLocked() {
    for (const uint64_t id : done_) {
      auto it = threads_.find(id);
      if (it == threads_.end()) continue;
      it->second.join();  // it has returned from Work(): this does not block for long
      threads_.erase(it);
    }
    done_.clear();
  }

  const size_t max_;
  const Duration idle_exit_;
  std::mutex mu_;  // guards the fields below
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::map<uint64_t, std::thread> threads_;
  std::vector<uint64_t> done_;
  size_t live_ = 0;  // threads started and not yet returned
  size_t idle_ = 0;  // threads waiting for a job
  uint64_t next_id_ = 0;
  bool shutdown_ = false;
};

}  // namespace

struct HttpServer::Impl {
  struct Listener {
    std::unique_ptr<httplib::Server> server;
    std::thread thread;
    std::atomic<bool> exited{false};
    std::string label;
    // The listening socket, as httplib last handed it to set_socket_options.
    int socket = -1;
  };

  ListenAddress address;
  SnapshotSource source;
  const Clock* clock = nullptr;
  HandlerOptions handler_options;
  ServerOptions options;

  std::mutex mu;  // guards the fields below
  bool started = false;
  bool stopped = false;
  int port = 0;
  std::vector<std::unique_ptr<Listener>> listeners;

  void StopLocked() {
    if (stopped) return;
    stopped = true;
    // First end the streams: httplib's stop() waits for every worker thread.
    if (options.watch != nullptr) options.watch->Close();
    for (auto& listener : listeners) listener->server->stop();
    for (auto& listener : listeners) {
      if (listener->thread.joinable()) listener->thread.join();
    }
  }

  // GET /leader/watch: attach to the hub, then stream what Next() hands out until it says stop.
  void ServeWatch(const httplib::Request& req, httplib::Response& res) {
    const std::string peer = req.remote_addr + ":" + std::to_string(req.remote_port);
    auto client = options.watch->Attach(peer);
    if (!client.ok()) {
      HttpAnswer a;
      a.status = 503;
      a.content_type = "application/json";
      a.body = "{\"error\":\"" + client.status().message() + "\"}\n";
      a.headers.emplace_back("Retry-After", "1");
      SetAnswer(res, a);
      return;
    }
    res.status = 200;
    res.set_header("Cache-Control", "no-store");
    WatchHub* hub = options.watch;
    const Duration write_timeout = options.write_timeout;
    // The lambda owns the client: it unregisters when httplib drops the response, however the
    // stream ended.
    res.set_chunked_content_provider(
        "text/event-stream", [hub, c = std::move(client).value(), local_port = req.local_port,
                              remote_port = req.remote_port, write_timeout,
                              fd = -2](size_t /*offset*/, httplib::DataSink& sink) mutable {
          if (fd == -2) {
            fd = FindConnectionSocket(local_port, remote_port);
            if (fd >= 0) {
              // A send into a full buffer then fails after the write timeout instead of
              // blocking this thread for as long as the client does not read.
              const auto us = std::chrono::duration_cast<std::chrono::microseconds>(write_timeout);
              timeval tv{static_cast<time_t>(us.count() / 1000000),
                         static_cast<suseconds_t>(us.count() % 1000000)};
              setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
            }
          }
          const std::optional<std::string> frame = hub->Next(*c, fd);
          if (!frame) return false;
          return sink.write(frame->data(), frame->size());
        });
  }

  void Configure(Listener& listener, bool ipv6) {
    httplib::Server& s = *listener.server;
    s.set_address_family(ipv6 ? AF_INET6 : AF_INET);
    // httplib's default is SO_REUSEPORT, which would let a second agent (or anything else)
    // share the port and take half the questions. SO_REUSEADDR only allows a quick restart
    // past TIME_WAIT; a port in use fails Start().
    s.set_socket_options([&listener](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      // Accepted sockets inherit it on Linux. httplib writes the headers and the body of an
      // answer separately; with Nagle's algorithm the body then waits for the client's delayed
      // ACK, ~40 ms per request on a keep-alive connection.
      setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
      listener.socket = sock;
    });
    s.set_read_timeout(options.read_timeout);
    s.set_write_timeout(options.write_timeout);
    s.set_keep_alive_timeout(options.keep_alive_timeout.count());
    const size_t threads = static_cast<size_t>(options.threads);
    const Duration idle_exit = options.idle_thread_exit;
    s.new_task_queue = [threads, idle_exit] { return new ElasticThreadPool(threads, idle_exit); };
    // Every request, whatever its method or path, goes to Handle(): it owns 404 and 405.
    s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      HttpQuery q;
      q.method = req.method;
      q.path = req.path;
      q.params.insert(req.params.begin(), req.params.end());
      if (q.path == "/leader/watch" && options.watch != nullptr && !handler_options.probe_only) {
        if (q.method == "GET") {
          ServeWatch(req, res);
          return httplib::Server::HandlerResponse::Handled;
        }
        if (q.method == "HEAD") {
          res.status = 200;
          res.set_header("Cache-Control", "no-store");
          res.set_header("Content-Type", "text/event-stream");
          return httplib::Server::HandlerResponse::Handled;
        }
      }
      const bool promise = AnswersLeadership(q.path) && !handler_options.probe_only;
      SetAnswer(res, Handle(q, source(promise), *clock, handler_options));
      return httplib::Server::HandlerResponse::Handled;
    });
    s.set_exception_handler(
        [](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
          std::string what = "unknown exception";
          try {
            if (ep) std::rethrow_exception(ep);
          } catch (const std::exception& e) {
            what = e.what();
          } catch (...) {
          }
          spdlog::error("http: {} {} failed: {}", req.method, req.path, what);
          res.status = 500;
          res.set_content("{\"error\":\"internal error\"}\n", "application/json");
        });
    s.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      spdlog::debug("http: {} {} from {} -> {}", req.method, req.path, req.remote_addr, res.status);
    });
  }
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

Result<std::unique_ptr<HttpServer>> HttpServer::Create(std::string_view address,
                                                       SnapshotSource source, const Clock& clock,
                                                       HandlerOptions handler_options,
                                                       ServerOptions options) {
  auto parsed = ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  if (!source) return Status(Code::kInvalid, "http server: no snapshot source");
  if (options.threads < 1) return Status(Code::kInvalid, "http server: threads must be >= 1");
  auto impl = std::make_unique<Impl>();
  impl->address = std::move(parsed).value();
  impl->source = std::move(source);
  impl->clock = &clock;
  impl->handler_options = std::move(handler_options);
  impl->options = options;
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

Status HttpServer::Start() {
  std::lock_guard<std::mutex> l(impl_->mu);
  if (impl_->started || impl_->stopped) {
    return Status(Code::kInvalid, "http server: Start() after Start() or Stop()");
  }
  impl_->started = true;
  int port = impl_->address.port;
  for (const ListenEndpoint& ep : impl_->address.endpoints) {
    auto listener = std::make_unique<Impl::Listener>();
    listener->server = std::make_unique<httplib::Server>();
    impl_->Configure(*listener, ep.ipv6);
    errno = 0;
    bool bound = false;
    if (port == 0) {
      // Port 0: the kernel picks for the first endpoint; the others reuse its choice.
      const int p = listener->server->bind_to_any_port(ep.host);
      if (p > 0) {
        port = p;
        bound = true;
      }
    } else {
      bound = listener->server->bind_to_port(ep.host, port);
    }
    if (bound && listener->socket >= 0) {
      // httplib listens with a backlog of 5: a burst of connections (the main container's
      // pool opening, many watch clients reconnecting after a failover) would overflow it and
      // wait out SYN retransmits, a second or more. Listening again only raises the backlog.
      listen(listener->socket, SOMAXCONN);
    }
    const std::string label = EndpointLabel(ep, port);
    std::string why;
    if (!bound) {
      why = errno != 0 ? std::strerror(errno) : "bind failed";
    } else {
      listener->label = label;
      Impl::Listener* raw = listener.get();
      listener->thread = std::thread([raw] {
        raw->server->listen_after_bind();
        raw->exited = true;
      });
      // httplib's stop() does nothing until the accept loop has begun, so wait for it here;
      // Stop() may then come at any moment. This is thread start-up, a few microseconds.
      while (!raw->server->is_running() && !raw->exited) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (raw->exited) {
        raw->thread.join();
        why = "the accept loop ended at once";
      } else {
        impl_->listeners.push_back(std::move(listener));
        continue;
      }
    }
    if (ep.required) {
      impl_->StopLocked();
      return Status(Code::kUnavailable, "cannot listen on " + label + ": " + why);
    }
    spdlog::warn("http: cannot listen on {} ({}); serving IPv4 only", label, why);
  }
  impl_->port = port;
  return Status::Ok();
}

void HttpServer::Stop() {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->StopLocked();
}

int HttpServer::port() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->listeners.empty() ? 0 : impl_->port;
}

std::vector<std::string> HttpServer::listening() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  std::vector<std::string> out;
  if (impl_->stopped) return out;
  for (const auto& listener : impl_->listeners) out.push_back(listener->label);
  return out;
}

}  // namespace leasehold::server
