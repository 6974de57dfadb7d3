#include "base/rfc3339.h"

#include <doctest/doctest.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"

namespace leasehold {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

SysTime FromUnix(int64_t secs, int64_t nanos = 0) {
  return SysTime(std::chrono::duration_cast<SysTime::duration>(seconds(secs) + nanoseconds(nanos)));
}

constexpr int64_t k20260102T030405 = 1767323045;

TEST_CASE("FormatMicroTime writes six fraction digits, truncating") {
  struct Case {
    const char* name;
    SysTime t;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"epoch", FromUnix(0), "1970-01-01T00:00:00.000000Z"},
      {"whole second gets .000000", FromUnix(k20260102T030405), "2026-01-02T03:04:05.000000Z"},
      {"nanoseconds are dropped", FromUnix(k20260102T030405, 123456789),
       "2026-01-02T03:04:05.123456Z"},
      {".999999999 stays in its second", FromUnix(k20260102T030405, 999999999),
       "2026-01-02T03:04:05.999999Z"},
      {"one microsecond", FromUnix(k20260102T030405, 1000), "2026-01-02T03:04:05.000001Z"},
      {"999 ns is not a microsecond", FromUnix(k20260102T030405, 999),
       "2026-01-02T03:04:05.000000Z"},
      {"leap day end", FromUnix(1709251199, 999999000), "2024-02-29T23:59:59.999999Z"},
      {"2000 is a leap year", FromUnix(951825600), "2000-02-29T12:00:00.000000Z"},
      {"2100 is not a leap year", FromUnix(4107542400 - 1), "2100-02-28T23:59:59.000000Z"},
      {"before the epoch floors", FromUnix(0, -1), "1969-12-31T23:59:59.999999Z"},
      {"last SysTime", SysTime::max(), "2262-04-11T23:47:16.854775Z"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(FormatMicroTime(c.t) == c.want); }
  }
}

TEST_CASE("FormatRfc3339Seconds writes whole seconds, truncating") {
  struct Case {
    const char* name;
    SysTime t;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"whole second", FromUnix(k20260102T030405), "2026-01-02T03:04:05Z"},
      {".999999999 stays in its second", FromUnix(k20260102T030405, 999999999),
       "2026-01-02T03:04:05Z"},
      {"before the epoch floors", FromUnix(-1, 500000000), "1969-12-31T23:59:59Z"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(FormatRfc3339Seconds(c.t) == c.want); }
  }
}

TEST_CASE("FormatUnixMicros covers years 0001-9999") {
  struct Case {
    const char* name;
    UnixMicros t;
    bool fraction;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"Go zero time", kGoZeroTimeMicros, true, "0001-01-01T00:00:00.000000Z"},
      {"last instant of 9999", 253402300799LL * 1000000 + 999999, true,
       "9999-12-31T23:59:59.999999Z"},
      {"last second of 9999 without fraction", 253402300799LL * 1000000 + 999999, false,
       "9999-12-31T23:59:59Z"},
      {"year 10000 clamps", 253402300800LL * 1000000, false, "9999-12-31T23:59:59Z"},
      {"year -1 clamps", -62167219200LL * 1000000 - 1, false, "0000-01-01T00:00:00Z"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(FormatUnixMicros(c.t, c.fraction) == c.want); }
  }
}

TEST_CASE("ParseRfc3339Micros") {
  constexpr UnixMicros kBase = k20260102T030405 * 1000000;
  struct Case {
    const char* name;
    const char* text;
    std::optional<UnixMicros> want;  // nullopt: Invalid
  };
  const std::vector<Case> cases = {
      {"Z, no fraction", "2026-01-02T03:04:05Z", kBase},
      {"six digits", "2026-01-02T03:04:05.123456Z", kBase + 123456},
      {"one digit", "2026-01-02T03:04:05.1Z", kBase + 100000},
      {"nine digits truncate", "2026-01-02T03:04:05.123456789Z", kBase + 123456},
      {"many nines truncate, never round up", "2026-01-02T03:04:05.99999999999999999999Z",
       kBase + 999999},
      {"all zeros", "2026-01-02T03:04:05.000000Z", kBase},
      {"positive offset", "2026-01-02T05:04:05+02:00", kBase},
      {"negative offset with minutes", "2026-01-01T21:34:05-05:30", kBase},
      {"+00:00", "2026-01-02T03:04:05+00:00", kBase},
      {"-00:00", "2026-01-02T03:04:05-00:00", kBase},
      {"offset crosses a year", "2025-12-31T23:30:00-01:00", 1767227400LL * 1000000},
      {"fraction and offset", "2026-01-02T04:04:05.5+01:00", kBase + 500000},
      {"leap day 2024", "2024-02-29T23:59:59Z", 1709251199LL * 1000000},
      {"leap day 2000", "2000-02-29T12:00:00Z", 951825600LL * 1000000},
      {"pre-epoch", "1969-12-31T23:59:59.999999Z", -1},
      {"Go zero time", "0001-01-01T00:00:00Z", kGoZeroTimeMicros},
      {"year 9999", "9999-12-31T23:59:59.999999Z", 253402300799LL * 1000000 + 999999},
      {"year 0000", "0000-01-01T00:00:00Z", -62167219200LL * 1000000},
      // Garbage.
      {"empty", "", std::nullopt},
      {"word", "garbage", std::nullopt},
      {"date only", "2026-01-02", std::nullopt},
      {"no zone", "2026-01-02T03:04:05", std::nullopt},
      {"no zone with fraction", "2026-01-02T03:04:05.123", std::nullopt},
      {"space for T", "2026-01-02 03:04:05Z", std::nullopt},
      {"lowercase t", "2026-01-02t03:04:05Z", std::nullopt},
      {"lowercase z", "2026-01-02T03:04:05z", std::nullopt},
      {"one-digit month", "2026-1-02T03:04:05Z", std::nullopt},
      {"five-digit year", "20260-01-02T03:04:05Z", std::nullopt},
      {"negative year", "-2026-01-02T03:04:05Z", std::nullopt},
      {"month 0", "2026-00-02T03:04:05Z", std::nullopt},
      {"month 13", "2026-13-02T03:04:05Z", std::nullopt},
      {"day 0", "2026-01-00T03:04:05Z", std::nullopt},
      {"Jan 32", "2026-01-32T03:04:05Z", std::nullopt},
      {"Apr 31", "2026-04-31T03:04:05Z", std::nullopt},
      {"Feb 29 in 2023", "2023-02-29T00:00:00Z", std::nullopt},
      {"Feb 29 in 2100", "2100-02-29T00:00:00Z", std::nullopt},
      {"hour 24", "2026-01-02T24:00:00Z", std::nullopt},
      {"minute 60", "2026-01-02T03:60:00Z", std::nullopt},
      {"leap second", "2026-01-02T03:04:60Z", std::nullopt},
      {"empty fraction", "2026-01-02T03:04:05.Z", std::nullopt},
      {"comma fraction", "2026-01-02T03:04:05,5Z", std::nullopt},
      {"trailing junk", "2026-01-02T03:04:05Zjunk", std::nullopt},
      {"trailing space", "2026-01-02T03:04:05Z ", std::nullopt},
      {"leading space", " 2026-01-02T03:04:05Z", std::nullopt},
      {"offset without colon", "2026-01-02T03:04:05+0100", std::nullopt},
      {"one-digit offset hour", "2026-01-02T03:04:05+1:00", std::nullopt},
      {"offset hour 24", "2026-01-02T03:04:05+24:00", std::nullopt},
      {"offset minute 60", "2026-01-02T03:04:05+01:60", std::nullopt},
      {"truncated offset", "2026-01-02T03:04:05+01:", std::nullopt},
      {"letters in digits", "2026-0a-02T03:04:05Z", std::nullopt},
      {"quoted", "\"2026-01-02T03:04:05Z\"", std::nullopt},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto got = ParseRfc3339Micros(c.text);
      if (c.want) {
        REQUIRE_MESSAGE(got.ok(), got.status().ToString());
        CHECK(*got == *c.want);
      } else {
        CHECK(got.code() == Code::kMalformed);
      }
    }
  }
}

TEST_CASE("ParseRfc3339 rejects instants SysTime cannot hold") {
  struct Case {
    const char* name;
    const char* text;
    Code want;
  };
  const std::vector<Case> cases = {
      {"2026", "2026-01-02T03:04:05.123456Z", Code::kOk},
      {"1678", "1678-01-01T00:00:00Z", Code::kOk},
      {"1677", "1677-01-01T00:00:00Z", Code::kMalformed},
      {"2262 after the last nanosecond", "2262-04-12T00:00:00Z", Code::kMalformed},
      {"Go zero time", "0001-01-01T00:00:00Z", Code::kMalformed},
      {"garbage", "x", Code::kMalformed},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(ParseRfc3339(c.text).code() == c.want); }
  }
}

TEST_CASE("MicroTime round-trips to the microsecond") {
  const std::vector<SysTime> instants = {
      FromUnix(0),
      FromUnix(k20260102T030405, 123456789),
      FromUnix(-1, 1),
      FromUnix(951825600, 999999999),
      FromUnix(4107542400, 1000),
      SysTime::max(),
  };
  for (SysTime t : instants) {
    CAPTURE(FormatMicroTime(t));
    auto back = ParseRfc3339(FormatMicroTime(t));
    REQUIRE(back.ok());
    CHECK(*back == std::chrono::floor<std::chrono::microseconds>(t));
    auto seconds_back = ParseRfc3339(FormatRfc3339Seconds(t));
    REQUIRE(seconds_back.ok());
    CHECK(*seconds_back == std::chrono::floor<std::chrono::seconds>(t));
  }
}

TEST_CASE("FormatRfc3339Millis") {
  struct Case {
    const char* name;
    SysTime t;
    const char* want;
  };
  const SysTime fake_start = FakeClock().SystemNow();
  const std::vector<Case> cases = {
      {"epoch", SysTime{}, "1970-01-01T00:00:00.000Z"},
      {"the FakeClock's start", fake_start, "2026-01-02T03:00:00.000Z"},
      {"milliseconds kept",
       fake_start + std::chrono::duration_cast<SysTime::duration>(seconds(245) + milliseconds(123)),
       "2026-01-02T03:04:05.123Z"},
      {"sub-millisecond dropped, never rounded up",
       fake_start + std::chrono::duration_cast<SysTime::duration>(nanoseconds(999999)),
       "2026-01-02T03:00:00.000Z"},
      {"before 1970 floors", SysTime{} - milliseconds(1), "1969-12-31T23:59:59.999Z"},
      {"leap day", SysTime{} + seconds(951782400), "2000-02-29T00:00:00.000Z"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(FormatRfc3339Millis(c.t) == c.want); }
  }
}

}  // namespace
}  // namespace leasehold
