// An in-process fake Kubernetes API server for component tests: HTTPS on 127.0.0.1 (port chosen
// by the kernel), the test PKI in test/testdata/certs, and the behaviour of a real
// kube-apiserver that leasehold depends on — resourceVersion concurrency, Lease validation,
// Status bodies byte-for-byte in the apiserver's shape, bearer-token and client-certificate
// authentication, RBAC-style denials, watches — plus fault injection and a request log.
//
//   leasehold::testing::FakeApiServer server;
//   RealClock clock;
//   auto client = std::move(kube::NewCurlApiClient(server.ClientConfig(), {}, clock)).value();
//   testing::Fault fault;
//   fault.method = "PUT";
//   fault.http_status = 503;
//   server.InjectFault(fault);  // the next PUT gets 503 ServiceUnavailable
//
// Everything is thread-safe. Objects are JSON text; `resource` is the plural resource name.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "kube/cluster_config.h"
#include "kube/curl_api_client.h"

namespace leasehold::testing {

// The token and user every server accepts unless told otherwise.
inline constexpr const char* kFakeToken = "fake-token";
inline constexpr const char* kFakeUser = "system:serviceaccount:ns:sa";

// Paths of the committed test PKI (see test/testdata/certs/README.md), e.g. TestCert("ca.crt").
std::string TestCert(const std::string& file);

struct FakeApiServerOptions {
  // Accepted bearer tokens and the user each authenticates as (used in 403 messages).
  std::map<std::string, std::string> tokens = {{kFakeToken, kFakeUser}};
  // Serve coordination.k8s.io/v1 (discovery and leases). Off models a cluster without the
  // Lease API: every path under /apis/coordination.k8s.io answers 404.
  bool lease_api = true;
  // The server's certificate and key; the client CA that verifies client certificates.
  std::string cert_file = TestCert("server.crt");
  std::string key_file = TestCert("server.key");
  std::string client_ca_file = TestCert("ca.crt");
  // For creationTimestamp values; nullptr = the real clock. Must outlive the server.
  const Clock* clock = nullptr;
};

struct RecordedRequest {
  std::string method;
  std::string path;   // without the query
  std::string query;  // raw, without '?'; "" when none
  std::string body;
  std::string token;           // the bearer token sent; "" when none
  std::string client_cert_cn;  // CN of a verified client certificate; "" when none
  std::string content_type;
  std::string user_agent;
  int remote_port = 0;  // tells connections apart
  int status = 0;       // the answer's HTTP status; 0 for a dropped connection
};

// Answers matching requests with an error instead of serving them (checked before
// authentication, as an overloaded apiserver or a proxy would answer).
struct Fault {
  std::string method;       // "" = any
  std::string path_prefix;  // "" = any; compared with the path without query
  int count = 1;            // how many matching requests it answers; -1 = until cleared
  int http_status = 500;
  std::string reason;                      // "" = the apiserver's usual reason for http_status
  std::string message;                     // "" = a default message
  std::optional<int> retry_after_seconds;  // sends a Retry-After header
  std::optional<std::string> raw_body;     // sent as-is (text/plain) instead of a Status
};

// Holds matching requests before serving them, like a stuck apiserver or network path. A held
// request is then served normally (so a write the client gave up on may still happen), unless
// the server is stopping.
struct Hang {
  std::string method;                         // "" = any
  std::string path_prefix;                    // "" = any
  int count = 1;                              // -1 = until cleared
  Duration duration = std::chrono::hours(1);  // ReleaseHangs() ends it sooner
};

enum class DownMode {
  kUp,
  kServiceUnavailable,  // every request gets 503 ServiceUnavailable
  kDropConnections,     // every request's connection is closed without an answer
};

class FakeApiServer {
 public:
  explicit FakeApiServer(FakeApiServerOptions options = {});
  ~FakeApiServer();  // stops serving; held requests and watches end
  FakeApiServer(const FakeApiServer&) = delete;
  FakeApiServer& operator=(const FakeApiServer&) = delete;

  int port() const { return port_; }
  std::string url() const;  // "https://127.0.0.1:<port>"
  // A config that trusts the test CA and sends `token` ("" = none).
  kube::ClusterConfig ClientConfig(const std::string& token = kFakeToken) const;

  // --- objects, as another writer would see them -------------------------------------------
  // The stored object; nullopt when absent.
  std::optional<std::string> Get(const std::string& resource, const std::string& ns,
                                 const std::string& name) const;
  // Creates or replaces the object (namespace/name taken from the arguments, kind/apiVersion
  // filled in), assigning a new resourceVersion and notifying watches. Returns the stored JSON.
  std::string Put(const std::string& resource, const std::string& ns, const std::string& name,
                  const std::string& json);
  // Applies a JSON merge patch (RFC 7386) to an existing object and always assigns a new
  // resourceVersion, as a competing writer would. Returns the stored JSON; "" when absent.
  std::string Bump(const std::string& resource, const std::string& ns, const std::string& name,
                   const std::string& merge_patch = "{}");
  bool Delete(const std::string& resource, const std::string& ns, const std::string& name);
  // The object's metadata.resourceVersion; "" when absent.
  std::string ResourceVersion(const std::string& resource, const std::string& ns,
                              const std::string& name) const;
  // Events POSTed (core v1 or events.k8s.io/v1), as stored.
  std::vector<std::string> Events() const;
  // Forgets history: a watch from a resourceVersion older than now gets 410 Expired.
  void Compact();
  // Ends every open watch stream normally (what its clients see when an apiserver restarts, or
  // a stream reaches its timeoutSeconds): they watch again from the last version they saw.
  void EndWatches();

  // --- authentication and authorization -----------------------------------------------------
  void SetTokens(std::map<std::string, std::string> tokens);
  // Client certificates signed by the client CA authenticate as their CN (default on).
  void SetAcceptClientCerts(bool accept);
  // Requests for `verb` (get, list, watch, create, update, patch, delete) on `resource` get
  // 403 Forbidden with the apiserver's RBAC message.
  void Deny(const std::string& verb, const std::string& resource);
  void ClearDenies();

  // --- faults -------------------------------------------------------------------------------
  void InjectFault(Fault fault);
  void InjectHang(Hang hang);
  void ClearFaults();   // faults and hang rules (requests already held stay held)
  void ReleaseHangs();  // lets every held request go on now
  int held() const;     // requests being held right now
  // Blocks until at least `n` requests are held, or `timeout` (real time) passes.
  bool WaitForHeld(int n, std::chrono::milliseconds timeout) const;
  void SetDown(DownMode mode);
  void SetLeaseApi(bool enabled);
  // Sends a BOOKMARK with the current resourceVersion to every watch that asked for them.
  void SendBookmarks();

  // --- observation --------------------------------------------------------------------------
  std::vector<RecordedRequest> Requests() const;
  void ClearRequests();
  // Requests whose method matches ("" = any) and whose path starts with `path_prefix`.
  size_t CountRequests(const std::string& method, const std::string& path_prefix = "") const;
  // TLS connections accepted so far (each completed handshake).
  int connections() const;
  // Watches currently streaming.
  int watches() const;
  // Blocks until `n` requests have been answered (or dropped), or `timeout` passes.
  bool WaitForRequests(size_t n, std::chrono::milliseconds timeout) const;

  struct Impl;  // public so the .cpp's free functions can name it

 private:
  std::unique_ptr<Impl> impl_;
  int port_ = 0;
};

}  // namespace leasehold::testing
