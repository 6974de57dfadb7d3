#include "app/probe.h"

#include <cstdio>

#include "app/settings.h"
#include "base/listen_address.h"
#include "base/text.h"
#include "contract/loopback_client.h"

namespace leasehold::app {
namespace {

constexpr Duration kProbeTimeout = std::chrono::seconds(1);

// The help around the flags' column (RenderColumns, from the option table).
constexpr const char* kProbeHelpHead = R"(Usage: leasehold probe [--leader] [--address ADDR]

Asks a running agent whether it is ready (GET /readyz) or, with --leader, whether it leads
(GET /is-leader), with a 1s timeout. Exit code 0 on a 200 answer, 1 otherwise, 2 for bad
arguments. For exec probes in images without curl, e.g.
  readinessProbe: {exec: {command: [leasehold, probe]}}

)";
constexpr const char* kProbeHelpTail = "  -h, --help      print this help\n";
constexpr size_t kHelpColumn = 18;

struct ProbeDraft {
  bool leader = false;  // ask /is-leader instead of /readyz
  std::string address = kDefaultHttpAddress;
};
using Row = Option<ProbeDraft>;

// `leasehold probe`'s settings, in --help order. A help's '\n' breaks its column's line.
const OptionTable<ProbeDraft>& ProbeTable() {
  static const OptionTable<ProbeDraft> table{
      "leasehold probe",
      "",
      {
          SwitchOption<ProbeDraft, &ProbeDraft::leader>("leader").Help(
              "ask /is-leader instead of /readyz"),
          Row("address", "ADDR",
              [](const std::string& t, ProbeDraft& d) {
                d.address = t;  // the one address rule, as `leasehold gate` asks (SidecarTargets)
                return contract::SidecarTargets(t).status();
              })
              .Env("LEASEHOLD_HTTP_ADDRESS")  // the agent's own, present in the sidecar's
                                              // environment
              .Default([](const ProbeDraft& d) { return d.address; })
              .Help("the agent's --http-address (same forms; a wildcard such as :4040 is asked on\n"
                    "loopback). Default: ${env}, else {default}."),
      }};
  return table;
}

}  // namespace

std::vector<SettingDoc> ProbeSettings() { return Describe(ProbeTable()); }

Result<ProbeCommand> ParseProbeCommand(const std::vector<std::string>& args,
                                       const Environment& env) {
  const Result<Arguments> given =
      ScanArguments(ProbeSettings(), args, ScanRules("leasehold probe"));
  if (!given.ok()) return given.status();
  ProbeCommand c;
  if (given->help) {
    c.output = kProbeHelpHead + RenderColumns(ProbeSettings(), kHelpColumn) + kProbeHelpTail;
    return c;
  }
  ProbeDraft d;
  if (Status st = ReadOptions(ProbeTable(), given->LastValues(), env, d); !st.ok()) return st;
  // Checked by the address's parser, or the default.
  auto targets = contract::SidecarTargets(d.address);
  if (!targets.ok()) return Status(Code::kFailedPrecondition, targets.status().message());
  c.path = d.leader ? "/is-leader" : "/readyz";
  c.address = d.address;
  for (const contract::Target& t : *targets) c.targets.emplace_back(t.host, t.port);
  return c;
}

int ProbeOnce(const ProbeCommand& command, Duration timeout, std::string* detail) {
  // The contract's loopback client (HTTP/1.0, numeric hosts, a bounded body): whatever listens
  // at --address answers, and only the first 300 bytes of what it says are kept.
  constexpr size_t kMaxDetail = 300;
  RealClock clock;
  std::string tried;
  for (const auto& [host, port] : command.targets) {
    const contract::Target target{host, port};
    const std::string where = target.ToString() + command.path;
    auto res = contract::FetchOnce(target, contract::HttpExchange::Get(command.path), timeout,
                                   clock, kMaxDetail);
    if (!res.ok()) {
      tried += (tried.empty() ? "" : "; ") + where + ": " + res.status().message();
      continue;
    }
    std::string body = res->body;
    while (!body.empty() && (body.back() == '\n' || body.back() == '\r')) body.pop_back();
    if (detail) *detail = where + ": " + std::to_string(res->status) + " " + OneLine(body);
    return res->status;
  }
  if (detail) *detail = "no answer (" + tried + ")";
  return 0;
}

int RunProbe(const std::vector<std::string>& args, const Environment& env) {
  const Result<ProbeCommand> command = ParseProbeCommand(args, env);
  if (std::optional<int> code = ExitBeforeRunning("leasehold probe", command)) return *code;
  std::string detail;
  const int status = ProbeOnce(*command, kProbeTimeout, &detail);
  if (status == 200) return 0;
  // `detail` quotes the agent's answer: whatever listens there, the line stays one line.
  std::fprintf(stderr, "leasehold probe: %s\n", EscapeForLog(detail).c_str());
  return 1;
}

}  // namespace leasehold::app
