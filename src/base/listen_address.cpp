#include "base/listen_address.h"

#include <arpa/inet.h>

#include "base/text.h"

namespace leasehold {
namespace {

constexpr const char* kExamples = "(examples: localhost:4040, 127.0.0.1:4040, [::1]:4040, :4040)";

Status Bad(std::string_view text, const std::string& why) {
  return Status(Code::kBadConfig,
                Quote(text) + " is not a listen address: " + why + " " + kExamples);
}

bool IsIpv4(const std::string& host) {
  in_addr a{};
  return inet_pton(AF_INET, host.c_str(), &a) == 1;
}

bool IsIpv6(const std::string& host) {
  in6_addr a{};
  return inet_pton(AF_INET6, host.c_str(), &a) == 1;
}

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  std::string host;
  std::string_view port_text;
  bool bracketed = false;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return Bad(text, "missing ']'");
    host = std::string(text.substr(1, close - 1));
    const std::string_view rest = text.substr(close + 1);
    if (rest.empty() || rest.front() != ':') return Bad(text, "missing :port");
    port_text = rest.substr(1);
    bracketed = true;
  } else {
    const size_t colon = text.rfind(':');
    if (colon == std::string_view::npos) return Bad(text, "missing :port");
    host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
    if (host.find(':') != std::string::npos) {
      return Bad(text, "put an IPv6 address in brackets");
    }
  }

  if (port_text.empty() || port_text.size() > 5) return Bad(text, "the port must be 0-65535");
  int port = 0;
  for (const char c : port_text) {
    if (c < '0' || c > '9') return Bad(text, "the port must be 0-65535");
    port = port * 10 + (c - '0');
  }
  if (port > 65535) return Bad(text, "the port must be 0-65535");

  ListenAddress out;
  out.port = port;
  if (bracketed) {
    if (!IsIpv6(host)) return Bad(text, "not an IPv6 address inside the brackets");
    out.endpoints.push_back({host, true, true});
  } else if (host.empty() || host == "0.0.0.0") {
    out.endpoints.push_back({"0.0.0.0", false, true});
  } else if (host == "localhost") {
    out.endpoints.push_back({"127.0.0.1", false, true});
    out.endpoints.push_back({"::1", true, false});
  } else if (IsIpv4(host)) {
    out.endpoints.push_back({host, false, true});
  } else {
    return Bad(text, "the host must be localhost, an IPv4 address or a bracketed IPv6 address");
  }
  return out;
}

std::string EndpointLabel(const ListenEndpoint& endpoint, int port) {
  if (endpoint.ipv6) return "[" + endpoint.host + "]:" + std::to_string(port);
  return endpoint.host + ":" + std::to_string(port);
}

bool IsLoopbackAddress(const sockaddr_storage& a) {
  if (a.ss_family == AF_INET) {
    const auto& in = reinterpret_cast<const sockaddr_in&>(a);
    return (ntohl(in.sin_addr.s_addr) >> 24) == 127;
  }
  if (a.ss_family == AF_INET6) {
    const in6_addr& in6 = reinterpret_cast<const sockaddr_in6&>(a).sin6_addr;
    if (IN6_IS_ADDR_LOOPBACK(&in6)) return true;
    return IN6_IS_ADDR_V4MAPPED(&in6) && in6.s6_addr[12] == 127;
  }
  return false;
}

bool IsLoopbackHost(const std::string& host) {
  sockaddr_storage a{};
  if (inet_pton(AF_INET, host.c_str(), &reinterpret_cast<sockaddr_in&>(a).sin_addr) == 1) {
    a.ss_family = AF_INET;
  } else if (inet_pton(AF_INET6, host.c_str(), &reinterpret_cast<sockaddr_in6&>(a).sin6_addr) ==
             1) {
    a.ss_family = AF_INET6;
  }
  return IsLoopbackAddress(a);
}

}  // namespace leasehold
