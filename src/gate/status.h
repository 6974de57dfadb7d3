// The gate's status file, for `leasehold gate-probe` (the gated container's exec probes: a
// follower's CMD does not run, so CMD's own probes would fail there).
//
// The gate rewrites it atomically (temporary file in the same directory, then rename) on every
// transition and every second. Times are CLOCK_BOOTTIME milliseconds: the probe runs on the
// same machine, and the boot clock does not jump with NTP.
//
//   {"state":"running","stateSinceMs":..,"heartbeatMs":..,"pid":123,"term":4,
//    "sidecar":"streaming","stopGraceMs":3000}
//
// sidecar: "connecting" (no answer yet), "streaming" (the watch stream is up), "polling" (the
// stream is unavailable, GET /leader answers), "unreachable" (the last attempt failed).
//
// Liveness ("the gate is alive and in a consistent state"): the file was rewritten less than
// kStaleAfter ago (a frozen or dead gate stops writing), and the gate is not stuck in
// "stopping" for longer than stop-grace + kStuckAfter (a tree that SIGKILL cannot end, e.g. in
// uninterruptible sleep: a restart of the container is the only way out).
// Readiness (what a rollout needs: a pod that can take over): live, and the sidecar answered
// ("streaming" or "polling"). A follower is ready: its CMD does not run, but it stands by.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "base/status.h"
#include "gate/core.h"

namespace leasehold::gate {

// The status file's name, beside the binary (the emptyDir `leasehold install` copied it into),
// when the gate's --status-file is not given; `gate-probe` looks there too.
inline constexpr const char* kStatusFileName = "gate-status.json";

inline constexpr Duration kStaleAfter = std::chrono::seconds(10);
inline constexpr Duration kStuckAfter = std::chrono::seconds(10);

struct GateStatus {
  State state = State::kWaiting;
  int64_t state_since_ms = 0;
  int64_t heartbeat_ms = 0;
  int pid = 0;
  int64_t term = 0;
  std::string sidecar = "connecting";
  int64_t stop_grace_ms = 0;
};

std::string StatusJson(const GateStatus& s);

// OK when the probe passes; Unavailable with a one-line reason otherwise (Malformed for a
// file that is not a gate status). `now_ms` is CLOCK_BOOTTIME in ms.
Status JudgeStatus(std::string_view json, int64_t now_ms, bool readiness);

int64_t BootMillis(MonoTime t);

}  // namespace leasehold::gate
