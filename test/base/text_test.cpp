#include "base/text.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace leasehold {
namespace {

using namespace std::string_literals;

TEST_CASE("EscapeForLog") {
  struct Case {
    const char* name;
    std::string in;
    std::string want;
  };
  const Case cases[] = {
      {"empty", "", ""},
      {"printable ASCII is kept", "GET /healthz ok=1 \"q\" 'a' ~", "GET /healthz ok=1 \"q\" 'a' ~"},
      {"newline cannot start a forged line", "x\n[error] FAKE", "x\\x0a[error] FAKE"},
      {"carriage return cannot overwrite the line", "ok\rFAKE", "ok\\x0dFAKE"},
      {"CRLF header injection", "TOKEN\r\nX-Injected: yes", "TOKEN\\x0d\\x0aX-Injected: yes"},
      {"tab", "a\tb", "a\\x09b"},
      {"NUL", "a\0b"s, "a\\x00b"},
      {"ESC (terminal sequences)", "\x1b[31mred", "\\x1b[31mred"},
      {"unit separator 0x1f", "\x1f", "\\x1f"},
      {"DEL", "\x7f", "\\x7f"},
      {"backslash is escaped, so the output is unambiguous", "a\\x0ab", "a\\x5cx0ab"},
      {"valid two-byte UTF-8 is kept", "caf\xc3\xa9", "caf\xc3\xa9"},
      {"valid three-byte UTF-8 is kept", "\xe2\x82\xac 5", "\xe2\x82\xac 5"},
      {"valid four-byte UTF-8 is kept", "\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
      {"lone continuation byte", "a\x80z", "a\\x80z"},
      {"0xff", "\xff", "\\xff"},
      {"truncated sequence at the end", "ab\xe2\x82", "ab\\xe2\\x82"},
      {"truncated sequence before ASCII", "\xe2\x82z", "\\xe2\\x82z"},
      {"overlong slash", "\xc0\xaf", "\\xc0\\xaf"},
      {"overlong three-byte NUL", "\xe0\x80\x80", "\\xe0\\x80\\x80"},
      {"UTF-16 surrogate", "\xed\xa0\x80", "\\xed\\xa0\\x80"},
      {"above U+10FFFF", "\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},
      {"C1 control U+0085 (NEL)", "a\xc2\x85z", "a\\xc2\\x85z"},
      {"C1 control U+009B (CSI)",
       "\xc2\x9b"
       "31m",
       "\\xc2\\x9b"
       "31m"},
      {"U+00A0 is printable and kept", "\xc2\xa0", "\xc2\xa0"},
      {"U+2028 line separator", "a\xe2\x80\xa8z", "a\\xe2\\x80\\xa8z"},
      {"U+2029 paragraph separator", "\xe2\x80\xa9", "\\xe2\\x80\\xa9"},
      {"U+202E right-to-left override", "\xe2\x80\xae", "\\xe2\\x80\\xae"},
      {"U+2067 right-to-left isolate", "\xe2\x81\xa7", "\\xe2\\x81\\xa7"},
      {"U+2027 next to the separators is kept", "\xe2\x80\xa7", "\xe2\x80\xa7"},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    CHECK(EscapeForLog(c.in) == c.want);
  }
}

// Whatever the input, the result is one line of printable, valid UTF-8.
TEST_CASE("EscapeForLog output is printable valid UTF-8 for every byte pair") {
  for (int a = 0; a < 256; ++a) {
    for (int b = 0; b < 256; ++b) {
      const std::string in{static_cast<char>(a), static_cast<char>(b)};
      const std::string out = EscapeForLog(in);
      size_t i = 0;
      bool ok = true;
      while (i < out.size()) {
        const size_t n = Utf8SequenceLength(out, i);
        const auto c = static_cast<unsigned char>(out[i]);
        if (n == 0 || c < 0x20 || c == 0x7f) {
          ok = false;
          break;
        }
        i += n;
      }
      if (!ok) {
        INFO("input bytes " << a << " " << b);
        FAIL("output is not printable UTF-8");
      }
    }
  }
}

TEST_CASE("Utf8SequenceLength") {
  struct Case {
    const char* name;
    std::string in;
    size_t want;
  };
  const Case cases[] = {
      {"ASCII", "a", 1},
      {"two bytes", "\xc3\xa9", 2},
      {"three bytes", "\xe2\x82\xac", 3},
      {"four bytes", "\xf0\x9f\x98\x80", 4},
      {"overlong C0", "\xc0\x80", 0},
      {"surrogate", "\xed\xa0\x80", 0},
      {"truncated", "\xe2\x82", 0},
      {"bad continuation", "\xc3\x28", 0},
      {"F5 lead", "\xf5\x80\x80\x80", 0},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    CHECK(Utf8SequenceLength(c.in, 0) == c.want);
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

TEST_CASE("OneLine and Excerpt") {
  CHECK(OneLine("a\nb\x7f\"c\\") == "a\\x0ab\\x7f\"c\\");
  CHECK(OneLine("1\xc2\xb5s") == "1\xc2\xb5s");
  CHECK(Excerpt("short") == "short");
  CHECK(Excerpt(std::string(64, 'a')) == std::string(64, 'a'));
  CHECK(Excerpt(std::string(65, 'a')) == std::string(64, 'a') + "...");
  CHECK(Excerpt("abcdef", 3) == "abc...");
}

}  // namespace
}  // namespace leasehold
