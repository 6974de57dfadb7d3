#include "kube/base64.h"

#include <doctest/doctest.h>

#include <optional>
#include <string>

namespace leasehold::kube {
namespace {

TEST_CASE("DecodeBase64") {
  struct Case {
    const char* name;
    std::string in;
    std::optional<std::string> want;  // nullopt: must be kMalformed
  };
  const Case cases[] = {
      {"empty", "", ""},
      {"one byte", "Zg==", "f"},
      {"two bytes", "Zm8=", "fo"},
      {"three bytes", "Zm9v", "foo"},
      {"longer", "Zm9vYmFy", "foobar"},
      {"no padding, one byte", "Zg", "f"},
      {"no padding, two bytes", "Zm8", "fo"},
      {"line breaks and spaces", "Zm9v\nYm\r\n Fy\n", "foobar"},
      {"all alphabet", "+/+/", "\xfb\xff\xbf"},
      {"binary", "AAEC/w==", std::string("\x00\x01\x02\xff", 4)},
      {"URL-safe alphabet", "-_-_", std::nullopt},
      {"stray character", "Zm9v!", std::nullopt},
      {"one leftover character", "Zm9vY", std::nullopt},
      {"too much padding", "Zg===", std::nullopt},
      {"too little padding", "Zg=", std::nullopt},
      {"padding on a full group", "Zm9v=", std::nullopt},
      {"data after padding", "Zg==Zg==", std::nullopt},
      {"non-zero trailing bits", "Zh==", std::nullopt},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Result<std::string> got = DecodeBase64(c.in);
    if (c.want) {
      REQUIRE(got.ok());
      CHECK(got.value() == *c.want);
    } else {
      CHECK(got.code() == Code::kMalformed);
    }
  }
}

}  // namespace
}  // namespace leasehold::kube
