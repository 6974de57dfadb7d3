#include "base/duration.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

namespace leasehold {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

TEST_CASE("ParseGoDuration accepts Go syntax") {
  struct Case {
    const char* in;
    Duration want;
  };
  const std::vector<Case> cases = {
      {"0", Duration::zero()},
      {"+0", Duration::zero()},
      {"-0", Duration::zero()},
      {"0s", Duration::zero()},
      {"15s", seconds(15)},
      {"+15s", seconds(15)},
      {"1m30s", seconds(90)},
      {"500ms", milliseconds(500)},
      {"1h", hours(1)},
      {"2.5s", milliseconds(2500)},
      {".5s", milliseconds(500)},
      {"1.s", seconds(1)},
      {"1.5h", minutes(90)},
      {"100us", microseconds(100)},
      {"100\xc2\xb5s", microseconds(100)},  // µs, MICRO SIGN
      {"100\xce\xbcs", microseconds(100)},  // μs, GREEK SMALL LETTER MU
      {"10ns", nanoseconds(10)},
      {"1h2m3s4ms5us6ns",
       hours(1) + minutes(2) + seconds(3) + milliseconds(4) + microseconds(5) + nanoseconds(6)},
      {"30s1m", seconds(90)},  // any order, as Go
      {"0.000000001s", nanoseconds(1)},
      {"1.0000000001s", seconds(1)},  // below a nanosecond: dropped
      {"2562047h", hours(2562047)},
      {"9223372036854775807ns", nanoseconds(9223372036854775807LL)},
  };
  for (const Case& c : cases) {
    SUBCASE(c.in) {
      auto r = ParseGoDuration(c.in);
      REQUIRE_MESSAGE(r.ok(), r.status().ToString());
      CHECK(r->count() == c.want.count());
    }
  }
}

TEST_CASE("ParseGoDuration rejects with a message quoting the input") {
  struct Case {
    const char* name;
    std::string in;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"empty", "", R"("" is not a duration)"},
      {"only a sign", "-", R"("-" is not a duration)"},
      {"unknown unit", "15x", R"("15x" is not a duration)"},
      {"upper-case unit", "15S", R"("15S" is not a duration)"},
      {"days are not a unit", "1d", R"("1d" is not a duration)"},
      {"missing unit", "15", R"("15" has no unit)"},
      {"missing unit after a unit", "1m30", R"("1m30" has no unit)"},
      {"00 is not 0", "00", R"("00" has no unit)"},
      {"unit without number", "s", R"("s" is not a duration)"},
      {"lone dot", ".s", R"(".s" is not a duration)"},
      {"space", "15 s", R"("15 s" is not a duration)"},
      {"leading space", " 15s", R"(" 15s" is not a duration)"},
      {"two signs", "--1s", R"("--1s" is not a duration)"},
      {"negative", "-1s", R"("-1s" is negative)"},
      {"negative fraction", "-0.5ms", R"("-0.5ms" is negative)"},
      {"overflow in the number", "9223372036854775808ns",
       R"("9223372036854775808ns" is too large)"},
      {"overflow by the unit", "2562048h", R"("2562048h" is too large)"},
      {"overflow by the sum", "2562047h48m", R"("2562047h48m" is too large)"},
      {"overflow by the fraction", "2562047.9999h", R"("2562047.9999h" is too large)"},
      {"control byte is escaped", "1\ns", R"("1\x0as" is not a duration)"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseGoDuration(c.in);
      REQUIRE_FALSE(r.ok());
      CHECK(r.code() == Code::kBadConfig);
      CHECK(r.status().message() == c.want);
    }
  }
}

TEST_CASE("FormatGoDuration prints as Go's Duration.String") {
  struct Case {
    Duration in;
    const char* want;
  };
  const std::vector<Case> cases = {
      {Duration::zero(), "0s"},
      {nanoseconds(10), "10ns"},
      {nanoseconds(1500), "1.5\xc2\xb5s"},
      {microseconds(100), "100\xc2\xb5s"},
      {milliseconds(500), "500ms"},
      {microseconds(1500), "1.5ms"},
      {seconds(2), "2s"},
      {milliseconds(2500), "2.5s"},
      {seconds(90), "1m30s"},
      {hours(1), "1h0m0s"},
      {hours(1) + nanoseconds(1), "1h0m0.000000001s"},
      {-seconds(5), "-5s"},
      {nanoseconds(INT64_MIN), "-2562047h47m16.854775808s"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.want) { CHECK(FormatGoDuration(c.in) == c.want); }
  }
}

TEST_CASE("FormatGoDuration output parses back") {
  for (const Duration d :
       std::vector<Duration>{Duration::zero(), nanoseconds(7), microseconds(1234), milliseconds(10),
                             seconds(15), seconds(3661) + milliseconds(5), hours(100)}) {
    auto r = ParseGoDuration(FormatGoDuration(d));
    REQUIRE(r.ok());
    CHECK(r->count() == d.count());
  }
}

}  // namespace
}  // namespace leasehold
