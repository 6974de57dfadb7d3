#include "server/format.h"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

namespace leasehold::server {
namespace {

using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

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

TEST_CASE("Quote") {
  struct Case {
    const char* name;
    std::string in;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"plain", "15x", "\"15x\""},
      {"empty", "", "\"\""},
      {"quote and backslash", "a\"b\\c", "\"a\\\"b\\\\c\""},
      {"newline stays on one line", "a\nb", "\"a\\x0ab\""},
      {"nul and del", std::string("a\0\x7f", 3), "\"a\\x00\\x7f\""},
      {"utf-8 passes", "1\xc2\xb5s", "\"1\xc2\xb5s\""},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(Quote(c.in) == c.want); }
  }
}

}  // namespace
}  // namespace leasehold::server
