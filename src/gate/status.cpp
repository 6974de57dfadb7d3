#include "gate/status.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace leasehold::gate {

int64_t BootMillis(MonoTime t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string StatusJson(const GateStatus& s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("state");
  w.String(StateName(s.state));
  w.Key("stateSinceMs");
  w.Int64(s.state_since_ms);
  w.Key("heartbeatMs");
  w.Int64(s.heartbeat_ms);
  w.Key("pid");
  w.Int(s.pid);
  w.Key("term");
  w.Int64(s.term);
  w.Key("sidecar");
  w.String(s.sidecar.c_str());
  w.Key("stopGraceMs");
  w.Int64(s.stop_grace_ms);
  w.EndObject();
  return std::string(buf.GetString(), buf.GetSize()) + "\n";
}

Status JudgeStatus(std::string_view json, int64_t now_ms, bool readiness) {
  rapidjson::Document d;
  d.Parse(json.data(), json.size());
  if (d.HasParseError() || !d.IsObject() || !d.HasMember("state") || !d["state"].IsString() ||
      !d.HasMember("heartbeatMs") || !d["heartbeatMs"].IsInt64() || !d.HasMember("stateSinceMs") ||
      !d["stateSinceMs"].IsInt64()) {
    return Status(Code::kMalformed, "not a gate status file");
  }
  const std::string state = d["state"].GetString();
  const int64_t age = now_ms - d["heartbeatMs"].GetInt64();
  const int64_t stale = std::chrono::duration_cast<std::chrono::milliseconds>(kStaleAfter).count();
  if (age > stale) {
    return Status(Code::kUnavailable, "the gate has not written its status for " +
                                          std::to_string(age) + "ms (frozen or gone)");
  }
  const int64_t grace =
      d.HasMember("stopGraceMs") && d["stopGraceMs"].IsInt64() ? d["stopGraceMs"].GetInt64() : 0;
  const int64_t in_state = now_ms - d["stateSinceMs"].GetInt64();
  const int64_t stuck =
      grace + std::chrono::duration_cast<std::chrono::milliseconds>(kStuckAfter).count();
  if (state == "stopping" && in_state > stuck) {
    return Status(Code::kUnavailable, "CMD has been stopping for " + std::to_string(in_state) +
                                          "ms, beyond stop-grace + 10s: it cannot be killed");
  }
  if (readiness) {
    const std::string sidecar =
        d.HasMember("sidecar") && d["sidecar"].IsString() ? d["sidecar"].GetString() : "";
    if (sidecar != "streaming" && sidecar != "polling") {
      return Status(Code::kUnavailable, "the gate cannot reach its sidecar (" + sidecar + ")");
    }
  }
  return Status();
}

}  // namespace leasehold::gate
