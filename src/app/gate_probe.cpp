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

using Row = Option<GateProbeCommand>;

// `leasehold gate-probe`'s settings. A help's '\n' breaks its column's line.
const OptionTable<GateProbeCommand>& GateProbeTable() {
  static const OptionTable<GateProbeCommand> table{
      "leasehold gate-probe",
      "",
      {
          SwitchOption<GateProbeCommand, &GateProbeCommand::ready>("ready"),
          Row("status-file", "PATH",
              [](const std::string& t, GateProbeCommand& d) {
                d.status_file = t;
                return Status::Ok();
              })
              .Env("LEASEHOLD_GATE_STATUS_FILE")  // the gate's own: the probe finds the file it
                                                  // writes
              .Default([](const GateProbeCommand&) { return std::string(gate::kStatusFileName); })
              .Help("default ${env}, else {default} beside\nthis binary"),
      }};
  return table;
}

// What --help prints.
GateProbeCommand Help() {
  GateProbeCommand c;
  c.output = kProbeHelpHead + RenderColumns(Describe(GateProbeTable()), kHelpColumn);
  return c;
}

}  // namespace

std::vector<SettingDoc> GateProbeSettings() { return Describe(GateProbeTable()); }

Result<GateProbeCommand> ParseGateProbeCommand(const std::vector<std::string>& args,
                                               const Environment& env) {
  const Result<Arguments> given =
      ScanArguments(GateProbeSettings(), args, ScanRules("leasehold gate-probe"));
  if (!given.ok()) return given.status();
  if (given->help) return Help();
  GateProbeCommand c;
  const CommandLineValue command_line = [&given](const std::string& flag) {
    std::optional<std::string> v = given->Last(flag);
    // An empty --status-file= counts as not given, as it always did.
    return flag == "status-file" && v && v->empty() ? std::nullopt : v;
  };
  if (Status st = ReadOptions(GateProbeTable(), command_line, env, c); !st.ok()) return st;
  return c;
}

int RunGateProbe(const std::vector<std::string>& args, const Environment& env) {
  const Result<GateProbeCommand> d = ParseGateProbeCommand(args, env);
  if (std::optional<int> code = ExitBeforeRunning("leasehold gate-probe", d)) return *code;
  std::string file;
  if (d->status_file) {
    file = *d->status_file;
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
      gate::JudgeStatus(*content, gate::BootMillis(RealClock().MonotonicNow()), d->ready);
  if (st.ok()) return 0;
  std::fprintf(stderr, "leasehold gate-probe: %s: %s\n", EscapeForLog(file).c_str(),
               EscapeForLog(st.message()).c_str());
  return 1;
}

}  // namespace leasehold::app
