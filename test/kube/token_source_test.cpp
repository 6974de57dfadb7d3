#include "kube/token_source.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include <filesystem>
#include <functional>

#include "fakes/fake_clock.h"
#include "fakes/temp_dir.h"

namespace leasehold::kube {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::TempDir;

struct Fixture {
  TempDir dir;
  FakeClock clock;
  std::string path = dir.Write("token", "first\n");

  std::unique_ptr<FileTokenSource> Make(std::string fallback = "") {
    auto source = FileTokenSource::Create(path, clock, std::move(fallback));
    REQUIRE_MESSAGE(source.ok(), source.status().ToString());
    return std::move(source).value();
  }
};

TEST_CASE("FileTokenSource re-reads after 50 s, not before") {
  Fixture f;
  auto source = f.Make();
  CHECK(source->Token() == "first");
  f.dir.Write("token", "second");
  f.clock.Advance(seconds(49));
  CHECK(source->Token() == "first");
  f.clock.Advance(milliseconds(999));
  CHECK(source->Token() == "first");
  f.clock.Advance(milliseconds(1));  // 50 s after the read
  CHECK(source->Token() == "second");
  // The age now counts from the second read.
  f.dir.Write("token", "third");
  f.clock.Advance(seconds(49));
  CHECK(source->Token() == "second");
  f.clock.Advance(seconds(1));
  CHECK(source->Token() == "third");
}

TEST_CASE("FileTokenSource re-reads on the first call after a 401") {
  Fixture f;
  auto source = f.Make();
  f.dir.Write("token", "rotated");
  CHECK(source->Token() == "first");
  source->Invalidate();
  CHECK(source->Token() == "rotated");  // no clock movement needed
  // Invalidate only forces one read; the cache is fresh again.
  f.dir.Write("token", "later");
  CHECK(source->Token() == "rotated");
}

TEST_CASE("FileTokenSource keeps the old token when a re-read fails") {
  struct Case {
    const char* name;
    std::function<void(const TempDir&)> break_file;
  };
  const Case cases[] = {
      {"file removed", [](const TempDir& d) { d.Remove("token"); }},
      {"file empty", [](const TempDir& d) { d.Write("token", ""); }},
      {"file only whitespace", [](const TempDir& d) { d.Write("token", " \n\t\n"); }},
      // A rotation to contents that must never become a header.
      {"CRLF and a second header",
       [](const TempDir& d) { d.Write("token", "TOKEN\r\nX-Injected: yes\n"); }},
      {"inner space", [](const TempDir& d) { d.Write("token", "abc def\n"); }},
      {"NUL byte", [](const TempDir& d) { d.Write("token", std::string("abc\0def", 7)); }},
      {"non-ASCII", [](const TempDir& d) { d.Write("token", "abc\xc3\xa9"); }},
      {"over 16 KiB", [](const TempDir& d) { d.Write("token", std::string(16385, 'a')); }},
      {"a FIFO (no hang)",
       [](const TempDir& d) {
         d.Remove("token");
         REQUIRE(::mkfifo(d.Path("token").c_str(), 0600) == 0);
       }},
      {"a directory",
       [](const TempDir& d) {
         d.Remove("token");
         std::filesystem::create_directory(d.Path("token"));
       }},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    Fixture f;
    auto source = f.Make();
    CHECK(source->Problem().empty());
    c.break_file(f.dir);
    f.clock.Advance(seconds(60));
    CHECK(source->Token() == "first");
    CHECK_FALSE(source->Problem().empty());
    CHECK(source->Problem().find(f.path) != std::string::npos);
    source->Invalidate();
    CHECK(source->Token() == "first");
    // The failed read did not restart the 50 s: the next call tries again at once.
    f.dir.Remove("token");
    f.dir.Write("token", "fixed");
    CHECK(source->Token() == "fixed");
  }
}

TEST_CASE("FileTokenSource trims whitespace") {
  Fixture f;
  f.dir.Write("token", "  \tabc.def-ghi\r\n\n");
  CHECK(f.Make()->Token() == "abc.def-ghi");
}

TEST_CASE("FileTokenSource::Create needs a readable token unless a fallback is given") {
  TempDir dir;
  FakeClock clock;
  SUBCASE("missing file") {
    auto got = FileTokenSource::Create(dir.Path("none"), clock);
    CHECK(got.code() == Code::kNotFound);
  }
  SUBCASE("empty file") {
    dir.Write("token", "\n");
    auto got = FileTokenSource::Create(dir.Path("token"), clock);
    CHECK(got.code() == Code::kBadConfig);
    CHECK(got.status().message() == "token file " + dir.Path("token") + " is empty");
  }
  SUBCASE("fallback stands in until the file appears") {
    auto got = FileTokenSource::Create(dir.Path("token"), clock, "static");
    REQUIRE(got.ok());
    auto& source = *got.value();
    CHECK(source.Token() == "static");
    dir.Write("token", "from-file");
    CHECK(source.Token() == "from-file");
  }
  SUBCASE("a token with control characters or inner whitespace") {
    struct Bad {
      const char* name;
      std::string contents;
      size_t at;
    };
    const Bad bads[] = {
        {"CRLF header injection", "TOKEN\r\nX-Injected: yes\n", 5},
        {"inner space", "abc def", 3},
        {"inner tab", "abc\tdef", 3},
        {"DEL", "abc\x7f", 3},
        {"ESC", "\x1b[0m", 0},
    };
    for (const Bad& b : bads) {
      INFO(std::string(b.name));
      dir.Write("token", b.contents);
      auto got = FileTokenSource::Create(dir.Path("token"), clock);
      CHECK(got.code() == Code::kBadConfig);
      CHECK(got.status().message() ==
            "token file " + dir.Path("token") +
                ": contains a control character, whitespace or non-ASCII byte at byte " +
                std::to_string(b.at) + " (a bearer token is visible ASCII only)");
    }
  }
}

TEST_CASE("CheckBearerToken") {
  struct Case {
    const char* name;
    std::string token;
    bool ok;
  };
  const Case cases[] = {
      {"JWT", "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln-_", true},
      {"bootstrap token", "abcdef.0123456789abcdef", true},
      {"every visible ASCII byte", "!\"#$%&'()*+,-./09:;<=>?@AZ[\\]^_`az{|}~", true},
      {"empty (no header is sent)", "", true},
      {"CR", "a\rb", false},
      {"LF", "a\nb", false},
      {"space", "tok en", false},
      {"NUL", std::string("a\0b", 3), false},
      {"DEL", "a\x7f", false},
      {"UTF-8", "caf\xc3\xa9", false},
  };
  for (const Case& c : cases) {
    INFO(std::string(c.name));
    const Status s = CheckBearerToken(c.token);
    CHECK(s.ok() == c.ok);
    // The message never repeats the token.
    if (!s.ok() && c.token.size() > 2) CHECK(s.message().find(c.token) == std::string::npos);
  }
}

TEST_CASE("StaticTokenSource") {
  StaticTokenSource source("abc");
  CHECK(source.Token() == "abc");
  source.Invalidate();
  CHECK(source.Token() == "abc");
}

TEST_CASE("TrimSpace") {
  CHECK(TrimSpace("") == "");
  CHECK(TrimSpace(" \n") == "");
  CHECK(TrimSpace(" a b \n") == "a b");
  CHECK(TrimSpace("x") == "x");
}

}  // namespace
}  // namespace leasehold::kube
