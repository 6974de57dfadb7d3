#include "kube/names.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace leasehold::kube {
namespace {

TEST_CASE("Kubernetes name rules") {
  struct Case {
    std::string in;
    bool subdomain;
    bool label;
  };
  const std::vector<Case> cases = {
      {"a", true, true},
      {"my-app", true, true},
      {"0abc9", true, true},
      {"db.primary", true, false},
      {"", false, false},
      {"-a", false, false},
      {"a-", false, false},
      {"A", false, false},
      {"a_b", false, false},
      {"a..b", false, false},
      {".a", false, false},
      {"a.", false, false},
      {std::string(63, 'a'), true, true},
      {std::string(64, 'a'), true, false},
      {std::string(253, 'a'), true, false},
      {std::string(254, 'a'), false, false},
  };
  for (const Case& c : cases) {
    CAPTURE(c.in);
    CHECK(IsDns1123Subdomain(c.in) == c.subdomain);
    CHECK(IsDns1123Label(c.in) == c.label);
  }
}

TEST_CASE("LabelKeyProblem") {
  struct Case {
    std::string key;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"role", ""},
      {"leasehold.io/role", ""},
      {"a/B_c.d-9", ""},
      {"x/" + std::string(63, 'z'), ""},
      {"x/" + std::string(64, 'z'), "the name part is longer than 63 characters"},
      {"", "the name part is empty"},
      {"x/", "the name part is empty"},
      {"/role", "the prefix \"\" is not a DNS subdomain (lower-case letters, digits, '-' and '.')"},
      {"Example.com/role",
       "the prefix \"Example.com\" is not a DNS subdomain (lower-case letters, digits, '-' and "
       "'.')"},
      {"a/b/c", "the name part may hold only letters, digits, '-', '_' and '.'"},
      {"-role", "the name part must begin and end with a letter or digit"},
      {"role.", "the name part must begin and end with a letter or digit"},
      {"ro le", "the name part may hold only letters, digits, '-', '_' and '.'"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.key);
    CHECK(LabelKeyProblem(c.key) == c.want);
  }
}

}  // namespace
}  // namespace leasehold::kube
