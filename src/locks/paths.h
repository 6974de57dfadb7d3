// Internal to src/locks: the REST paths of the lock objects.
#pragma once

#include <string>
#include <string_view>

namespace leasehold::locks::internal {

// The API group version whose discovery document says whether the Lease API is served.
inline constexpr const char* kCoordinationV1Path = "/apis/coordination.k8s.io/v1";

// Percent-encodes all but RFC 3986 unreserved characters. Valid Kubernetes names never need it;
// it keeps a bad --lock-name from addressing some other path.
inline std::string PathSegment(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
        c == '.' || c == '_' || c == '~') {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    }
  }
  return out;
}

inline std::string LeaseCollectionPath(std::string_view ns) {
  return std::string(kCoordinationV1Path) + "/namespaces/" + PathSegment(ns) + "/leases";
}

inline std::string LeasePath(std::string_view ns, std::string_view name) {
  return LeaseCollectionPath(ns) + "/" + PathSegment(name);
}

// `resource` is "configmaps" or "endpoints" (core group, /api/v1).
inline std::string CoreCollectionPath(std::string_view resource, std::string_view ns) {
  return "/api/v1/namespaces/" + PathSegment(ns) + "/" + std::string(resource);
}

inline std::string CoreObjectPath(std::string_view resource, std::string_view ns,
                                  std::string_view name) {
  return CoreCollectionPath(resource, ns) + "/" + PathSegment(name);
}

}  // namespace leasehold::locks::internal
