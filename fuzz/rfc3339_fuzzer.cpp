// RFC 3339 / metav1.MicroTime: ParseRfc3339Micros and ParseRfc3339 on any text, and the formatters
// (FormatUnixMicros, FormatMicroTime, FormatRfc3339Seconds) on any instant, which must parse back
// to the same microsecond (or second).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/rfc3339.h"
#include "fuzz_util.h"

namespace leasehold::locks {
namespace {

constexpr int64_t kMicrosPerSecond = 1000000;

int64_t FloorDiv(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// The range RFC 3339 can write: 0000-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z.
UnixMicros MinMicros() {
  static const UnixMicros v = ParseRfc3339Micros("0000-01-01T00:00:00Z").value();
  return v;
}
UnixMicros MaxMicros() {
  static const UnixMicros v = ParseRfc3339Micros("9999-12-31T23:59:59.999999Z").value();
  return v;
}

UnixMicros MicrosOf(SysTime t) {
  return std::chrono::floor<std::chrono::microseconds>(t.time_since_epoch()).count();
}

// Any microsecond count formats as RFC 3339 (clamped to years 0000-9999) and parses back.
void CheckFormatted(UnixMicros t) {
  const UnixMicros clamped = std::clamp(t, MinMicros(), MaxMicros());
  const std::string micro = FormatUnixMicros(t, true);
  FUZZ_CHECK(micro.size() == 27);
  const Result<UnixMicros> back = ParseRfc3339Micros(micro);
  FUZZ_CHECK(back.ok() && *back == clamped);
  const std::string secs = FormatUnixMicros(t, false);
  FUZZ_CHECK(secs.size() == 20);
  const Result<UnixMicros> back_secs = ParseRfc3339Micros(secs);
  FUZZ_CHECK(back_secs.ok() &&
             *back_secs == FloorDiv(clamped, kMicrosPerSecond) * kMicrosPerSecond);
}

// Any SysTime (nanoseconds, years 1677-2262): MicroTime keeps the microsecond, metav1.Time the
// second, both truncated toward the past.
void CheckSysTime(SysTime t) {
  // Flooring can leave SysTime's range at its very start (1677-09-21T00:12:43.145224192Z);
  // ParseRfc3339 then rightly says Invalid.
  const auto floor_micros = std::chrono::floor<std::chrono::microseconds>(t);
  const auto floor_secs = std::chrono::floor<std::chrono::seconds>(t);
  const Result<SysTime> micro = ParseRfc3339(FormatMicroTime(t));
  if (floor_micros.time_since_epoch().count() > MicrosOf(SysTime::min())) {
    FUZZ_CHECK(micro.ok() && *micro == floor_micros);
  } else {
    FUZZ_CHECK(!micro.ok());
  }
  const Result<SysTime> secs = ParseRfc3339(FormatRfc3339Seconds(t));
  if (floor_secs.time_since_epoch().count() >= -9223372036) {
    FUZZ_CHECK(secs.ok() && *secs == floor_secs);
  } else {
    FUZZ_CHECK(!secs.ok());
  }
}

void CheckText(std::string_view in) {
  const Result<UnixMicros> micros = ParseRfc3339Micros(in);
  FUZZ_CHECK(micros.ok() || micros.code() == Code::kMalformed);
  const Result<SysTime> sys = ParseRfc3339(in);
  FUZZ_CHECK(sys.ok() || sys.code() == Code::kMalformed);
  if (!micros.ok()) {
    FUZZ_CHECK(!sys.ok());
    return;
  }
  // An offset can carry a valid text a day outside 0000-9999; everything else is inside.
  FUZZ_CHECK(*micros >= MinMicros() - 86400 * kMicrosPerSecond);
  FUZZ_CHECK(*micros <= MaxMicros() + 86400 * kMicrosPerSecond);
  CheckFormatted(*micros);
  if (sys.ok()) {
    FUZZ_CHECK(MicrosOf(*sys) == *micros);
    CheckSysTime(*sys);
  }
}

}  // namespace
}  // namespace leasehold::locks

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace leasehold;
  locks::CheckText(fuzz::AsText(data, size));
  if (size >= sizeof(int64_t)) {
    int64_t v;
    std::memcpy(&v, data, sizeof v);
    locks::CheckFormatted(v);
    locks::CheckSysTime(SysTime(SysTime::duration(v)));
  }
  return 0;
}
