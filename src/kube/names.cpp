#include "kube/names.h"

namespace leasehold::kube {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsLabelNameChar(char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; }

// One DNS label without its length limit: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsLabelPart(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return IsLowerAlnum(s.front()) && IsLowerAlnum(s.back());
}

}  // namespace

bool IsDns1123Label(std::string_view s) { return s.size() <= 63 && IsLabelPart(s); }

bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    if (!IsLabelPart(s.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string LabelKeyProblem(std::string_view key) {
  std::string_view name = key;
  const size_t slash = key.find('/');
  if (slash != std::string_view::npos) {
    const std::string_view prefix = key.substr(0, slash);
    if (!IsDns1123Subdomain(prefix)) {
      return "the prefix \"" + std::string(prefix) +
             "\" is not a DNS subdomain (lower-case letters, digits, '-' and '.')";
    }
    name = key.substr(slash + 1);
  }
  if (name.empty()) return "the name part is empty";
  if (name.size() > 63) return "the name part is longer than 63 characters";
  for (const char c : name) {
    if (!IsLabelNameChar(c)) {
      return "the name part may hold only letters, digits, '-', '_' and '.'";
    }
  }
  if (!IsAlnum(name.front()) || !IsAlnum(name.back())) {
    return "the name part must begin and end with a letter or digit";
  }
  return "";
}

}  // namespace leasehold::kube
