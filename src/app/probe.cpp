#include "app/probe.h"

#include <cstdio>

#include "base/text.h"
#include "contract/loopback_client.h"

namespace leasehold::app {
namespace {

constexpr const char* kDefaultAddress = "localhost:4040";
constexpr Duration kProbeTimeout = std::chrono::seconds(1);

constexpr const char* kProbeHelp = R"(Usage: leasehold probe [--leader] [--address ADDR]

Asks a running agent whether it is ready (GET /readyz) or, with --leader, whether it leads
(GET /is-leader), with a 1s timeout. Exit code 0 on a 200 answer, 1 otherwise, 2 for bad
arguments. For exec probes in images without curl, e.g.
  readinessProbe: {exec: {command: [leasehold, probe]}}

  --leader        ask /is-leader instead of /readyz
  --address ADDR  the agent's --http-address (same forms; a wildcard such as :4040 is asked on
                  loopback). Default: $LEASEHOLD_HTTP_ADDRESS, else localhost:4040.
  -h, --help      print this help
)";

Status Invalid(const std::string& what) {
  return Status(Code::kBadConfig, what + " (see leasehold probe --help)");
}

}  // namespace

Result<ProbeCommand> ParseProbeCommand(const std::vector<std::string>& args,
                                       const Environment& env) {
  ProbeCommand c;
  c.path = "/readyz";
  std::string address;
  std::string origin = "--address";
  bool address_set = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      c.output = kProbeHelp;
      return c;
    }
    if (a == "--leader") {
      c.path = "/is-leader";
    } else if (a == "--address" || a.rfind("--address=", 0) == 0) {
      if (a == "--address") {
        if (i + 1 >= args.size()) return Invalid("--address: needs a value");
        address = args[++i];
      } else {
        address = a.substr(std::string("--address=").size());
      }
      address_set = true;
    } else {
      return Invalid("unexpected argument " + Quote(a));
    }
  }
  if (!address_set) {
    address = kDefaultAddress;
    if (auto e = env.getenv("LEASEHOLD_HTTP_ADDRESS"); e && !e->empty()) {
      address = *e;
      origin = "LEASEHOLD_HTTP_ADDRESS (--address)";
    }
  }
  // The one address rule (contract::SidecarTargets), as `leasehold gate` asks.
  auto targets = contract::SidecarTargets(address);
  if (!targets.ok()) return Status(Code::kBadConfig, origin + ": " + targets.status().message());
  c.address = address;
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
  auto command = ParseProbeCommand(args, env);
  if (!command.ok()) {
    std::fprintf(stderr, "leasehold probe: %s\n", EscapeForLog(command.status().message()).c_str());
    return 2;
  }
  if (!command->output.empty()) {
    std::fputs(command->output.c_str(), stdout);
    return 0;
  }
  std::string detail;
  const int status = ProbeOnce(*command, kProbeTimeout, &detail);
  if (status == 200) return 0;
  // `detail` quotes the agent's answer: whatever listens there, the line stays one line.
  std::fprintf(stderr, "leasehold probe: %s\n", EscapeForLog(detail).c_str());
  return 1;
}

}  // namespace leasehold::app
