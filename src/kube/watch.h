// Streaming watches (GET ...?watch=1), for followers that want to hear about a change of the lock
// object at once instead of at their next poll. A watch runs on a connection of its own, so a
// long-lived stream never delays the elector's requests on the ApiClient.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "kube/api_client.h"
#include "kube/object_ref.h"

namespace leasehold::kube {

class Watcher {
 public:
  virtual ~Watcher() = default;

  // Sends `request` (see WatchRequest) and calls `on_line`, on this
  // thread, once per newline-terminated line of the stream: one JSON watch event
  // ({"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}, see ParseWatchEvent),
  // without the newline; empty lines are skipped and an unterminated last line is dropped.
  // `on_line` returns false to stop. Returns:
  //   OK               on_line returned false, Cancel() was called, or the server ended the
  //                    stream (its timeoutSeconds ran out): re-watch from the last
  //                    resourceVersion seen;
  //   DeadlineExceeded `deadline` (monotonic) passed first, or had passed before sending;
  //   the mapped error for a non-2xx answer (Gone for a too-old resourceVersion, Forbidden, ...;
  //                    a 401 makes the next request re-read the token file, as ApiClient::Do);
  //   Unavailable      for transport failures (refused, reset, TLS).
  // Set timeoutSeconds in the path a little below `deadline` so that the normal end is OK.
  // Connecting is bounded by ClientOptions::request_timeout; ClientOptions::observer sees each
  // watch once, at its end, with verb "WATCH". Calls are serialized.
  virtual Status Watch(const Request& request, MonoTime deadline,
                       const std::function<bool(const std::string& line)>& on_line) = 0;

  // Thread-safe. Makes a Watch in progress return OK promptly (its connection is shut down, so
  // this does not wait for the next event), and every later Watch return OK at once: call it
  // when shutting down.
  virtual void Cancel() = 0;
};

// The watch of one named object: a GET of "<collection>?watch=1&fieldSelector=metadata.name%3D
// <name>[&resourceVersion=<rv>]&timeoutSeconds=<n>&allowWatchBookmarks=true", about `object`. An
// empty resource_version means "send the current state first" (a synthetic ADDED), as the
// apiserver does.
Request WatchRequest(const ObjectRef& object, const std::string& resource_version,
                     std::chrono::seconds timeout);

struct WatchEvent {
  std::string type;              // "ADDED", "MODIFIED", "DELETED" or "BOOKMARK"
  std::string object;            // the event's object, as compact JSON text
  std::string resource_version;  // the object's metadata.resourceVersion; "" when absent
};

// Parses one watch line. An ERROR event is returned as its Status, mapped as a non-2xx answer
// would be (e.g. kGone for "too old resource version"); a line that is not a watch event is
// kMalformed. Accepts any bytes.
Result<WatchEvent> ParseWatchEvent(std::string_view line);

}  // namespace leasehold::kube
