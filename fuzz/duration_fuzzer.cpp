// Go duration flags: ParseGoDuration on any text, FormatGoDuration on any int64 nanoseconds, and
// the round trip ParseGoDuration(FormatGoDuration(d)) == d for every d >= 0.
#include <cstdint>
#include <cstring>
#include <string>

#include "base/duration.h"
#include "base/text.h"
#include "fuzz_util.h"

namespace leasehold::app {
namespace {

void CheckFormatted(Duration d) {
  const std::string text = FormatGoDuration(d);
  FUZZ_CHECK(!text.empty());
  const Result<Duration> back = ParseGoDuration(text);
  if (d < Duration::zero()) {
    FUZZ_CHECK(text.front() == '-');
    FUZZ_CHECK(!back.ok() && back.code() == Code::kBadConfig);
  } else {
    FUZZ_CHECK(back.ok() && *back == d);
  }
}

void CheckText(std::string_view in) {
  const Result<Duration> d = ParseGoDuration(in);
  if (!d.ok()) {
    FUZZ_CHECK(d.code() == Code::kBadConfig);
    // The message starts with the input, quoted.
    FUZZ_CHECK(d.status().message().rfind(Quote(in) + " ", 0) == 0);
    return;
  }
  FUZZ_CHECK(*d >= Duration::zero());
  FUZZ_CHECK(in.empty() || in.front() != '-' || *d == Duration::zero());
  CheckFormatted(*d);
}

}  // namespace
}  // namespace leasehold::app

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace leasehold;
  app::CheckText(fuzz::AsText(data, size));
  if (size >= sizeof(int64_t)) {
    int64_t ns;
    std::memcpy(&ns, data, sizeof ns);
    app::CheckFormatted(Duration(ns));
  }
  return 0;
}
