#include "base/listen_address.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace leasehold {
namespace {

std::string Describe(const ListenAddress& a) {
  std::string out;
  for (const ListenEndpoint& ep : a.endpoints) {
    if (!out.empty()) out += " ";
    out += EndpointLabel(ep, a.port);
    if (!ep.required) out += "(optional)";
  }
  return out;
}

TEST_CASE("ParseListenAddress accepts") {
  struct Case {
    const char* in;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"localhost:4040", "127.0.0.1:4040 [::1]:4040(optional)"},
      {"127.0.0.1:4040", "127.0.0.1:4040"},
      {"[::1]:4040", "[::1]:4040"},
      {":4040", "0.0.0.0:4040"},
      {"0.0.0.0:4040", "0.0.0.0:4040"},
      {"[::]:8080", "[::]:8080"},
      {"10.1.2.3:80", "10.1.2.3:80"},
      {"127.0.0.1:0", "127.0.0.1:0"},
      {"localhost:65535", "127.0.0.1:65535 [::1]:65535(optional)"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.in) {
      auto r = ParseListenAddress(c.in);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      CHECK(Describe(*r) == c.want);
    }
  }
}

TEST_CASE("ParseListenAddress rejects") {
  const std::string examples = " (examples: localhost:4040, 127.0.0.1:4040, [::1]:4040, :4040)";
  struct Case {
    const char* name;
    std::string in;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"empty", "", "\"\" is not a listen address: missing :port"},
      {"no port", "localhost", "\"localhost\" is not a listen address: missing :port"},
      {"empty port",
       "localhost:", "\"localhost:\" is not a listen address: the port must be 0-65535"},
      {"port too big", ":65536", "\":65536\" is not a listen address: the port must be 0-65535"},
      {"port not a number", ":http", "\":http\" is not a listen address: the port must be 0-65535"},
      {"negative port", ":-1", "\":-1\" is not a listen address: the port must be 0-65535"},
      {"host name", "example.com:80",
       "\"example.com:80\" is not a listen address: the host must be localhost, an IPv4 address "
       "or a bracketed IPv6 address"},
      {"short IPv4", "1.2.3:80",
       "\"1.2.3:80\" is not a listen address: the host must be localhost, an IPv4 address or a "
       "bracketed IPv6 address"},
      {"bare IPv6", "::1:4040",
       "\"::1:4040\" is not a listen address: put an IPv6 address in brackets"},
      {"unclosed bracket", "[::1:4040", "\"[::1:4040\" is not a listen address: missing ']'"},
      {"bracket without port", "[::1]", "\"[::1]\" is not a listen address: missing :port"},
      {"IPv4 in brackets", "[127.0.0.1]:80",
       "\"[127.0.0.1]:80\" is not a listen address: not an IPv6 address inside the brackets"},
      {"newline", "a\n:1",
       "\"a\\x0a:1\" is not a listen address: the host must be localhost, an IPv4 address or a "
       "bracketed IPv6 address"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseListenAddress(c.in);
      REQUIRE_FALSE(r.ok());
      CHECK(r.code() == Code::kBadConfig);
      CHECK(r.status().message() == c.want + examples);
    }
  }
}

}  // namespace
}  // namespace leasehold
