#include "server/http_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

namespace leasehold::server {

struct HttpServer::Impl {
  struct Listener {
    std::unique_ptr<httplib::Server> server;
    std::thread thread;
    std::atomic<bool> exited{false};
    std::string label;
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
    for (auto& listener : listeners) listener->server->stop();
    for (auto& listener : listeners) {
      if (listener->thread.joinable()) listener->thread.join();
    }
  }

  void Configure(httplib::Server& s, bool ipv6) {
    s.set_address_family(ipv6 ? AF_INET6 : AF_INET);
    // httplib's default is SO_REUSEPORT, which would let a second agent (or anything else)
    // share the port and take half the questions. SO_REUSEADDR only allows a quick restart
    // past TIME_WAIT; a port in use fails Start().
    s.set_socket_options([](socket_t sock) {
      int yes = 1;
      setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    s.set_read_timeout(options.read_timeout);
    s.set_write_timeout(options.write_timeout);
    s.set_keep_alive_timeout(options.keep_alive_timeout.count());
    const int threads = options.threads;
    s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    // Every request, whatever its method or path, goes to Handle(): it owns 404 and 405.
    s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      HttpQuery q;
      q.method = req.method;
      q.path = req.path;
      q.params.insert(req.params.begin(), req.params.end());
      const HttpAnswer a = Handle(q, source(AnswersLeadership(q.path)), *clock, handler_options);
      res.status = a.status;
      for (const auto& [name, value] : a.headers) res.set_header(name, value);
      res.set_header("Cache-Control", "no-store");
      res.set_content(a.body, a.content_type);
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
    impl_->Configure(*listener->server, ep.ipv6);
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
