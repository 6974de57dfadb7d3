#include "localapi/local_server.h"

#include <utility>

#include "localapi/router.h"

namespace leasehold::localapi {

Result<std::unique_ptr<HttpServer>> HttpServer::Create(std::string_view address,
                                                       SnapshotSource source, const Clock& clock,
                                                       HandlerOptions handler_options,
                                                       ServerOptions options) {
  if (!source) return Status(Code::kFailedPrecondition, "http server: no snapshot source");
  const bool probe_only = handler_options.probe_only;
  WatchHub* const watch = options.watch;
  std::unique_ptr<HttpServer> server(new HttpServer());
  server->router_ =
      std::make_unique<Router>(std::move(source), clock, std::move(handler_options), watch);
  http::ListenerOptions listener_options = std::move(options);
  listener_options.name = "the local API";
  if (watch != nullptr) listener_options.on_stop = [watch] { watch->Close(); };
  if (!probe_only) {
    listener_options.off_loopback_warning =
        "every peer that can reach it can read the leader and the lock (POST /release is still "
        "refused from off the loopback)";
  }
  auto listener =
      http::Listener::Create(address, *server->router_, clock, std::move(listener_options));
  if (!listener.ok()) return listener.status();
  server->listener_ = std::move(listener).value();
  return server;
}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Start() { return listener_->Start(); }
void HttpServer::Stop() {
  if (listener_) listener_->Stop();
}
int HttpServer::port() const { return listener_->port(); }
std::vector<std::string> HttpServer::listening() const { return listener_->listening(); }
void HttpServer::Wake() { listener_->Wake(); }

}  // namespace leasehold::localapi
