// `leasehold gate` flags and LEASEHOLD_GATE_* variables (pure parsing), `leasehold install`.
#include "app/gate_command.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "app/gate_probe.h"
#include "app/install.h"
#include "fakes/fake_environment.h"

namespace leasehold::app {
namespace {

using Strings = std::vector<std::string>;
using std::chrono::milliseconds;
using std::chrono::seconds;

Environment EnvWith(std::map<std::string, std::string> vars) {
  return testing::FakeEnvironment(std::move(vars));
}

TEST_CASE("ParseGateCommand: defaults suit the sidecar's defaults with nothing set") {
  auto c = ParseGateCommand({"--", "k8up", "operator"}, EnvWith({}), "/leasehold-bin");
  REQUIRE(c.ok());
  CHECK(c->options.command == Strings{"k8up", "operator"});
  // localhost: both endpoints, IPv4 first, as `leasehold probe` asks (one address rule; the gate
  // once took only the first).
  CHECK(c->options.sidecars == std::vector<contract::Target>{{"127.0.0.1", 4040}, {"::1", 4040}});
  CHECK(c->options.core.stop_signal == SIGTERM);
  CHECK(c->options.core.stop_grace == seconds(3));
  CHECK(c->options.core.margin == milliseconds(250));
  CHECK(c->options.poll_interval == milliseconds(500));
  CHECK(c->options.status_file == "/leasehold-bin/gate-status.json");
  // They pass the check against the sidecar's default timings renewing every retry-period (as
  // deploy/components/gate runs it), and not against auto's longer interval.
  Timings sidecar;
  sidecar.renew_interval = sidecar.retry_period;
  CHECK(gate::CheckStopGrace(c->options.core.stop_grace, c->options.core.margin, sidecar).ok());
  sidecar.renew_interval = milliseconds(5500);
  CHECK(!gate::CheckStopGrace(c->options.core.stop_grace, c->options.core.margin, sidecar).ok());
}

TEST_CASE("ParseGateCommand: flags and variables") {
  struct Case {
    const char* name;
    Strings args;
    std::map<std::string, std::string> vars;
    std::function<void(const GateCommand&)> check;
  };
  const std::vector<Case> cases = {
      {"flags",
       {"--address", "127.0.0.1:9000", "--stop-signal=SIGINT", "--stop-grace", "1s",
        "--poll-interval=100ms", "--status-file", "/tmp/s.json", "--", "prog", "-x"},
       {},
       [](const GateCommand& c) {
         CHECK(c.options.sidecars == std::vector<contract::Target>{{"127.0.0.1", 9000}});
         CHECK(c.options.core.stop_signal == SIGINT);
         CHECK(c.options.core.stop_grace == seconds(1));
         CHECK(c.options.poll_interval == milliseconds(100));
         CHECK(c.options.status_file == "/tmp/s.json");
         CHECK(c.options.command == Strings{"prog", "-x"});
       }},
      {"LEASEHOLD_GATE_* variables",
       {"--", "prog"},
       {{"LEASEHOLD_GATE_STOP_GRACE", "750ms"},
        {"LEASEHOLD_GATE_STOP_SIGNAL", "QUIT"},
        {"LEASEHOLD_GATE_ADDRESS", "[::1]:4041"},
        {"LEASEHOLD_GATE_STATUS_FILE", "off"}},
       [](const GateCommand& c) {
         CHECK(c.options.core.stop_grace == milliseconds(750));
         CHECK(c.options.core.stop_signal == SIGQUIT);
         CHECK(c.options.sidecars == std::vector<contract::Target>{{"::1", 4041}});
         CHECK(c.options.status_file.empty());
       }},
      {"the flag wins over the variable",
       {"--stop-grace=2s", "--", "prog"},
       {{"LEASEHOLD_GATE_STOP_GRACE", "750ms"}},
       [](const GateCommand& c) { CHECK(c.options.core.stop_grace == seconds(2)); }},
      {"the sidecar's own LEASEHOLD_HTTP_ADDRESS, a wildcard asked on loopback",
       {"--", "prog"},
       {{"LEASEHOLD_HTTP_ADDRESS", ":4050"}},
       [](const GateCommand& c) {
         CHECK(c.options.sidecars == std::vector<contract::Target>{{"127.0.0.1", 4050}});
       }},
      {"CMD without --: at the first argument that is no flag",
       {"--stop-grace=1s", "prog", "--its-flag"},
       {},
       [](const GateCommand& c) {
         CHECK(c.options.command == Strings{"prog", "--its-flag"});
       }},
      {"a signal by number",
       {"--stop-signal", "15", "--", "prog"},
       {},
       [](const GateCommand& c) { CHECK(c.options.core.stop_signal == SIGTERM); }},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseGateCommand(c.args, EnvWith(c.vars), "/bin");
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      c.check(*r);
    }
  }
}

TEST_CASE("ParseGateCommand: invalid values name the flag or the variable") {
  struct Case {
    const char* name;
    Strings args;
    std::map<std::string, std::string> vars;
    std::string message_start;
  };
  const std::vector<Case> cases = {
      {"no command", {"--stop-grace=1s"}, {}, "no command"},
      {"no command after --", {"--"}, {}, "no command"},
      {"bad grace", {"--stop-grace=soon", "--", "p"}, {}, "--stop-grace: "},
      {"bad grace from the variable",
       {"--", "p"},
       {{"LEASEHOLD_GATE_STOP_GRACE", "-1s"}},
       "LEASEHOLD_GATE_STOP_GRACE (--stop-grace): "},
      {"bad signal", {"--stop-signal=SIGNOPE", "--", "p"}, {}, "--stop-signal: "},
      {"bad address", {"--address=nowhere", "--", "p"}, {}, "--address: "},
      {"poll interval too short", {"--poll-interval=1ms", "--", "p"}, {}, "--poll-interval: "},
      {"unknown flag", {"--stop-gracee=1s", "--", "p"}, {}, "unknown flag"},
      {"a flag without its value", {"--stop-grace"}, {}, "--stop-grace: needs a value"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto r = ParseGateCommand(c.args, EnvWith(c.vars), "/bin");
      REQUIRE_FALSE(r.ok());
      CHECK(r.status().code() == Code::kBadConfig);
      CHECK_MESSAGE(r.status().message().rfind(c.message_start, 0) == 0, r.status().message());
    }
  }
}

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST_CASE("InstallCopy: an atomic copy, mode 0755, over an older file") {
  char tmpl[] = "/tmp/leasehold-install-test-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string src = dir + "/src";
  {
    std::ofstream f(src, std::ios::binary);
    f << std::string(200000, 'x') << "end";
  }
  {
    std::ofstream old(dir + "/leasehold");
    old << "old";
  }
  REQUIRE(InstallCopy(src, dir, "leasehold").ok());
  CHECK(Slurp(dir + "/leasehold") == Slurp(src));
  struct stat st {};
  REQUIRE(stat((dir + "/leasehold").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0755);
  // No temporary file is left behind.
  CHECK(std::system(("test $(ls -A " + dir + " | wc -l) -eq 2").c_str()) == 0);
  // A directory that does not exist: an error, nothing written.
  CHECK_FALSE(InstallCopy(src, dir + "/missing", "leasehold").ok());
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace leasehold::app
