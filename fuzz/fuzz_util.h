// Helpers shared by the fuzz targets. A failed FUZZ_CHECK prints the condition and aborts, which
// libFuzzer records as a crash (with the input saved as crash-<sha1>).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "base/text.h"

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace leasehold::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Whether `s` is valid UTF-8 as Go's utf8.ValidString sees it: no overlong forms, no surrogates,
// nothing above U+10FFFF. Go's JSON encoder writes each invalid byte as \ufffd, so only valid
// text survives an encode/decode round trip byte for byte.
inline bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

}  // namespace leasehold::fuzz
