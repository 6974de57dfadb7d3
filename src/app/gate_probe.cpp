#include "app/gate_probe.h"

#include <cstdio>

#include "app/install.h"
#include "base/clock.h"
#include "base/file.h"
#include "base/text.h"
#include "gate/status.h"

namespace leasehold::app {
namespace {

constexpr const char* kProbeHelp = R"(Usage: leasehold gate-probe [--ready] [--status-file PATH]

Exec probe for a container run by `leasehold gate`. Exit 0 when the gate is alive and
consistent (its status file rewritten within 10s, not stuck stopping CMD beyond stop-grace +
10s); with --ready, also when it reaches its sidecar. 1 otherwise, 2 for bad arguments.
  --status-file PATH   default $LEASEHOLD_GATE_STATUS_FILE, else gate-status.json beside
                       this binary
)";

}  // namespace

int RunGateProbe(const std::vector<std::string>& args, const Environment& env) {
  bool ready = false;
  std::string path;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kProbeHelp, stdout);
      return 0;
    }
    if (a == "--ready") {
      ready = true;
    } else if (a == "--status-file" && i + 1 < args.size()) {
      path = args[++i];
    } else if (a.rfind("--status-file=", 0) == 0) {
      path = a.substr(14);
    } else {
      std::fprintf(stderr, "leasehold gate-probe: unexpected argument %s\n",
                   EscapeForLog(Quote(a)).c_str());
      return 2;
    }
  }
  if (path.empty()) {
    if (auto e = env.getenv("LEASEHOLD_GATE_STATUS_FILE"); e && !e->empty()) path = *e;
  }
  if (path.empty()) {
    // The gate's own default; where this binary's directory is unknown the gate writes none.
    const std::string dir = ExecutableDir();
    if (dir.empty()) {
      std::fprintf(stderr,
                   "leasehold gate-probe: no status file: this binary's directory is unknown; "
                   "set --status-file or LEASEHOLD_GATE_STATUS_FILE for the gate and the probe\n");
      return 1;
    }
    path = dir + "/gate-status.json";
  }
  auto content = ReadRegularFile(path, 64 * 1024);
  if (!content.ok()) {
    std::fprintf(stderr, "leasehold gate-probe: %s\n",
                 EscapeForLog(content.status().message()).c_str());
    return 1;
  }
  const Status st =
      gate::JudgeStatus(*content, gate::BootMillis(RealClock().MonotonicNow()), ready);
  if (st.ok()) return 0;
  std::fprintf(stderr, "leasehold gate-probe: %s: %s\n", EscapeForLog(path).c_str(),
               EscapeForLog(st.message()).c_str());
  return 1;
}

}  // namespace leasehold::app
