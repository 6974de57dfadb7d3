#include "app/gate_probe.h"

#include <cstdio>

#include "app/install.h"
#include "app/settings.h"
#include "base/clock.h"
#include "base/file.h"
#include "base/text.h"
#include "gate/status.h"

namespace leasehold::app {
namespace {

// The help around the flags' column (RenderColumns, from the option table).
constexpr const char* kProbeHelpHead = R"(Usage: leasehold gate-probe [--ready] [--status-file PATH]

Exec probe for a container run by `leasehold gate`. Exit 0 when the gate is alive and
consistent (its status file rewritten within 10s, not stuck stopping CMD beyond stop-grace +
10s); with --ready, also when it reaches its sidecar. 1 otherwise, 2 for bad arguments.
)";
constexpr size_t kHelpColumn = 23;

struct GateProbeDraft {
  bool ready = false;
  // nullopt: the gate's default, gate::kStatusFileName beside this binary.
  std::optional<std::string> status_file;
};

// `leasehold gate-probe`'s settings. A help's '\n' breaks its column's line.
const OptionTable<GateProbeDraft>& GateProbeTable() {
  // clang-format off
  static const OptionTable<GateProbeDraft> table{"leasehold gate-probe", "", {
    {"ready", "", "", "", "", "", nullptr,
     [](const std::string&, GateProbeDraft& d) {
       d.ready = true;
       return Status::Ok();
     },
     "", ""},
    // The gate's own --status-file variable: the probe finds the file the gate writes.
    {"status-file", "", "PATH", "LEASEHOLD_GATE_STATUS_FILE", "", "",
     [](const GateProbeDraft&) { return std::string(gate::kStatusFileName); },
     [](const std::string& t, GateProbeDraft& d) {
       d.status_file = t;
       return Status::Ok();
     },
     "default ${env}, else {default} beside\nthis binary", ""},
  }};
  // clang-format on
  return table;
}

}  // namespace

std::vector<SettingDoc> GateProbeSettings() { return Describe(GateProbeTable()); }

int RunGateProbe(const std::vector<std::string>& args, const Environment& env) {
  bool ready = false;
  std::optional<std::string> path;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      std::fputs((kProbeHelpHead + RenderColumns(GateProbeSettings(), kHelpColumn)).c_str(),
                 stdout);
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
  const CommandLineValue command_line = [&](const std::string& flag) -> std::optional<std::string> {
    if (flag == "ready") return ready ? std::optional<std::string>("") : std::nullopt;
    // An empty --status-file= counts as not given, as it always did.
    return flag == "status-file" && path && !path->empty() ? path : std::nullopt;
  };
  GateProbeDraft d;
  if (Status st = ReadOptions(GateProbeTable(), command_line, env, d); !st.ok()) {
    std::fprintf(stderr, "leasehold gate-probe: %s\n", EscapeForLog(st.message()).c_str());
    return 2;
  }
  std::string file;
  if (d.status_file) {
    file = *d.status_file;
  } else {
    // The gate's own default; where this binary's directory is unknown the gate writes none.
    const std::string dir = ExecutableDir();
    if (dir.empty()) {
      std::fprintf(stderr,
                   "leasehold gate-probe: no status file: this binary's directory is unknown; "
                   "set --status-file or LEASEHOLD_GATE_STATUS_FILE for the gate and the probe\n");
      return 1;
    }
    file = dir + "/" + gate::kStatusFileName;
  }
  auto content = ReadRegularFile(file, size_t{64} * 1024);
  if (!content.ok()) {
    std::fprintf(stderr, "leasehold gate-probe: %s\n",
                 EscapeForLog(content.status().message()).c_str());
    return 1;
  }
  const Status st =
      gate::JudgeStatus(*content, gate::BootMillis(RealClock().MonotonicNow()), d.ready);
  if (st.ok()) return 0;
  std::fprintf(stderr, "leasehold gate-probe: %s: %s\n", EscapeForLog(file).c_str(),
               EscapeForLog(st.message()).c_str());
  return 1;
}

}  // namespace leasehold::app
