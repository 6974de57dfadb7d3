// The libcurl transport behind NewCurlApiClient and NewCurlWatcher.
//
// Each client owns ONE easy handle, reused for every request so the TLS connection is kept alive
// (curl_easy_reset keeps the handle's connection cache). Requests on a handle are serialized by a
// mutex; the watcher has a handle of its own so a long watch never blocks the elector.
#include "kube/curl_api_client.h"

#include <curl/curl.h>
#ifdef LEASEHOLD_CURL_MBEDTLS
#include <mbedtls/ssl.h>
#endif
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <utility>

#include "base/version.h"  // generated: kVersion
#include "kube/status_error.h"
#include "kube/token_source.h"
#include "kube/watch.h"

namespace leasehold::kube {
namespace {

#ifdef LEASEHOLD_CURL_MBEDTLS
// The static build's TLS stack is Mbed TLS 3.6 (scripts/static.sh). By default it offers RSA-PSS
// signatures (for TLS 1.3) ahead of PKCS#1 v1.5, yet cannot verify a PSS signature in a TLS 1.2
// handshake; TLS 1.2 servers (Go's, OpenSSL's) sign with the client's first choice they support,
// so every handshake with an RSA-keyed apiserver that speaks TLS 1.2 (OpenShift 3.11, a TLS 1.2
// load balancer) would fail. PKCS#1 v1.5 goes before PSS: a TLS 1.2 server then picks it, and a
// TLS 1.3 server still signs with PSS (PKCS#1 v1.5 is not allowed there). e2e/scenarios/static.py
// runs both versions.
constexpr uint16_t kSignatureAlgorithms[] = {
    MBEDTLS_TLS1_3_SIG_ECDSA_SECP256R1_SHA256, MBEDTLS_TLS1_3_SIG_ECDSA_SECP384R1_SHA384,
    MBEDTLS_TLS1_3_SIG_ECDSA_SECP521R1_SHA512, MBEDTLS_TLS1_3_SIG_RSA_PKCS1_SHA256,
    MBEDTLS_TLS1_3_SIG_RSA_PKCS1_SHA384,       MBEDTLS_TLS1_3_SIG_RSA_PKCS1_SHA512,
    MBEDTLS_TLS1_3_SIG_RSA_PSS_RSAE_SHA256,    MBEDTLS_TLS1_3_SIG_RSA_PSS_RSAE_SHA384,
    MBEDTLS_TLS1_3_SIG_RSA_PSS_RSAE_SHA512,    MBEDTLS_TLS1_3_SIG_NONE,
};

// CURLOPT_SSL_CTX_FUNCTION: for Mbed TLS, curl passes the connection's mbedtls_ssl_config.
CURLcode OrderSignatureAlgorithms(CURL*, void* ssl_config, void*) {
  mbedtls_ssl_conf_sig_algs(static_cast<mbedtls_ssl_config*>(ssl_config), kSignatureAlgorithms);
  return CURLE_OK;
}
#endif

// A 2xx body larger than this is refused (Unavailable): Kubernetes objects are far smaller,
// so only a broken or hostile server sends it.
constexpr size_t kMaxBodyBytes = 16 << 20;
// How much of a non-2xx watch body is kept for the error.
constexpr size_t kMaxErrorBodyBytes = 64 << 10;
// A partial watch line longer than this means the stream is not newline-delimited JSON.
constexpr size_t kMaxWatchLineBytes = 16 << 20;

// Everything a request needs that does not change between requests.
struct Settings {
  std::string server;
  std::string ca_file, ca_data;
  std::string cert_file, cert_data, key_file, key_data;
  bool insecure = false;
  std::string user_agent;
  Duration request_timeout{};
  RequestObserver observer;
  const Clock* clock = nullptr;
  std::shared_ptr<TokenSource> tokens;
};

Status Validate(const ClusterConfig& config, const ClientOptions& options) {
  if (config.server.rfind("https://", 0) != 0 && config.server.rfind("http://", 0) != 0) {
    return Status(Code::kBadConfig,
                  "server \"" + config.server + "\" must start with https:// or http://");
  }
  const bool has_cert = !config.client_cert_file.empty() || !config.client_cert_data.empty();
  const bool has_key = !config.client_key_file.empty() || !config.client_key_data.empty();
  if (has_cert != has_key) {
    return Status(Code::kBadConfig, "a client certificate needs both a certificate and a key");
  }
  if (options.request_timeout <= Duration::zero()) {
    return Status(Code::kBadConfig, "request timeout must be positive");
  }
  // Checked here too, not only where kubeconfigs are parsed: nothing reaches a header unchecked.
  if (Status s = CheckBearerToken(config.token); !s.ok()) {
    return Status(s.code(), "token: " + s.message());
  }
  return Status::Ok();
}

Result<std::shared_ptr<const Settings>> MakeSettings(const ClusterConfig& config,
                                                     const ClientOptions& options,
                                                     const Clock& clock) {
  static std::once_flag curl_init;
  std::call_once(curl_init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });

  if (Status s = Validate(config, options); !s.ok()) return s;
  auto settings = std::make_shared<Settings>();
  settings->server = config.server;
  while (!settings->server.empty() && settings->server.back() == '/') settings->server.pop_back();
  settings->ca_file = config.ca_file;
  settings->ca_data = config.ca_data;
  settings->cert_file = config.client_cert_file;
  settings->cert_data = config.client_cert_data;
  settings->key_file = config.client_key_file;
  settings->key_data = config.client_key_data;
  settings->insecure = config.insecure_skip_tls_verify;
#ifdef LEASEHOLD_CURL_MBEDTLS
  // A kubeconfig may name no CA and count on the system's (client-go then uses the host's
  // roots). The static build has no built-in bundle and its image no /etc/ssl: use the one the
  // main image or a mount provides at Debian's, RHEL's or Alpine's path, else refuse at start
  // instead of failing every handshake.
  if (!settings->insecure && settings->ca_file.empty() && settings->ca_data.empty()) {
    for (const char* bundle : {"/etc/ssl/certs/ca-certificates.crt",
                               "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"}) {
      if (access(bundle, R_OK) == 0) {
        settings->ca_file = bundle;
        break;
      }
    }
    if (settings->ca_file.empty()) {
      return Status(
          Code::kBadConfig,
          (config.source.empty() ? std::string("the cluster config") : config.source) +
              " names no certificate-authority or certificate-authority-data, and this "
              "static build has no CA bundle (none at /etc/ssl/certs/ca-certificates.crt): "
              "add the apiserver's CA to the kubeconfig");
    }
  }
#endif
  settings->user_agent =
      options.user_agent.empty() ? std::string("leasehold/") + kVersion : options.user_agent;
  settings->request_timeout = options.request_timeout;
  settings->observer = options.observer;
  settings->clock = &clock;
  if (!config.token_file.empty()) {
    auto source = FileTokenSource::Create(config.token_file, clock, config.token);
    if (!source.ok()) return source.status();
    settings->tokens = std::move(source).value();
  } else {
    settings->tokens = std::make_shared<StaticTokenSource>(config.token);
  }
  if (settings->insecure) {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      spdlog::warn("TLS verification of {} is OFF (insecure-skip-tls-verify in {})",
                   settings->server, config.source.empty() ? "the config" : config.source);
    });
  }
  return std::shared_ptr<const Settings>(std::move(settings));
}

// curl's millisecond options: rounded up, so a sub-millisecond remainder still gets 1 ms.
long ToMillis(Duration d) {
  return static_cast<long>(
      std::max<int64_t>(1, std::chrono::ceil<std::chrono::milliseconds>(d).count()));
}

bool Is2xx(long code) { return code >= 200 && code < 300; }

// One easy handle and what a request on it needs. Not thread-safe: the owners serialize.
class Session {
 public:
  explicit Session(std::shared_ptr<const Settings> settings)
      : settings_(std::move(settings)), curl_(curl_easy_init()) {}
  ~Session() {
    // Closes the kept-alive connection; our close-socket callback runs, so `this` must be alive.
    if (curl_ != nullptr) curl_easy_cleanup(curl_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  bool valid() const { return curl_ != nullptr; }
  const Settings& settings() const { return *settings_; }

  // Returns true to keep going; false aborts the transfer (CURLE_WRITE_ERROR).
  using Sink = std::function<bool(const char* data, size_t size)>;

  struct Outcome {
    CURLcode rc = CURLE_OK;
    long http_status = 0;     // 0 when no status line arrived
    std::string retry_after;  // raw header value of the final response
    std::string error;        // curl's error text when rc != CURLE_OK
  };

  // Sends one request with the given total and connect timeouts and streams the body to `sink`.
  Outcome Perform(const Request& request, Duration timeout, Duration connect_timeout,
                  const Sink& sink) {
    Outcome out;
    CURL* h = curl_;
    curl_easy_reset(h);
    char errbuf[CURL_ERROR_SIZE] = {0};
    const Settings& s = *settings_;
    const std::string url = s.server + request.path;

    curl_easy_setopt(h, CURLOPT_URL, url.c_str());
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, ToMillis(timeout));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, ToMillis(connect_timeout));
    // HTTP/1.1: one request at a time per connection is all we need, and it keeps the watcher's
    // stream and the client's requests on visibly separate connections.
    curl_easy_setopt(h, CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    curl_easy_setopt(h, CURLOPT_USERAGENT, s.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https,http");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    // Notice a dead peer on an idle kept-alive connection or a quiet watch (seconds).
    curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(h, CURLOPT_TCP_KEEPINTVL, 10L);

    // TLS: verified against the configured CA only (CAPATH off, so the system store is not
    // consulted), unless the kubeconfig said insecure-skip-tls-verify.
#ifdef LEASEHOLD_CURL_MBEDTLS
    curl_easy_setopt(h, CURLOPT_SSL_CTX_FUNCTION, OrderSignatureAlgorithms);
#endif
    curl_blob ca_blob{}, cert_blob{}, key_blob{};
    if (s.insecure) {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
    } else {
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
      curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
      if (!s.ca_data.empty()) {
        ca_blob =
            curl_blob{const_cast<char*>(s.ca_data.data()), s.ca_data.size(), CURL_BLOB_NOCOPY};
        curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca_blob);
        curl_easy_setopt(h, CURLOPT_CAPATH, nullptr);
      } else if (!s.ca_file.empty()) {
        curl_easy_setopt(h, CURLOPT_CAINFO, s.ca_file.c_str());
        curl_easy_setopt(h, CURLOPT_CAPATH, nullptr);
      }  // else: no CA configured; curl's default store verifies the server (the static build
         // has none: MakeSettings then names a bundle file or refuses).
    }
    if (!s.cert_data.empty()) {
      cert_blob =
          curl_blob{const_cast<char*>(s.cert_data.data()), s.cert_data.size(), CURL_BLOB_NOCOPY};
      curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &cert_blob);
      curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    } else if (!s.cert_file.empty()) {
      curl_easy_setopt(h, CURLOPT_SSLCERT, s.cert_file.c_str());
      curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    }
    if (!s.key_data.empty()) {
      // The key's PEM with its terminating NUL counted: mbedTLS (the static build's TLS stack)
      // parses a key as PEM only when the buffer's last byte is NUL, and curl hands it the blob
      // as is. OpenSSL's PEM reader ignores the extra byte. data()[size()] is NUL by definition.
      key_blob =
          curl_blob{const_cast<char*>(s.key_data.data()), s.key_data.size() + 1, CURL_BLOB_NOCOPY};
      curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &key_blob);
      curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    } else if (!s.key_file.empty()) {
      curl_easy_setopt(h, CURLOPT_SSLKEY, s.key_file.c_str());
      curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
    }

    // Method and body. The body must outlive curl_easy_perform: it is the caller's.
    const std::string& method = request.method;
    const bool has_body =
        method == "POST" || method == "PUT" || method == "PATCH" || !request.body.empty();
    if (method == "GET" && request.body.empty()) {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else {
      if (has_body) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                         static_cast<curl_off_t>(request.body.size()));
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.c_str());
      }
      if (method != "POST") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method.c_str());
    }

    // Headers. The token is fetched per request so rotation applies at once; never logged.
    curl_slist* headers = nullptr;
    headers = curl_slist_append(headers, "Accept: application/json");
    if (has_body) {
      headers = curl_slist_append(headers, ("Content-Type: " + request.content_type).c_str());
    }
    headers = curl_slist_append(headers, "Expect:");  // no 100-continue round trip
    if (const std::string token = s.tokens->Token(); !token.empty()) {
      headers = curl_slist_append(headers, ("Authorization: Bearer " + token).c_str());
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers);

    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &Session::OnHeader);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &out);
    WriteContext write{&sink};
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &Session::OnWrite);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &write);

    // Sockets are tracked so Cancel() can shut them down from another thread.
    curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, &Session::OnOpenSocket);
    curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, this);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, &Session::OnCloseSocket);
    curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, this);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &Session::OnProgress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, this);

    if (cancelled_.load()) {
      out.rc = CURLE_ABORTED_BY_CALLBACK;
    } else {
      out.rc = curl_easy_perform(h);
    }
    curl_slist_free_all(headers);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out.http_status);
    if (out.rc != CURLE_OK) out.error = errbuf[0] != '\0' ? errbuf : curl_easy_strerror(out.rc);
    // Do not leave pointers to this frame in the handle.
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, nullptr);
    return out;
  }

  // The HTTP status of the response being received; valid inside a Sink.
  long CurrentHttpStatus() const {
    long code = 0;
    curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &code);
    return code;
  }

  // See Watcher::Cancel.
  void Cancel() {
    cancelled_.store(true);
    std::lock_guard<std::mutex> l(sockets_mu_);
    for (curl_socket_t fd : sockets_) ::shutdown(fd, SHUT_RDWR);
  }
  bool cancelled() const { return cancelled_.load(); }

 private:
  struct WriteContext {
    const Sink* sink;
  };

  static size_t OnWrite(char* data, size_t size, size_t nmemb, void* userdata) {
    auto* ctx = static_cast<WriteContext*>(userdata);
    const size_t n = size * nmemb;
    return (*ctx->sink)(data, n) ? n : 0;
  }

  static size_t OnHeader(char* data, size_t size, size_t nitems, void* userdata) {
    auto* out = static_cast<Outcome*>(userdata);
    const size_t n = size * nitems;
    std::string_view line(data, n);
    if (line.rfind("HTTP/", 0) == 0) {
      out->retry_after.clear();  // a new response (after a 100 Continue, say) starts over
    } else if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
      std::string name(line.substr(0, colon));
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (name == "retry-after") {
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.back() == '\r' || value.back() == '\n')) {
          value.remove_suffix(1);
        }
        out->retry_after = std::string(value);
      }
    }
    return n;
  }

  static curl_socket_t OnOpenSocket(void* clientp, curlsocktype purpose, curl_sockaddr* addr) {
    auto* self = static_cast<Session*>(clientp);
    if (purpose != CURLSOCKTYPE_IPCXN) return CURL_SOCKET_BAD;
    const curl_socket_t fd = ::socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
    if (fd == CURL_SOCKET_BAD) return fd;
    std::lock_guard<std::mutex> l(self->sockets_mu_);
    self->sockets_.insert(fd);
    return fd;
  }

  static int OnCloseSocket(void* clientp, curl_socket_t fd) {
    auto* self = static_cast<Session*>(clientp);
    std::lock_guard<std::mutex> l(self->sockets_mu_);
    self->sockets_.erase(fd);
    return ::close(fd);
  }

  // Backstop for Cancel(): curl calls this at least about once a second.
  static int OnProgress(void* clientp, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<Session*>(clientp)->cancelled_.load() ? 1 : 0;
  }

  const std::shared_ptr<const Settings> settings_;
  CURL* const curl_;
  std::atomic<bool> cancelled_{false};
  std::mutex sockets_mu_;
  std::set<curl_socket_t> sockets_;
};

// The error for a transfer that ended in a curl error.
Status TransportError(const Request& request, const Session::Outcome& out) {
  const Code code =
      out.rc == CURLE_OPERATION_TIMEDOUT ? Code::kDeadlineExceeded : Code::kUnavailable;
  return Status(code, request.method + " " + request.path + ": " + out.error);
}

// A 401 says why the token source has no fresh token, if it knows (e.g. the rotated file holds
// an invalid token): the reason readiness then reports.
Status WithTokenProblem(Status st, TokenSource& tokens) {
  if (st.code() != Code::kUnauthorized) return st;
  tokens.Invalidate();
  const std::string problem = tokens.Problem();
  if (problem.empty()) return st;
  return Status(Code::kUnauthorized, st.message() + "; and no fresh token to try: " + problem);
}

// A 403 names the permission the request needed before the server's own words.
Status WithRbacNeed(Status st, const Request& request, bool watch) {
  if (st.code() != Code::kForbidden) return st;
  const std::string need = RbacNeed(request, watch);
  if (need.empty()) return st;
  // Not "RBAC:": admission, quota or a terminating namespace answer 403 too.
  return Status(Code::kForbidden, "needs " + need + ": " + st.message());
}

void Observe(const Settings& s, const std::string& verb, long http_status, Duration latency) {
  if (s.observer) s.observer(verb, http_status, latency);
}

class CurlApiClient final : public ApiClient {
 public:
  explicit CurlApiClient(std::shared_ptr<const Settings> settings)
      : session_(std::move(settings)) {}

  bool valid() const { return session_.valid(); }

  Result<Response> Do(const Request& request, MonoTime deadline) override {
    const Settings& s = session_.settings();
    std::unique_lock<std::mutex> lock(mu_);
    // Measured after the lock: time spent queued behind another request is not the server's.
    const MonoTime start = s.clock->MonotonicNow();
    if (deadline <= start) {
      return Status(Code::kDeadlineExceeded,
                    request.method + " " + request.path + ": deadline passed before sending");
    }
    const Duration timeout = std::min(s.request_timeout, deadline - start);
    std::string body;
    bool too_big = false;
    const Session::Outcome out =
        session_.Perform(request, timeout, timeout, [&](const char* data, size_t size) {
          if (body.size() + size > kMaxBodyBytes) {
            too_big = true;
            return false;
          }
          body.append(data, size);
          return true;
        });
    const Duration latency = s.clock->MonotonicNow() - start;
    lock.unlock();

    const long observed_status = out.rc == CURLE_OK ? out.http_status : 0;
    Observe(s, request.method, observed_status, latency);
    spdlog::debug("{} {} -> {} in {} ms", request.method, request.path,
                  out.rc == CURLE_OK ? std::to_string(out.http_status) : out.error,
                  std::chrono::duration_cast<std::chrono::milliseconds>(latency).count());

    if (too_big) {
      return Status(Code::kUnavailable, request.method + " " + request.path +
                                            ": response body larger than " +
                                            std::to_string(kMaxBodyBytes) + " bytes");
    }
    if (out.rc != CURLE_OK) return TransportError(request, out);
    if (Is2xx(out.http_status)) return Response{out.http_status, std::move(body)};
    return WithTokenProblem(WithRbacNeed(StatusFromResponse(out.http_status, body, out.retry_after),
                                         request, /*watch=*/false),
                            *s.tokens);
  }

 private:
  std::mutex mu_;  // one request at a time on the one connection
  Session session_;
};

class CurlWatcher final : public Watcher {
 public:
  explicit CurlWatcher(std::shared_ptr<const Settings> settings) : session_(std::move(settings)) {}

  bool valid() const { return session_.valid(); }

  Status Watch(const Request& request, MonoTime deadline,
               const std::function<bool(const std::string& line)>& on_line) override {
    const std::string& path = request.path;
    const Settings& s = session_.settings();
    std::lock_guard<std::mutex> lock(mu_);
    if (session_.cancelled()) return Status::Ok();
    const MonoTime start = s.clock->MonotonicNow();
    if (deadline <= start) {
      return Status(Code::kDeadlineExceeded, "watch " + path + ": deadline passed before sending");
    }
    const Duration remaining = deadline - start;

    std::string pending;     // bytes after the last newline
    std::string error_body;  // a non-2xx answer's body
    long status = 0;         // HTTP status, known from the first body byte on
    bool stopped = false;    // on_line returned false
    bool overlong = false;   // a line exceeded kMaxWatchLineBytes
    const auto sink = [&](const char* data, size_t size) {
      if (status == 0) status = session_.CurrentHttpStatus();
      if (!Is2xx(status)) {
        error_body.append(data, std::min(size, kMaxErrorBodyBytes - std::min(kMaxErrorBodyBytes,
                                                                             error_body.size())));
        return true;
      }
      pending.append(data, size);
      size_t begin = 0;
      for (size_t nl; (nl = pending.find('\n', begin)) != std::string::npos; begin = nl + 1) {
        size_t end = nl;
        if (end > begin && pending[end - 1] == '\r') --end;
        if (end == begin) continue;
        if (!on_line(pending.substr(begin, end - begin))) {
          stopped = true;
          return false;
        }
      }
      pending.erase(0, begin);
      if (pending.size() > kMaxWatchLineBytes) {
        overlong = true;
        return false;
      }
      return true;
    };
    const Session::Outcome out =
        session_.Perform(request, remaining, std::min(s.request_timeout, remaining), sink);
    Observe(s, "WATCH", out.rc == CURLE_OK ? out.http_status : 0, s.clock->MonotonicNow() - start);

    if (stopped || session_.cancelled()) return Status::Ok();
    if (overlong) {
      return Status(Code::kUnavailable, "watch " + path + ": line longer than " +
                                            std::to_string(kMaxWatchLineBytes) + " bytes");
    }
    if (out.rc != CURLE_OK) return TransportError(request, out);
    if (Is2xx(out.http_status)) return Status::Ok();
    return WithTokenProblem(
        WithRbacNeed(StatusFromResponse(out.http_status, error_body, out.retry_after), request,
                     /*watch=*/true),
        *s.tokens);
  }

  void Cancel() override { session_.Cancel(); }

 private:
  std::mutex mu_;  // one watch at a time
  Session session_;
};

}  // namespace

Result<std::unique_ptr<ApiClient>> NewCurlApiClient(const ClusterConfig& config,
                                                    const ClientOptions& options,
                                                    const Clock& clock) {
  Result<std::shared_ptr<const Settings>> settings = MakeSettings(config, options, clock);
  if (!settings.ok()) return settings.status();
  auto client = std::make_unique<CurlApiClient>(std::move(settings).value());
  if (!client->valid()) return Status(Code::kUnavailable, "curl_easy_init failed");
  return std::unique_ptr<ApiClient>(std::move(client));
}

Result<std::unique_ptr<Watcher>> NewCurlWatcher(const ClusterConfig& config,
                                                const ClientOptions& options, const Clock& clock) {
  Result<std::shared_ptr<const Settings>> settings = MakeSettings(config, options, clock);
  if (!settings.ok()) return settings.status();
  auto watcher = std::make_unique<CurlWatcher>(std::move(settings).value());
  if (!watcher->valid()) return Status(Code::kUnavailable, "curl_easy_init failed");
  return std::unique_ptr<Watcher>(std::move(watcher));
}

}  // namespace leasehold::kube
