// Which Kubernetes object a request is about, and the one place its REST paths are built. The
// locks, the lock watcher and the announcer name objects with an ObjectRef; the transport reads
// it back (not the URL) to say which permission a refused request needed. Header-only, so that
// src/locks uses it without linking the transport.
#pragma once

#include <string>
#include <string_view>

namespace leasehold::kube {

// Percent-encodes all but RFC 3986 unreserved characters, for path segments and query values.
// Valid Kubernetes names never need it; it keeps a bad --lock-name from addressing some other
// path.
inline std::string PercentEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
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

// A namespaced object, or (with an empty name) its collection, as RBAC and the REST paths name
// it.
struct ObjectRef {
  std::string group;     // API group; "" for the core group (served under /api/v1)
  std::string version;   // e.g. "v1"
  std::string resource;  // lower-case plural, as RBAC names it: "leases", "configmaps", "pods"
  std::string name_space;
  std::string name;  // "" for the collection

  // "/api/<version>" for the core group, else "/apis/<group>/<version>".
  std::string GroupVersionPath() const {
    if (group.empty()) return "/api/" + PercentEncode(version);
    return "/apis/" + PercentEncode(group) + "/" + PercentEncode(version);
  }
  // "<group version>/namespaces/<ns>/<resource>", each segment percent-encoded.
  std::string CollectionPath() const {
    return GroupVersionPath() + "/namespaces/" + PercentEncode(name_space) + "/" +
           PercentEncode(resource);
  }
  // CollectionPath() + "/<name>", or the collection when the name is empty.
  std::string Path() const {
    return name.empty() ? CollectionPath() : CollectionPath() + "/" + PercentEncode(name);
  }

  bool operator==(const ObjectRef& o) const {
    return group == o.group && version == o.version && resource == o.resource &&
           name_space == o.name_space && name == o.name;
  }
};

}  // namespace leasehold::kube
