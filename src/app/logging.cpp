#include "app/logging.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/formatter.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <memory>

#include "base/rfc3339.h"
#include "base/text.h"

namespace leasehold::app {
namespace {

const char* LevelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace:
      return "trace";
    case spdlog::level::debug:
      return "debug";
    case spdlog::level::info:
      return "info";
    case spdlog::level::warn:
      return "warn";
    case spdlog::level::err:
      return "error";
    case spdlog::level::critical:
      return "critical";
    default:
      return "info";
  }
}

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace:
      return spdlog::level::trace;
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

// The text pattern applied to the escaped payload: every log line goes through here, so no call
// site can forge a line, whatever external text (paths, API answers, file contents) it logs.
class EscapingTextFormatter final : public spdlog::formatter {
 public:
  EscapingTextFormatter()
      : pattern_("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string escaped =
        EscapeForLog(std::string_view(msg.payload.data(), msg.payload.size()));
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
    pattern_.format(copy, dest);
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<EscapingTextFormatter>();
  }

 private:
  spdlog::pattern_formatter pattern_;
};

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string line =
        JsonLogLine(std::chrono::time_point_cast<SysTime::duration>(msg.time), LevelName(msg.level),
                    std::string_view(msg.payload.data(), msg.payload.size()));
    dest.append(line.data(), line.data() + line.size());
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

std::string JsonLogLine(SysTime ts, std::string_view level, std::string_view msg) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  const std::string when = FormatRfc3339Millis(ts);
  w.StartObject();
  w.Key("ts");
  w.String(when.data(), static_cast<rapidjson::SizeType>(when.size()));
  w.Key("level");
  w.String(level.data(), static_cast<rapidjson::SizeType>(level.size()));
  // Escaped as in the text format (so both read alike), which also makes it valid UTF-8: the
  // writer copies invalid bytes as they are, and the line would not be JSON.
  const std::string escaped = EscapeForLog(msg);
  w.Key("msg");
  w.String(escaped.data(), static_cast<rapidjson::SizeType>(escaped.size()));
  w.EndObject();
  std::string out(buf.GetString(), buf.GetSize());
  out += '\n';
  return out;
}

void SetupLogging(LogFormat format, LogLevel level) {
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  auto logger = std::make_shared<spdlog::logger>("leasehold", sink);
  if (format == LogFormat::kJson) {
    logger->set_formatter(std::make_unique<JsonFormatter>());
  } else {
    logger->set_formatter(std::make_unique<EscapingTextFormatter>());
  }
  logger->set_level(ToSpdlog(level));
  // Warnings and errors reach the terminal (or the kubelet) before anything that may follow.
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace leasehold::app
