#include "app/logging.h"

#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

#include <string>
#include <vector>

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
      {"quotes, backslash and newline are escaped", "warn", "a \"b\"\\\nc",
       R"({"ts":"2026-01-02T03:00:00.005Z","level":"warn","msg":"a \"b\"\\\nc"})"},
      {"control bytes", "error", std::string("x\x01", 2),
       R"({"ts":"2026-01-02T03:00:00.005Z","level":"error","msg":"x\u0001"})"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(JsonLogLine(ts, c.level, c.msg) == c.want + "\n"); }
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
