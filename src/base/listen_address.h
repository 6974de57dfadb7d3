// --http-address: where the local API listens. Parsed and validated once, before any socket.
#pragma once

#include <sys/socket.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace leasehold {

struct ListenEndpoint {
  std::string host;  // numeric: "127.0.0.1", "::1", "0.0.0.0", "::"
  bool ipv6 = false;
  // False only for the ::1 half of "localhost": if that bind fails (no IPv6 on the host), the
  // server warns and carries on with IPv4 alone.
  bool required = true;
};

struct ListenAddress {
  // In bind order; the first one is always required.
  std::vector<ListenEndpoint> endpoints;
  // 0 asks the kernel for a free port (tests); every endpoint then shares the one it gave.
  int port = 0;
};

// The local API's address when --http-address is not given: where the agent listens, and where
// `leasehold probe` and `leasehold gate` ask when told nothing else.
inline constexpr const char* kDefaultHttpAddress = "localhost:4040";

// Accepted forms:
//   localhost:4040   127.0.0.1 and ::1 (the default, kDefaultHttpAddress)
//   127.0.0.1:4040   one IPv4 address          [::1]:4040   one IPv6 address
//   :4040            all IPv4 (= 0.0.0.0:4040) [::]:4040    all IPv6
// Other host names are refused rather than resolved: resolution could silently pick an
// interface other than the one meant. The error message quotes the value and gives examples.
Result<ListenAddress> ParseListenAddress(std::string_view text);

// 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104: a peer inside this pod's network namespace. The
// local API takes requests that change state only from such a peer, as accept() reports it.
bool IsLoopbackAddress(const sockaddr_storage& address);
// The same for a numeric host of ListenEndpoint ("127.0.0.1", "::"); false for anything else.
bool IsLoopbackHost(const std::string& host);

// "127.0.0.1:4040" or "[::1]:4040", for logs.
std::string EndpointLabel(const ListenEndpoint& endpoint, int port);

}  // namespace leasehold
