// The Kubernetes name and label rules (apimachinery's validation package), for flags and values
// that end up in API paths, object names and label keys.
#pragma once

#include <string>
#include <string_view>

namespace leasehold::kube {

// RFC 1123 subdomain, as object names (a Lease, a ConfigMap, a pod) must be: at most 253
// characters, dot-separated labels of lower-case letters, digits and '-', each beginning and
// ending with a letter or digit.
bool IsDns1123Subdomain(std::string_view s);

// RFC 1123 label, as namespaces must be: one such label of at most 63 characters.
bool IsDns1123Label(std::string_view s);

// Label key syntax: an optional DNS-1123 subdomain prefix and "/", then a name of at most 63
// characters: alphanumerics at both ends, '-', '_' and '.' inside. "" when valid, else what is
// wrong.
std::string LabelKeyProblem(std::string_view key);

}  // namespace leasehold::kube
