// The default logger's lines while a LogCapture lives, as "level: message" (no time stamp, so a
// golden file can pin them), at every level; the logger before it comes back on destruction.
//
//   LogCapture log;
//   elector.Step();
//   CHECK(log.Lines() == "warn: lost lease ...\n");
#pragma once

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <sstream>
#include <string>

namespace leasehold::testing {

class LogCapture {
 public:
  LogCapture() : before_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out_);
    sink->set_pattern("%l: %v");
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_level(spdlog::level::trace);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() {
    spdlog::set_default_logger(before_);
    spdlog::drop("capture");  // the registry keeps loggers by name; this one's stream dies here
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // Every line so far, each ending in "\n"; `min_level` (e.g. "info") drops the ones below it.
  std::string Lines(spdlog::level::level_enum min_level = spdlog::level::trace) {
    spdlog::default_logger()->flush();
    std::istringstream in(out_.str());
    std::string line, kept;
    while (std::getline(in, line)) {
      const auto level = spdlog::level::from_str(line.substr(0, line.find(':')));
      if (level >= min_level) kept += line + "\n";
    }
    return kept;
  }

 private:
  std::shared_ptr<spdlog::logger> before_;
  std::ostringstream out_;
};

}  // namespace leasehold::testing
