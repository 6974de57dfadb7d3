// The libcurl transport: the ApiClient and Watcher the binary uses. TLS, client certificates,
// bearer tokens (re-read when rotated), the User-Agent and per-request metrics.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "kube/api_client.h"
#include "kube/cluster_config.h"
#include "kube/watch.h"

namespace leasehold::kube {

// Per-request metrics hook: verb ("GET", ...), HTTP status (0 for a transport error), latency.
using RequestObserver = std::function<void(const std::string& verb, long http_status, Duration)>;

struct ClientOptions {
  // Per-request timeout; the elector passes max(renew-deadline / 2, 1s).
  Duration request_timeout = std::chrono::seconds(5);
  std::string user_agent;  // default "leasehold/<version>"
  RequestObserver observer;
};

// The libcurl client: one reused keep-alive connection, TLS always verified against the CA
// unless the kubeconfig says insecure-skip-tls-verify.
Result<std::unique_ptr<ApiClient>> NewCurlApiClient(const ClusterConfig& config,
                                                    const ClientOptions& options,
                                                    const Clock& clock);

// The libcurl watcher: TLS, authentication, token re-reading and User-Agent as NewCurlApiClient,
// on its own handle and connection. `clock` must outlive it.
Result<std::unique_ptr<Watcher>> NewCurlWatcher(const ClusterConfig& config,
                                                const ClientOptions& options, const Clock& clock);

}  // namespace leasehold::kube
