// LoadClusterConfig and the two loaders behind it. The API client lives in curl_api_client.cpp.
#include "kube/cluster_config.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <tuple>
#include <utility>
#include <vector>

#include "base/file.h"
#include "kube/base64.h"
#include "kube/token_source.h"

namespace leasehold::kube {
namespace {

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

// "" for an unset variable, so callers test one thing.
std::string EnvOrEmpty(const LoadOptions& options, const std::string& name) {
  std::optional<std::string> v = options.env ? options.env(name) : ProcessEnv(name);
  return v.value_or("");
}

bool FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

// Checks up front that a file the client will open later can be read, and is a regular file
// within `max_bytes`, so a typo shows up as a config error naming the field instead of a TLS
// failure on the first request, and a FIFO or /dev/zero never reaches curl.
Status CheckReadable(const std::string& what, const std::string& path, size_t max_bytes) {
  if (::access(path.c_str(), R_OK) != 0) {
    const int err = errno;
    return Status(err == ENOENT ? Code::kNotFound : Code::kBadConfig,
                  what + " " + path + ": " + std::strerror(err));
  }
  if (Status s = CheckRegularFile(path, max_bytes); !s.ok()) {
    return Status(s.code(), what + ": " + s.message());
  }
  return Status::Ok();
}

std::string DirName(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string ResolvePath(const std::string& dir, const std::string& path) {
  if (path.empty() || path[0] == '/') return path;
  return dir + "/" + path;
}

// A string field of a mapping; "" when absent or null. Throws YAML::Exception for a non-scalar,
// which LoadKubeconfig turns into a "malformed" error.
std::string Str(const YAML::Node& map, const char* key) {
  const YAML::Node n = map[key];
  if (!n || n.IsNull()) return "";
  return n.as<std::string>();
}

// The entry called `name` of a kubeconfig list (clusters, users, contexts): its inner mapping,
// e.g. the `cluster:` of the matching item. An undefined node when there is none.
YAML::Node FindNamed(const YAML::Node& root, const char* list, const char* inner,
                     const std::string& name) {
  const YAML::Node items = root[list];
  if (!items || !items.IsSequence()) return YAML::Node(YAML::NodeType::Undefined);
  for (const YAML::Node& item : items) {
    if (!item.IsMap() || Str(item, "name") != name) continue;
    const YAML::Node value = item[inner];
    // A present entry with an empty body (`cluster: {}` or `user:` alone) is still found.
    return value ? value : YAML::Node(YAML::NodeType::Map);
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

// Decodes a *-data field into `out`.
Status DecodeData(const YAML::Node& map, const char* key, const std::string& where,
                  std::string* out) {
  const std::string encoded = Str(map, key);
  if (encoded.empty()) return Status::Ok();
  Result<std::string> decoded = DecodeBase64(encoded);
  if (!decoded.ok()) {
    return Status(Code::kBadConfig, where + ": " + key + ": " + decoded.status().message());
  }
  *out = std::move(decoded).value();
  return Status::Ok();
}

Result<ClusterConfig> ParseKubeconfigYaml(const std::string& path, const std::string& text,
                                          const std::string& context_flag) {
  const std::string prefix = "kubeconfig " + path;
  const auto invalid = [&prefix](const std::string& what) {
    return Status(Code::kBadConfig, prefix + ": " + what);
  };
  const std::string dir = DirName(path);

  YAML::Node root = YAML::Load(text);
  if (!root.IsMap()) return invalid("not a kubeconfig (expected a mapping at the top)");

  std::string context_name = context_flag;
  if (context_name.empty()) context_name = Str(root, "current-context");
  if (context_name.empty()) return invalid("no current-context is set and no --context given");
  const YAML::Node context = FindNamed(root, "contexts", "context", context_name);
  if (!context) return invalid("context \"" + context_name + "\" not found");

  const std::string cluster_name = Str(context, "cluster");
  if (cluster_name.empty()) return invalid("context \"" + context_name + "\" names no cluster");
  const YAML::Node cluster = FindNamed(root, "clusters", "cluster", cluster_name);
  if (!cluster) {
    return invalid("cluster \"" + cluster_name + "\" (from context \"" + context_name +
                   "\") not found");
  }
  // No user is allowed (client certificates may come from nowhere else, but an anonymous
  // kubeconfig is legal); a named but missing user is an error.
  const std::string user_name = Str(context, "user");
  const YAML::Node user = user_name.empty() ? YAML::Node(YAML::NodeType::Map)
                                            : FindNamed(root, "users", "user", user_name);
  if (!user) {
    return invalid("user \"" + user_name + "\" (from context \"" + context_name + "\") not found");
  }

  ClusterConfig config;
  config.source = prefix + " (context " + context_name + ")";
  config.default_namespace = Str(context, "namespace");

  const std::string cluster_where = "cluster \"" + cluster_name + "\"";
  config.server = Str(cluster, "server");
  if (config.server.empty()) return invalid(cluster_where + " has no server");
  if (config.server.find("://") == std::string::npos) config.server = "https://" + config.server;
  // Trailing slashes go, but never into the scheme: "https://" alone has no host to talk to.
  const size_t host = config.server.find("://") + 3;
  while (config.server.size() > host && config.server.back() == '/') config.server.pop_back();
  if (config.server.size() == host) {
    return invalid(cluster_where + " has no host in server \"" + Str(cluster, "server") + "\"");
  }

  const YAML::Node insecure = cluster["insecure-skip-tls-verify"];
  config.insecure_skip_tls_verify = insecure && !insecure.IsNull() && insecure.as<bool>();
  // As clientcmd: *-data wins over the file when both are given.
  if (Status s = DecodeData(cluster, "certificate-authority-data", prefix + ": " + cluster_where,
                            &config.ca_data);
      !s.ok()) {
    return s;
  }
  if (config.ca_data.empty()) {
    config.ca_file = ResolvePath(dir, Str(cluster, "certificate-authority"));
  }
  if (config.insecure_skip_tls_verify && (!config.ca_data.empty() || !config.ca_file.empty())) {
    // clientcmd refuses this too: a CA that is then ignored hides a mistake.
    return invalid(cluster_where +
                   ": certificate-authority and insecure-skip-tls-verify cannot both be set");
  }

  const std::string user_where = "user \"" + user_name + "\"";
  const std::string user_prefix = prefix + ": " + user_where;
  if (Status s = DecodeData(user, "client-certificate-data", user_prefix, &config.client_cert_data);
      !s.ok()) {
    return s;
  }
  if (Status s = DecodeData(user, "client-key-data", user_prefix, &config.client_key_data);
      !s.ok()) {
    return s;
  }
  if (config.client_cert_data.empty()) {
    config.client_cert_file = ResolvePath(dir, Str(user, "client-certificate"));
  }
  if (config.client_key_data.empty()) {
    config.client_key_file = ResolvePath(dir, Str(user, "client-key"));
  }
  const bool has_cert = !config.client_cert_data.empty() || !config.client_cert_file.empty();
  const bool has_key = !config.client_key_data.empty() || !config.client_key_file.empty();
  if (has_cert != has_key) {
    return invalid(user_where + (has_cert ? ": client-certificate given without client-key"
                                          : ": client-key given without client-certificate"));
  }
  config.token = Str(user, "token");
  config.token_file = ResolvePath(dir, Str(user, "tokenFile"));
  if (!has_cert && config.token.empty() && config.token_file.empty()) {
    for (const char* unsupported : {"exec", "auth-provider", "username"}) {
      if (user[unsupported]) {
        return invalid(user_where + " authenticates with \"" + unsupported +
                       "\", which leasehold does not support; use a token, tokenFile or client "
                       "certificate");
      }
    }
  }

  if (!config.token.empty()) {
    if (Status s = CheckBearerToken(config.token); !s.ok()) {
      return invalid(user_where + ": token: " + s.message());
    }
  }

  const std::tuple<const char*, std::string, size_t> files[] = {
      {"certificate-authority", config.ca_file, kMaxCaFileBytes},
      {"client-certificate", config.client_cert_file, kMaxCaFileBytes},
      {"client-key", config.client_key_file, kMaxCaFileBytes},
      {"tokenFile", config.token_file, kMaxTokenFileBytes},
  };
  for (const auto& [what, file, max_bytes] : files) {
    if (file.empty()) continue;
    if (Status s = CheckReadable(what, file, max_bytes); !s.ok()) {
      return Status(s.code(), prefix + ": " + s.message());
    }
  }
  return config;
}

}  // namespace

Result<ClusterConfig> ParseKubeconfig(std::string_view yaml, const std::string& path,
                                      const std::string& context) {
  try {
    return ParseKubeconfigYaml(path, std::string(yaml), context);
  } catch (const YAML::Exception& e) {
    return Status(Code::kBadConfig, "kubeconfig " + path + ": malformed: " + e.what());
  }
}

Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context) {
  Result<std::string> text = ReadRegularFile(path, kMaxKubeconfigBytes);
  if (!text.ok()) {
    return Status(text.code(), "kubeconfig " + path + ": " + text.status().message());
  }
  return ParseKubeconfig(text.value(), path, context);
}

Result<ClusterConfig> LoadInClusterConfig(const std::string& host, const std::string& port,
                                          const std::string& serviceaccount_dir) {
  const std::string prefix = "in-cluster config";
  ClusterConfig config;
  // net.JoinHostPort: an IPv6 literal needs brackets.
  const bool ipv6 = host.find(':') != std::string::npos && host.front() != '[';
  config.server = "https://" + (ipv6 ? "[" + host + "]" : host) + ":" + port;
  config.source = "in-cluster (" + serviceaccount_dir + ")";
  config.token_file = serviceaccount_dir + "/token";
  config.ca_file = serviceaccount_dir + "/ca.crt";

  Result<std::string> token = ReadRegularFile(config.token_file, kMaxTokenFileBytes);
  if (!token.ok()) return Status(token.code(), prefix + ": " + token.status().message());
  const std::string trimmed = TrimSpace(token.value());
  if (trimmed.empty()) {
    return Status(Code::kBadConfig, prefix + ": token file " + config.token_file + " is empty");
  }
  if (Status s = CheckBearerToken(trimmed); !s.ok()) {
    return Status(s.code(), prefix + ": token file " + config.token_file + ": " + s.message());
  }
  if (Status s = CheckReadable("CA file", config.ca_file, kMaxCaFileBytes); !s.ok()) {
    return Status(s.code(), prefix + ": " + s.message());
  }
  // A missing namespace file is fine ("" = not named); one that is there must be a small file.
  Result<std::string> ns =
      ReadRegularFile(serviceaccount_dir + "/namespace", kMaxNamespaceFileBytes);
  if (ns.ok()) {
    config.default_namespace = TrimSpace(std::move(ns).value());
  } else if (ns.code() != Code::kNotFound) {
    return Status(ns.code(), prefix + ": namespace file: " + ns.status().message());
  }
  return config;
}

namespace {

// An error of a source chosen by a flag names the flag too, for the operator who must fix it.
Result<ClusterConfig> NamingFlag(Result<ClusterConfig> r, const char* flag) {
  if (r.ok()) return r;
  return Status(r.code(), r.status().message() + " (" + flag + ")");
}

}  // namespace

Result<ClusterConfig> LoadClusterConfig(const LoadOptions& options) {
  if (!options.kubeconfig.empty()) {
    return NamingFlag(LoadKubeconfig(options.kubeconfig, options.context), "--kubeconfig");
  }

  if (const std::string list = EnvOrEmpty(options, "KUBECONFIG"); !list.empty()) {
    // client-go merges every file of the list; the first existing one is enough here.
    std::vector<std::string> paths;
    size_t start = 0;
    while (start <= list.size()) {
      const size_t colon = std::min(list.find(':', start), list.size());
      if (colon > start) paths.push_back(list.substr(start, colon - start));
      start = colon + 1;
    }
    for (const std::string& path : paths) {
      if (FileExists(path)) return LoadKubeconfig(path, options.context);
    }
    return Status(Code::kNotFound, "$KUBECONFIG=" + list + ": no such file");
  }

  const std::string host = EnvOrEmpty(options, "KUBERNETES_SERVICE_HOST");
  const std::string port = EnvOrEmpty(options, "KUBERNETES_SERVICE_PORT");
  if (!host.empty() && !port.empty()) {
    if (!options.context.empty()) {
      return Status(Code::kBadConfig, "--context \"" + options.context +
                                          "\" given, but no kubeconfig is in use (running "
                                          "in-cluster; pass --kubeconfig too)");
    }
    return NamingFlag(LoadInClusterConfig(host, port, options.serviceaccount_dir),
                      "--serviceaccount-dir");
  }

  if (const std::string home = EnvOrEmpty(options, "HOME"); !home.empty()) {
    const std::string path = home + "/.kube/config";
    if (FileExists(path)) return LoadKubeconfig(path, options.context);
  }
  return Status(Code::kNotFound,
                "no cluster configuration: --kubeconfig not given, $KUBECONFIG not set, not "
                "in-cluster ($KUBERNETES_SERVICE_HOST/_PORT not set) and no ~/.kube/config");
}

}  // namespace leasehold::kube
