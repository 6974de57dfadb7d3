// The seam between the locks and the Kubernetes REST transport. The real implementation
// (libcurl, one keep-alive connection) lives beside this header; tests use fakes.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "base/clock.h"
#include "base/status.h"
#include "kube/object_ref.h"

namespace leasehold::kube {

struct Request {
  std::string method;  // "GET", "POST", "PUT", "PATCH", "DELETE"
  std::string path;    // absolute API path with query, e.g. "/apis/coordination.k8s.io/v1/..."
  std::string body;    // empty for GET
  std::string content_type = "application/json";  // PATCH uses application/merge-patch+json
  // The object the request is about; nullopt for one that is about none (discovery). A refused
  // request's error names the permission it needed from this, never by parsing `path`.
  std::optional<ObjectRef> object = std::nullopt;
};

// A request on `object` with its path: POST goes to the collection (the new object's name is in
// the body), every other method to the object itself.
inline Request ObjectRequest(std::string method, const ObjectRef& object, std::string body = "") {
  std::string path = method == "POST" ? object.CollectionPath() : object.Path();
  return Request{std::move(method), std::move(path), std::move(body), "application/json", object};
}

struct Response {
  long http_status = 0;
  std::string body;
};

class ApiClient {
 public:
  virtual ~ApiClient() = default;

  // Sends one request. It never runs past `deadline` (monotonic) nor past the client's own
  // per-request timeout, whichever comes first (DeadlineExceeded). A 2xx answer is returned as
  // a Response; anything else is a Status whose code comes from the Kubernetes Status body's
  // `reason` (or from the HTTP code when there is none) and whose message is the server's.
  virtual Result<Response> Do(const Request& request, MonoTime deadline) = 0;
};

}  // namespace leasehold::kube
