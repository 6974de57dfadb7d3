// Main's exit codes and its one stderr line, for the paths that need no API server.
#include <doctest/doctest.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/app.h"
#include "base/version.h"
#include "fakes/golden.h"

namespace leasehold::app {
namespace {

struct Outcome {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs Main with fds 1 and 2 pointed at temporary files.
Outcome RunMain(std::vector<std::string> args) {
  args.insert(args.begin(), "leasehold");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  const auto before = spdlog::default_logger();
  std::fflush(stdout);
  std::fflush(stderr);
  FILE* out = std::tmpfile();
  FILE* err = std::tmpfile();
  const int saved_out = dup(1);
  const int saved_err = dup(2);
  dup2(fileno(out), 1);
  dup2(fileno(err), 2);
  Outcome o;
  o.code = Main(static_cast<int>(args.size()), argv.data());
  std::fflush(stdout);
  std::fflush(stderr);
  dup2(saved_out, 1);
  dup2(saved_err, 2);
  close(saved_out);
  close(saved_err);
  spdlog::set_default_logger(before);
  for (auto [file, text] : {std::pair{out, &o.out}, std::pair{err, &o.err}}) {
    std::rewind(file);
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, file)) > 0) text->append(buf, n);
    std::fclose(file);
  }
  return o;
}

TEST_CASE("Main: exit codes") {
  struct Case {
    const char* name;
    std::vector<std::string> args;
    int code;
    std::string out;  // exact
    std::string err;  // exact, or a prefix when it ends with "..."
  };
  const std::vector<Case> cases = {
      {"--version", {"--version"}, 0, std::string("leasehold ") + kVersion + "\n", ""},
      {"bad duration: 2 and one line",
       {"--lock-name=a", "--lease-duration=15x"},
       2,
       "",
       "leasehold: --lease-duration: \"15x\" is not a duration (examples: 15s, 1m30s, 500ms)\n"},
      {"unknown flag",
       {"--bogus"},
       2,
       "",
       "leasehold: unknown flag \"--bogus\" (see leasehold --help)\n"},
      {"probe: bad argument: 2",
       {"probe", "--bogus"},
       2,
       "",
       "leasehold probe: unknown flag \"--bogus\" (see leasehold probe --help)\n"},
      {"probe: nothing answers: 1",
       {"probe", "--leader", "--address=127.0.0.1:1"},
       1,
       "",
       "leasehold probe: no answer (127.0.0.1:1/is-leader: connect: Connection refused)\n"},
      {"unreadable kubeconfig: 2 and one log line",
       {"--lock-name=a", "--kubeconfig=/nonexistent/kubeconfig", "--log-format=json"},
       2,
       "",
       R"({"ts":"...)"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const Outcome o = RunMain(c.args);
      CHECK(o.code == c.code);
      CHECK(o.out == c.out);
      if (c.err.size() > 3 && c.err.compare(c.err.size() - 3, 3, "...") == 0) {
        CHECK(o.err.rfind(c.err.substr(0, c.err.size() - 3), 0) == 0);
        CHECK(o.err.find("cannot load the Kubernetes API configuration") != std::string::npos);
        CHECK(o.err.find('\n') == o.err.size() - 1);
      } else {
        CHECK(o.err == c.err);
      }
    }
  }
}

TEST_CASE("Main: probe --help goes to stdout") {
  const Outcome o = RunMain({"probe", "--help"});
  CHECK(o.code == 0);
  CHECK(o.err.empty());
  CHECK(o.out.rfind("Usage: leasehold probe [--leader] [--address ADDR]\n", 0) == 0);
}

TEST_CASE("Main: a --status-file that cannot be written: 2 and one line naming the flag") {
  char dir[] = "/tmp/leasehold-main-XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string kubeconfig = std::string(dir) + "/kubeconfig";
  {
    std::ofstream f(kubeconfig);
    f << "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
         "clusters: [{name: k, cluster: {server: 'https://127.0.0.1:1', "
         "insecure-skip-tls-verify: true}}]\n"
         "users: [{name: u, user: {token: t}}]\n"
         "contexts: [{name: c, context: {cluster: k, user: u, namespace: ns}}]\n";
  }
  const Outcome o = RunMain({"--lock-name=a", "--kubeconfig=" + kubeconfig,
                             "--status-file=" + std::string(dir) + "/missing/leader.json"});
  std::remove(kubeconfig.c_str());
  rmdir(dir);
  CHECK(o.code == 2);
  // The last line (a warning about the test's insecure kubeconfig comes before it).
  const std::string want = " error --status-file: cannot create " + std::string(dir) +
                           "/missing/.leader.json.tmp: No such file or directory\n";
  REQUIRE(o.err.size() > want.size());
  CHECK(o.err.compare(o.err.size() - want.size(), want.size(), want) == 0);
}

// The subcommand table (app.cpp): each subcommand is reached by its name and answers --help with
// its own usage, before the agent's start-up (no flags, no kubeconfig needed).
TEST_CASE("Main: each subcommand is dispatched by name") {
  struct Case {
    const char* name;
    std::string usage;
  };
  const std::vector<Case> cases = {
      {"probe", "Usage: leasehold probe [--leader] [--address ADDR]\n"},
      {"gate", "Usage: leasehold gate [flags] -- CMD [ARGS...]\n"},
      {"gate-probe", "Usage: leasehold gate-probe [--ready] [--status-file PATH]\n"},
      {"install", "Usage: leasehold install DIR\n"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const Outcome o = RunMain({c.name, "--help"});
      CHECK(o.code == 0);
      CHECK(o.out.rfind(c.usage, 0) == 0);
      CHECK(o.err.empty());
    }
  }
}

// The parser's warnings are logged once logging is set up, so they follow --log-format.
TEST_CASE("Main: a repeated flag and an unknown LEASEHOLD_* variable are logged warnings") {
  REQUIRE(setenv("LEASEHOLD_LEASE_DURATOIN", "20s", 1) == 0);
  // Exits 2 at the status file, after the warnings.
  const Outcome o = RunMain({"--lock-name=a", "--lock-type=none", "--http-address=127.0.0.1:0",
                             "--lease-duration=15s", "--lease-duration=16s", "--log-format=json",
                             "--status-file=/nonexistent/dir/leader.json"});
  unsetenv("LEASEHOLD_LEASE_DURATOIN");
  CHECK(o.code == 2);
  INFO(o.err);
  const auto count = [&o](const std::string& s) {
    size_t n = 0;
    for (size_t at = o.err.find(s); at != std::string::npos; at = o.err.find(s, at + 1)) ++n;
    return n;
  };
  CHECK(count(R"("level":"warn","msg":"--lease-duration is given 2 times on the command line; )"
              R"(the last one on the command line wins: \"16s\""})") == 1);
  CHECK(count(R"("level":"warn","msg":"LEASEHOLD_LEASE_DURATOIN is not a leasehold variable and )"
              R"(is ignored; did you mean LEASEHOLD_LEASE_DURATION (--lease-duration)?"})") == 1);
}

// Every subcommand's --help, byte for byte (the agent's is pinned in flags_test.cpp).
TEST_CASE("golden: each subcommand's --help") {
  for (const char* name : {"probe", "gate", "gate-probe", "install"}) {
    CAPTURE(name);
    const Outcome o = RunMain({name, "--help"});
    CHECK(o.code == 0);
    CHECK(o.err.empty());
    CheckGolden(std::string("help/") + name + ".txt", o.out);
  }
}

// Sets `vars` for its lifetime, with every other LEASEHOLD_* variable of the test's own
// environment unset, and restores the environment afterwards.
class ScopedLeaseholdEnv {
 public:
  explicit ScopedLeaseholdEnv(const std::map<std::string, std::string>& vars) {
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const std::string kv(*e);
      const size_t eq = kv.find('=');
      if (kv.rfind("LEASEHOLD_", 0) == 0 && eq != std::string::npos) {
        saved_.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
      }
    }
    for (const auto& [name, value] : saved_) REQUIRE(unsetenv(name.c_str()) == 0);
    for (const auto& [name, value] : vars) {
      REQUIRE(setenv(name.c_str(), value.c_str(), 1) == 0);
      set_.push_back(name);
    }
  }
  ~ScopedLeaseholdEnv() {
    for (const std::string& name : set_) unsetenv(name.c_str());
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }
  ScopedLeaseholdEnv(const ScopedLeaseholdEnv&) = delete;
  ScopedLeaseholdEnv& operator=(const ScopedLeaseholdEnv&) = delete;

 private:
  std::vector<std::pair<std::string, std::string>> saved_;
  std::vector<std::string> set_;
};

// Every line a subcommand (and the agent, for a sample; flags_test.cpp pins each of its
// messages) exits 2 with, one invocation each, byte for byte: "$ VAR=value leasehold ARGS",
// then "exit N: " and what it wrote to stderr. Each parser's every error branch has a case, so
// a refactor of the parsers is proven to say the same.
TEST_CASE("golden: every exit-2 line of the subcommands") {
  struct Case {
    std::map<std::string, std::string> vars;
    std::vector<std::string> args;
  };
  struct File {
    const char* command;  // "" for the agent
    std::vector<Case> cases;
  };
  const std::vector<File> files = {
      {"",
       {
           {{}, {"--bogus"}},
           {{}, {"--lock-name"}},
           {{}, {"--lock-name=a", "extra"}},
           {{}, {}},
           {{}, {"--lock-name=a", "--lease-duration=15x"}},
           {{{"LEASEHOLD_LEASE_DURATION", "15x"}}, {"--lock-name=a"}},
           {{}, {"--lock-name=a", "--renew-deadline=15s"}},
           {{}, {"--lock-name=a", "--retry-period=999ms"}},
           {{}, {"--lock-name=a", "--max-watchers=10001"}},
           {{{"LEASEHOLD_HTTP_ADDRESS", "localhost"}}, {"--lock-name=a"}},
           {{}, {"--lock-name=a", "--log-level=verbose"}},
           // Several bad: the first in --help order, then the environment's namespace, then the
           // timings' rules (README changelog: --serviceaccount-dir used to come first).
           {{}, {"--lock-name=a", "--serviceaccount-dir=", "--lease-duration=x"}},
           {{{"POD_NAMESPACE", "Bad_NS"}}, {"--lock-name=a", "--log-level=x"}},
           {{{"POD_NAMESPACE", "Bad_NS"}}, {"--lock-name=a", "--renew-deadline=15s"}},
       }},
      {"gate",
       {
           {{}, {"--bogus=1", "--", "p"}},
           {{}, {"--stop-gracee=1s", "--", "p"}},
           {{}, {"--stop-grace"}},
           {{}, {"--stop-grace=1s"}},
           {{}, {"--"}},
           {{}, {}},
           {{}, {"--address=nowhere", "--", "p"}},
           {{{"LEASEHOLD_GATE_ADDRESS", "nowhere"}}, {"--", "p"}},
           {{{"LEASEHOLD_HTTP_ADDRESS", "localhost"}}, {"--", "p"}},
           {{}, {"--stop-signal=SIGNOPE", "--", "p"}},
           {{}, {"--stop-signal", "0", "--", "p"}},
           {{{"LEASEHOLD_GATE_STOP_SIGNAL", "65"}}, {"--", "p"}},
           {{}, {"--stop-grace=soon", "--", "p"}},
           {{{"LEASEHOLD_GATE_STOP_GRACE", "-1s"}}, {"--", "p"}},
           {{}, {"--stop-grace=11m", "--", "p"}},
           {{}, {"--poll-interval=1ms", "--", "p"}},
           {{}, {"--poll-interval=11s", "--", "p"}},
           {{}, {"--poll-interval=x", "--", "p"}},
           {{{"LEASEHOLD_GATE_POLL_INTERVAL", "49ms"}}, {"--", "p"}},
           {{}, {"--log-format=xml", "--", "p"}},
           {{{"LEASEHOLD_GATE_LOG_LEVEL", "verbose"}}, {"--", "p"}},
       }},
      {"probe",
       {
           {{}, {"--bogus"}},
           {{}, {"extra"}},
           {{}, {"--address"}},
           {{}, {"--address=nowhere"}},
           {{}, {"--leader", "--address", "example.com:80"}},
           {{{"LEASEHOLD_HTTP_ADDRESS", "localhost"}}, {}},
       }},
      {"gate-probe",
       {
           {{}, {"--bogus"}},
           {{}, {"--status-file"}},
           {{}, {"--ready", "extra"}},
       }},
      {"install",
       {
           {{}, {}},
           {{}, {"-x"}},
           {{}, {""}},
           {{}, {"a", "b"}},
       }},
  };
  for (const File& f : files) {
    const std::string command = f.command;
    CAPTURE(command);
    std::string out;
    for (const Case& c : f.cases) {
      out += "$";
      for (const auto& [name, value] : c.vars) out += " " + name + "=" + value;
      out += " leasehold";
      if (!command.empty()) out += " " + command;
      for (const std::string& a : c.args) out += a.empty() ? " ''" : " " + a;
      out += "\n";
      std::vector<std::string> args = c.args;
      if (!command.empty()) args.insert(args.begin(), command);
      Outcome o;
      {
        ScopedLeaseholdEnv env(c.vars);
        o = RunMain(args);
      }
      CHECK(o.out.empty());
      out += "exit " + std::to_string(o.code) + ": " + o.err;
    }
    CheckGolden("errors/" + (command.empty() ? std::string("agent") : command) + ".txt", out);
  }
}

TEST_CASE("Main: --help goes to stdout") {
  const Outcome o = RunMain({"--help"});
  CHECK(o.code == 0);
  CHECK(o.err.empty());
  CHECK(o.out.rfind("leasehold contends for a Kubernetes lock", 0) == 0);
}

}  // namespace
}  // namespace leasehold::app
