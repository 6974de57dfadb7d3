// Where the API server is and how to authenticate to it: in-cluster service account or kubeconfig.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "kube/api_client.h"

namespace leasehold::kube {

struct ClusterConfig {
  std::string server;  // "https://host:port", no trailing slash
  // Exactly one of ca_file / ca_data is set unless insecure_skip_tls_verify.
  std::string ca_file;
  std::string ca_data;                             // PEM
  std::string client_cert_file, client_cert_data;  // PEM
  std::string client_key_file, client_key_data;    // PEM; never logged
  std::string token;                               // static bearer token; never logged
  std::string token_file;                          // re-read about every minute and after a 401
  bool insecure_skip_tls_verify = false;
  // From the service-account directory's `namespace` file, or the kubeconfig context; may be "".
  std::string default_namespace;
  std::string source;  // for logs: "in-cluster (/var/run/...)" or "kubeconfig /path (context x)"
};

struct LoadOptions {
  std::string kubeconfig;  // --kubeconfig; "" = not given
  std::string context;     // --context; "" = current-context
  std::string serviceaccount_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  // Environment lookup (KUBECONFIG, KUBERNETES_SERVICE_HOST/_PORT, HOME); nullopt = unset.
  // Empty function = the process environment. Tests inject a map here instead of setenv().
  std::function<std::optional<std::string>(const std::string& name)> env;
};

// Resolution order: --kubeconfig, else $KUBECONFIG, else in-cluster ($KUBERNETES_SERVICE_HOST
// and _PORT), else ~/.kube/config. Errors name what is missing.
Result<ClusterConfig> LoadClusterConfig(const LoadOptions& options);

// The two sources LoadClusterConfig chooses between, for callers and tests that know which they
// want. Errors: kNotFound when a file is missing, kBadConfig when something is malformed or absent.

// Reads a kubeconfig: `context` ("" = its current-context) picks the cluster, user and
// namespace. Relative file paths in it are relative to the kubeconfig's directory; *-data fields
// are base64-decoded PEM. Only the first document is read; files are not merged.
Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context);

// LoadKubeconfig on text already read: `path` names where it came from (for messages) and its
// directory is the base of relative file paths. Any bytes give a config or an error, never throw.
Result<ClusterConfig> ParseKubeconfig(std::string_view yaml, const std::string& path,
                                      const std::string& context);

// The in-cluster config, as client-go's rest.InClusterConfig: server "https://host:port" (an IPv6
// host is bracketed), `serviceaccount_dir`/token (kept as token_file, so rotation is picked up),
// /ca.crt, and /namespace (trimmed; "" when the file is missing).
Result<ClusterConfig> LoadInClusterConfig(const std::string& host, const std::string& port,
                                          const std::string& serviceaccount_dir);

}  // namespace leasehold::kube
