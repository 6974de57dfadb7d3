#include "app/logging.h"

#include <doctest/doctest.h>
#include <rapidjson/document.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"

namespace leasehold::app {
namespace {

TEST_CASE("JsonLogLine: one escaped JSON object per line") {
  const SysTime ts = FakeClock().SystemNow() + std::chrono::milliseconds(5);
  struct Case {
    const char* name;
    const char* level;
    std::string msg;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"plain", "info", "acquired lock default/my-app",
       R"({"ts":"2026-01-02T03:00:00.005Z","level":"info","msg":"acquired lock default/my-app"})"},
      // EscapeForLog first (backslash and newline as \x5c, \x0a), then JSON's own escaping.
      {"quotes, backslash and newline are escaped", "warn", "a \"b\"\\\nc",
       R"({"ts":"2026-01-02T03:00:00.005Z","level":"warn","msg":"a \"b\"\\x5c\\x0ac"})"},
      {"control bytes", "error", std::string("x\x01", 2),
       R"({"ts":"2026-01-02T03:00:00.005Z","level":"error","msg":"x\\x01"})"},
      {"invalid UTF-8 becomes \\xNN, so the line stays JSON", "info", "bad \xff\xc3(",
       R"({"ts":"2026-01-02T03:00:00.005Z","level":"info","msg":"bad \\xff\\xc3("})"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(JsonLogLine(ts, c.level, c.msg) == c.want + "\n"); }
  }
}

// What the default logger writes to fd 2 while `log` runs, after SetupLogging(format).
std::string LoggedBy(LogFormat format, const std::function<void()>& log) {
  const auto before = spdlog::default_logger();
  std::fflush(stderr);
  FILE* err = std::tmpfile();
  const int saved = dup(2);
  dup2(fileno(err), 2);
  SetupLogging(format, LogLevel::kInfo);
  log();
  spdlog::default_logger()->flush();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  spdlog::set_default_logger(before);
  std::string out;
  std::rewind(err);
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, err)) > 0) out.append(buf, n);
  std::fclose(err);
  return out;
}

// The guard sits in the formatters, so a call site that logs external text as it is (here with
// "{}") still cannot forge a line or break the JSON.
TEST_CASE("SetupLogging: external text cannot forge a line, in text or JSON") {
  struct Case {
    const char* name;
    std::string external;
    std::string want_text;  // the escaped message as it must appear
  };
  const std::vector<Case> cases = {
      {"newline and a fake level", "GET /x\n[error] FAKE admin logged in",
       "GET /x\\x0a[error] FAKE admin logged in"},
      {"carriage return", "ok\rFAKE", "ok\\x0dFAKE"},
      {"CRLF and ESC", "a\r\n\x1b[2Kb", "a\\x0d\\x0a\\x1b[2Kb"},
      {"invalid UTF-8", "bad \xff\xfe\xc3", "bad \\xff\\xfe\\xc3"},
      {"backslash", "C:\\x0a", "C:\\x5cx0a"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const std::string text =
          LoggedBy(LogFormat::kText, [&] { spdlog::warn("request {}", c.external); });
      CHECK(std::count(text.begin(), text.end(), '\n') == 1);
      CHECK(text.find('\r') == std::string::npos);
      CHECK(text.size() > 0);
      CHECK(text.back() == '\n');
      CHECK(text.find(" warning request " + c.want_text + "\n") != std::string::npos);

      const std::string json =
          LoggedBy(LogFormat::kJson, [&] { spdlog::warn("request {}", c.external); });
      REQUIRE(std::count(json.begin(), json.end(), '\n') == 1);
      REQUIRE(json.back() == '\n');
      rapidjson::Document doc;
      doc.Parse<rapidjson::kParseValidateEncodingFlag>(json.data(), json.size() - 1);
      REQUIRE_MESSAGE(!doc.HasParseError(), json);
      REQUIRE(doc.IsObject());
      CHECK(std::string(doc["level"].GetString()) == "warn");
      CHECK(std::string(doc["msg"].GetString()) == "request " + c.want_text);
    }
  }
}

TEST_CASE("SetupLogging installs the default logger at the level asked") {
  const auto before = spdlog::default_logger();
  struct Case {
    LogLevel level;
    spdlog::level::level_enum want;
  };
  for (const Case& c :
       {Case{LogLevel::kTrace, spdlog::level::trace}, Case{LogLevel::kDebug, spdlog::level::debug},
        Case{LogLevel::kInfo, spdlog::level::info}, Case{LogLevel::kWarn, spdlog::level::warn},
        Case{LogLevel::kError, spdlog::level::err}}) {
    for (const LogFormat f : {LogFormat::kText, LogFormat::kJson}) {
      SetupLogging(f, c.level);
      CHECK(spdlog::default_logger()->level() == c.want);
      CHECK(spdlog::default_logger()->name() == "leasehold");
    }
  }
  spdlog::set_default_logger(before);
}

}  // namespace
}  // namespace leasehold::app
