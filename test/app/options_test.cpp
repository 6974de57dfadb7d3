// The option registry (app/options.h): the machinery, and the drift tests that hold --help, the
// variables' names, the defaults and the docs' flag tables to each command's option table.
#include "app/options.h"

#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/flags.h"
#include "app/gate_command.h"
#include "app/gate_probe.h"
#include "app/probe.h"
#include "app/settings.h"
#include "base/duration.h"
#include "base/listen_address.h"
#include "fakes/fake_environment.h"
#include "fakes/golden.h"
#include "test_paths.h"  // LEASEHOLD_SOURCE_DIR: the docs' flag tables, the harnesses' variables

namespace leasehold::app {
namespace {

using testing::FakeEnvironment;
using Strings = std::vector<std::string>;

const std::string kSource = LEASEHOLD_SOURCE_DIR;

// Whitespace runs as one space: help texts are wrapped, so a phrase may span lines.
std::string Words(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const bool space = c == ' ' || c == '\n';
    if (!space || (!out.empty() && out.back() != ' ')) out += space ? ' ' : c;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The docs' flag tables, generated from the option tables.

// A table cell's `|` is escaped, even in code.
std::string Cell(std::string s) {
  for (size_t at = s.find('|'); at != std::string::npos; at = s.find('|', at + 2)) {
    s.replace(at, 1, "\\|");
  }
  return s;
}

std::string Code(const std::string& s) { return "`" + s + "`"; }

std::string DefaultCell(const SettingDoc& s) {
  if (!s.required.empty()) return "required";
  if (s.default_text.empty()) return "none";
  // A value is code; a description ("$POD_NAMESPACE, else ...") is prose.
  const std::string value =
      s.default_text.find(' ') == std::string::npos ? Code(s.default_text) : s.default_text;
  return s.fallback_env.empty() ? value : Code("$" + s.fallback_env) + ", else " + value;
}

std::string FlagTable(const std::vector<SettingDoc>& settings) {
  std::string out = "| flag | variable | default | |\n|---|---|---|---|\n";
  for (const SettingDoc& s : settings) {
    std::string flag = Code("--" + s.flag + (s.arg.empty() ? "" : " " + s.arg));
    if (!s.alias.empty()) flag += ", " + Code("--" + s.alias + (s.arg.empty() ? "" : " " + s.arg));
    const std::string what = Words(Substitute(s.summary.empty() ? s.help : s.summary, s));
    out += "| " + Cell(flag) + " | " + (s.env.empty() ? "none" : Code(s.env)) + " | " +
           Cell(DefaultCell(s)) + " | " + Cell(what) + " |\n";
  }
  return out;
}

std::string ReadText(const std::string& path) { return ReadWholeFile(path); }

TEST_CASE("drift: the docs' flag tables are generated from the option tables") {
  struct Doc {
    const char* path;    // under the source tree
    const char* marker;  // <!-- flags: MARKER begin --> ... <!-- flags: MARKER end -->
    std::vector<SettingDoc> settings;
  };
  const std::vector<Doc> docs = {
      {"docs/install.md", "leasehold", AgentSettings()},
      {"docs/gate.md", "leasehold gate", GateSettings()},
  };
  for (const Doc& d : docs) {
    CAPTURE(d.path);
    const std::string path = kSource + "/" + d.path;
    std::string text = ReadText(path);
    const std::string begin = std::string("<!-- flags: ") + d.marker +
                              " begin (generated from the option table; "
                              "test/app/options_test.cpp fails on drift) -->\n";
    const std::string end = std::string("<!-- flags: ") + d.marker + " end -->\n";
    const size_t b = text.find(begin);
    REQUIRE_MESSAGE(b != std::string::npos, "no begin marker: " << begin);
    const size_t e = text.find(end, b);
    REQUIRE_MESSAGE(e != std::string::npos, "no end marker: " << end);
    const std::string want = FlagTable(d.settings);
    const std::string have = text.substr(b + begin.size(), e - b - begin.size());
    const char* update = std::getenv("LEASEHOLD_UPDATE_GOLDEN");
    if (update != nullptr && std::string(update) == "1" && have != want) {
      text.replace(b + begin.size(), have.size(), want);
      std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
      continue;
    }
    CHECK(have == want);
  }
}

// ---------------------------------------------------------------------------------------------
// --help, from the same tables.

TEST_CASE("drift: each --help states every setting's flag, variable and default") {
  auto agent = ParseCommandLine({"--help"}, FakeEnvironment({}));
  REQUIRE(agent.ok());
  auto gate = ParseGateCommand({"--help"}, FakeEnvironment({}), "/bin");
  REQUIRE(gate.ok());
  auto probe = ParseProbeCommand({"--help"}, FakeEnvironment({}));
  REQUIRE(probe.ok());
  struct Help {
    const char* name;
    std::string text;
    std::vector<SettingDoc> settings;
    bool env_lines;  // the agent's "Env: VAR." lines; the others say "$VAR" where it is read
  };
  const std::vector<Help> helps = {
      {"leasehold", Words(agent->output), AgentSettings(), true},
      {"leasehold gate", Words(gate->output), GateSettings(), false},
      {"leasehold probe", Words(probe->output), ProbeSettings(), false},
  };
  for (const Help& h : helps) {
    for (const SettingDoc& s : h.settings) {
      CAPTURE(h.name);
      CAPTURE(s.flag);
      CHECK(h.text.find("--" + s.flag) != std::string::npos);
      if (!s.alias.empty()) CHECK(h.text.find("--" + s.alias) != std::string::npos);
      if (h.env_lines) {
        CHECK(h.text.find("Env: " + s.env + ".") != std::string::npos);
        if (!s.default_text.empty()) {
          CHECK(h.text.find("Default: " + Words(s.default_text) + ".") != std::string::npos);
        }
      } else if (!s.default_text.empty()) {
        CHECK(h.text.find(s.default_text) != std::string::npos);
      }
      if (!s.fallback_env.empty()) CHECK(h.text.find("$" + s.fallback_env) != std::string::npos);
    }
  }
  // Every agent setting has a variable, spelled by the one rule.
  for (const SettingDoc& s : AgentSettings()) {
    CAPTURE(s.flag);
    CHECK(s.env == EnvVarFor(s.flag));
  }
}

// A variable that is not its own command's (`probe --address` reads LEASEHOLD_HTTP_ADDRESS) is
// another setting's own: no command reads a variable nobody declares.
TEST_CASE("drift: each variable a command reads is some setting's own") {
  std::set<std::string> own;
  for (const SettingDoc& s : AgentSettings()) own.insert(s.env);
  for (const SettingDoc& s : GateSettings()) {
    CHECK(s.env == VariableName("LEASEHOLD_GATE_", s.flag));
    own.insert(s.env);
  }
  for (const auto& of : {AgentSettings, GateSettings, GateProbeSettings, ProbeSettings}) {
    for (const SettingDoc& s : of()) {
      CAPTURE(s.command);
      CAPTURE(s.flag);
      if (!s.env.empty()) CHECK(own.count(s.env) == 1);
      if (!s.fallback_env.empty()) CHECK(own.count(s.fallback_env) == 1);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Defaults: what --help prints is what the parsers apply with nothing set.

TEST_CASE("drift: the defaults --help states are the ones the parsers apply") {
  auto parsed = ParseCommandLine({"--lock-name=a"}, FakeEnvironment({}));
  REQUIRE_MESSAGE(parsed.ok(), parsed.status().message());
  const AppConfig& c = *parsed->config;
  const election::ElectionConfig& e = c.election;
  // The agent's settings whose default is a value, as the parsed config holds it.
  const std::map<std::string, std::string> applied = {
      {"lock-type", std::string(election::LockTypeName(c.lock.type))},
      {"lease-duration", FormatGoDuration(e.lease_duration())},
      {"renew-deadline", FormatGoDuration(e.renew_deadline())},
      {"retry-period", FormatGoDuration(e.retry_period())},
      {"release-on-shutdown", election::ReleaseModeName(e.release_mode())},
      {"release-holdoff", FormatGoDuration(e.release_holdoff())},
      {"preferred-holder", election::PreferredHolderRuleName(e.preferred_holder_rule())},
      {"http-address", c.local_api.http_address},
      {"max-watchers", std::to_string(c.local_api.max_watchers)},
      {"probe-address", c.local_api.probe_address.empty() ? "off" : c.local_api.probe_address},
      {"serviceaccount-dir", c.kube.serviceaccount_dir},
      {"log-format", LogFormatName(c.log.format)},
      {"log-level", LogLevelName(c.log.level)},
      {"agent-mode", AgentModeName(c.mode)},
      {"observe-identity", election::MatchRuleName(c.observe_match.rule)},
  };
  // Defaults that are descriptions (from the environment, the kubeconfig), or none.
  const std::set<std::string> described = {"lock-name",   "namespace",    "identity",
                                           "status-file", "leader-label", "deletion-cost",
                                           "kubeconfig",  "context",      "renew-interval"};
  for (const SettingDoc& s : AgentSettings()) {
    CAPTURE(s.flag);
    if (s.flag == "renew-interval") {
      // Described (auto), with the interval it gives at the default timings.
      const std::string at = "(" + FormatGoDuration(e.renew_interval()) + " at the default";
      CHECK(s.default_text.find(at) != std::string::npos);
    }
    if (auto it = applied.find(s.flag); it != applied.end()) {
      CHECK(s.default_text == it->second);
    } else {
      CHECK_MESSAGE(described.count(s.flag) == 1, "a new setting: add it to this test");
    }
  }
  // Old homes of these defaults, each written once now: the election's, the watch hub's, the
  // cluster config's.
  CHECK(c.local_api.http_address == kDefaultHttpAddress);
  CHECK(c.kube.serviceaccount_dir == kube::LoadOptions{}.serviceaccount_dir);

  auto gate = ParseGateCommand({"--", "p"}, FakeEnvironment({}), "/bin");
  REQUIRE_MESSAGE(gate.ok(), gate.status().message());
  std::map<std::string, std::string> gate_default;
  for (const SettingDoc& s : GateSettings()) gate_default[s.flag] = s.default_text;
  CHECK(gate_default.size() == 7);
  CHECK(gate_default["stop-grace"] == FormatGoDuration(gate->options.core.stop_grace));
  CHECK(gate_default["poll-interval"] == FormatGoDuration(gate->options.poll_interval));
  CHECK(gate_default["stop-signal"] == "SIGTERM");
  CHECK(gate->options.core.stop_signal == SIGTERM);
  CHECK(gate_default["status-file"] == "gate-status.json");
  CHECK(gate->options.status_file == "/bin/gate-status.json");
  CHECK(gate_default["address"] == kDefaultHttpAddress);
  CHECK(gate->options.sidecars ==
        std::vector<contract::Target>{{"127.0.0.1", 4040}, {"::1", 4040}});
  CHECK(gate_default["log-format"] == LogFormatName(gate->log.format));
  CHECK(gate_default["log-level"] == LogLevelName(gate->log.level));

  auto probe = ParseProbeCommand({}, FakeEnvironment({}));
  REQUIRE(probe.ok());
  for (const SettingDoc& s : ProbeSettings()) {
    if (s.flag == "address") CHECK(s.default_text == probe->address);
  }
}

// The one observable change of the registry (README changelog): which variables warn, and the
// words, for the agent and the gate, byte for byte.
TEST_CASE("golden: the near-miss warnings of the agent and the gate") {
  const std::map<std::string, std::string> vars = {
      {"LEASEHOLD_LEASE_DURATOIN", "20s"},
      {"LEASEHOLD_RETRY_PERIO", "1s"},
      {"LEASEHOLD_ELECTION", "x"},
      {"LEASEHOLD_KUBECONFG", "x"},
      {"LEASEHOLD_GATE_STOP_GRAEC", "1s"},
      {"LEASEHOLD_GATE_ADRESS", ":1"},
      {"LEASEHOLD_HTTP_ADRESS", ":1"},
      {"LEASEHOLD_ZZ_LOG_LEVEL", "x"},
      {"LEASEHOLD_PID", "1"},
      {"LEASEHOLD_BIN", "/b"},
      {"LEASEHOLD_GATE_STOP_GRACE", "1s"},
      {"LEASEHOLD_HTTP_ADDRESS", "127.0.0.1:4040"},
      {"LEASEHOLD_E2E_CP", "/cp"},
      {"LEASEHOLD_NAMESPACE", "ns"},
      {"LEASEHOLD_lease_duration", "15s"},
      {"leasehold_retry_period", "1s"},
      {"Leasehold_Bin", "x"},
  };
  auto agent = ParseCommandLine({"--lock-name=a"}, FakeEnvironment(vars));
  REQUIRE_MESSAGE(agent.ok(), agent.status().message());
  auto gate = ParseGateCommand({"--", "p"}, FakeEnvironment(vars), "/bin");
  REQUIRE_MESSAGE(gate.ok(), gate.status().message());
  std::string out = "$ leasehold --lock-name=a\n";
  for (const std::string& w : agent->warnings) out += w + "\n";
  out += "$ leasehold gate -- p\n";
  for (const std::string& w : gate->warnings) out += w + "\n";
  CheckGolden("warnings/unknown-variables.txt", out);
}

// ---------------------------------------------------------------------------------------------
// The machinery.

struct Draft {
  int n = 7;
  std::string word = "w";
  bool loud = false;
};

const OptionTable<Draft>& TestTable() {
  using Row = Option<Draft>;
  static const OptionTable<Draft> table{
      "leasehold test",
      "LEASEHOLD_TEST_",
      {
          Row("number", "N",
              [](const std::string& t, Draft& d) {
                if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos) {
                  return Status(Code::kBadConfig, "not a number");
                }
                d.n = std::stoi(t);
                return Status::Ok();
              })
              .Default([](const Draft& d) { return std::to_string(d.n); })
              .Help("a number (default {default}, or {env})"),
          Row("word", "W",
              [](const std::string& t, Draft& d) {
                d.word = t;
                return Status::Ok();
              })
              .Alias("w")
              .Fallback("LEASEHOLD_OTHER")
              .Required("must be given")
              .Help("a word\nover two lines (else ${fallback})"),
          Row("loud", "",
              [](const std::string&, Draft& d) {
                d.loud = true;
                return Status::Ok();
              })
              .Env(""),
      }};
  return table;
}

TEST_CASE("ReadOptions: the flag, else the variable, else the fallback; the first bad one") {
  struct Case {
    const char* name;
    std::map<std::string, std::string> flags;
    std::map<std::string, std::string> vars;
    std::string want;  // "n=.. word=.." or the error
  };
  const std::vector<Case> cases = {
      {"flags", {{"number", "3"}, {"word", "x"}}, {}, "n=3 word=x"},
      {"variables",
       {},
       {{"LEASEHOLD_TEST_NUMBER", "4"}, {"LEASEHOLD_TEST_WORD", "y"}},
       "n=4 word=y"},
      {"the flag wins", {{"word", "x"}}, {{"LEASEHOLD_TEST_WORD", "y"}}, "n=7 word=x"},
      {"the fallback", {}, {{"LEASEHOLD_OTHER", "z"}}, "n=7 word=z"},
      {"own variable before the fallback",
       {},
       {{"LEASEHOLD_OTHER", "z"}, {"LEASEHOLD_TEST_WORD", "y"}},
       "n=7 word=y"},
      {"an empty variable is unset",
       {},
       {{"LEASEHOLD_TEST_WORD", ""}, {"LEASEHOLD_OTHER", "z"}},
       "n=7 word=z"},
      {"required", {}, {}, "--word: required: must be given"},
      {"a bad flag", {{"number", "x"}, {"word", "w"}}, {}, "--number: not a number"},
      {"a bad variable",
       {{"word", "w"}},
       {{"LEASEHOLD_TEST_NUMBER", "x"}},
       "LEASEHOLD_TEST_NUMBER (--number): not a number"},
      {"the first in table order", {{"number", "x"}}, {}, "--number: not a number"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      const CommandLineValue command_line =
          [&c](const std::string& flag) -> std::optional<std::string> {
        auto it = c.flags.find(flag);
        return it == c.flags.end() ? std::nullopt : std::optional<std::string>(it->second);
      };
      Draft d;
      const Status st = ReadOptions(TestTable(), command_line, FakeEnvironment(c.vars), d);
      const std::string got =
          st.ok() ? "n=" + std::to_string(d.n) + " word=" + d.word : st.message();
      CHECK(got == c.want);
      if (!st.ok()) CHECK(st.code() == Code::kBadConfig);
    }
  }
}

TEST_CASE("RenderColumns: placeholders and continuation lines") {
  CHECK(RenderColumns(Describe(TestTable()), 14) ==
        "  --number N  a number (default 7, or LEASEHOLD_TEST_NUMBER)\n"
        "  --word W    a word\n"
        "              over two lines (else $LEASEHOLD_OTHER)\n");
  // A flag wider than the column: two spaces.
  CHECK(RenderColumns(Describe(TestTable()), 6).rfind("  --number N  a number", 0) == 0);
}

// What ScanArguments made of `args`, on one line: "help", the error, or each flag's values and
// the command.
std::string Scanned(const std::vector<std::string>& args, bool takes_command) {
  const Result<Arguments> a =
      ScanArguments(Describe(TestTable()), args, ScanRules("leasehold test", takes_command, {"x"}));
  if (!a.ok()) return a.status().message();
  if (a->help) return "help";
  std::string out;
  for (const auto& [flag, values] : a->values) {
    out += flag + "=";
    for (const std::string& v : values) out += "[" + v + "]";
    out += " ";
  }
  for (const std::string& word : a->command) out += "<" + word + ">";
  return out;
}

TEST_CASE("ScanArguments: --flag=v, --flag v, switches, --, -h") {
  struct Case {
    const char* name;
    Strings args;
    bool takes_command;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"nothing", {}, false, ""},
      {"both forms, in order", {"--number=1", "--number", "2"}, false, "number=[1][2] "},
      {"an alias under its flag", {"--w", "a", "--word=b"}, false, "word=[a][b] "},
      {"an empty value", {"--word="}, false, "word=[] "},
      {"the next argument, whatever it is", {"--word", "--number"}, false, "word=[--number] "},
      {"a switch, and the command's own", {"--loud", "--x"}, false, "loud=[] x=[] "},
      {"-h", {"--number=x", "-h", "--bogus"}, false, "help"},
      {"--help", {"--help"}, false, "help"},
      {"-- ends the flags", {"--loud", "--", "--help", "a"}, true, "loud=[] <--help><a>"},
      {"the command starts at the first non-flag",
       {"--loud", "p", "--x"},
       true,
       "loud=[] <p><--x>"},
      {"a lone --", {"--"}, false, ""},
      // Rejections: each names the command's --help.
      {"unknown", {"--bogus=1"}, false, R"(unknown flag "--bogus" (see leasehold test --help))"},
      {"unknown single dash",
       {"-v"},
       false,
       R"(unexpected argument "-v": leasehold test takes flags only (see leasehold test --help))"},
      {"no value", {"--number"}, false, "--number: needs a value (see leasehold test --help)"},
      {"a switch with a value",
       {"--loud=yes"},
       false,
       "--loud: takes no value (see leasehold test --help)"},
      {"a positional argument",
       {"--loud", "extra"},
       false,
       R"(unexpected argument "extra": leasehold test takes flags only (see leasehold test --help))"},
      {"after --",
       {"--", "extra"},
       false,
       R"(unexpected argument "extra": leasehold test takes flags only (see leasehold test --help))"},
      {"no command",
       {"--loud", "--"},
       true,
       "no command: leasehold test [flags] -- CMD [ARGS...] (see leasehold test --help)"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(Scanned(c.args, c.takes_command) == c.want); }
  }
}

// Every command's arguments go through the one scanner: the same rejection, the same words,
// naming the command whose --help to read.
TEST_CASE("every command rejects bad arguments in the same words") {
  using Parse = std::function<Status(const Strings& args)>;
  struct Command {
    const char* name;
    Parse parse;
    const char* a_flag;    // one of its flags that takes a value
    const char* a_switch;  // one of its switches, or nullptr
  };
  const Environment env = FakeEnvironment({});
  const std::vector<Command> commands = {
      {"leasehold", [&env](const Strings& a) { return ParseCommandLine(a, env).status(); },
       "--lock-name", "--version"},
      {"leasehold gate",
       [&env](const Strings& a) { return ParseGateCommand(a, env, "/bin").status(); },
       "--stop-grace", nullptr},
      {"leasehold probe", [&env](const Strings& a) { return ParseProbeCommand(a, env).status(); },
       "--address", "--leader"},
      {"leasehold gate-probe",
       [&env](const Strings& a) { return ParseGateProbeCommand(a, env).status(); }, "--status-file",
       "--ready"},
  };
  for (const Command& cmd : commands) {
    CAPTURE(cmd.name);
    const std::string command = cmd.name;
    const bool gate = command == "leasehold gate";
    const std::string see = " (see " + command + " --help)";
    struct Case {
      Strings args;
      std::string want;
    };
    std::vector<Case> cases = {
        {{"--bogus", "--", "p"}, R"(unknown flag "--bogus")"},
        {{"--bogus=secret", "--", "p"}, R"(unknown flag "--bogus")"},
        {{cmd.a_flag}, std::string(cmd.a_flag) + ": needs a value"},
    };
    if (cmd.a_switch != nullptr) {
      cases.push_back(
          {{std::string(cmd.a_switch) + "=1"}, std::string(cmd.a_switch) + ": takes no value"});
    }
    if (gate) {
      cases.push_back({{"--stop-grace=1s"}, "no command: leasehold gate [flags] -- CMD [ARGS...]"});
    } else {
      cases.push_back(
          {{"extra"}, R"(unexpected argument "extra": )" + command + " takes flags only"});
      cases.push_back({{"-x"}, R"(unexpected argument "-x": )" + command + " takes flags only"});
    }
    for (const Case& c : cases) {
      CAPTURE(c.args.front());
      const Status st = cmd.parse(c.args);
      CHECK(st.code() == Code::kBadConfig);
      CHECK(st.message() == c.want + see);
    }
  }
}

TEST_CASE("IsNearMiss: at most 2 edits and at most a quarter of the setting's name") {
  struct Case {
    const char* name;
    const char* candidate;
    bool near;
  };
  const std::vector<Case> cases = {
      {"LEASEHOLD_LEASE_DURATOIN", "LEASEHOLD_LEASE_DURATION", true},  // 2 edits of 14
      {"LEASEHOLD_RETRY_PERIO", "LEASEHOLD_RETRY_PERIOD", true},
      {"LEASEHOLD_ELECTION", "LEASEHOLD_ELECTION", true},        // an alias's would-be variable
      {"LEASEHOLD_CONTXT", "LEASEHOLD_CONTEXT", true},           // 1 of 7
      {"LEASEHOLD_ZZ_LOG_LEVEL", "LEASEHOLD_LOG_LEVEL", false},  // 3 edits
      {"LEASEHOLD_PID", "LEASEHOLD_ID", false},                  // 1 edit of a 2-letter name
      {"LEASEHOLD_BIN", "LEASEHOLD_ID", false},
      {"LEASEHOLD_NS", "LEASEHOLD_ID", false},
      {"LEASEHOLD_CONTET", "LEASEHOLD_CONTEXT", true},
      {"LEASEHOLD_CONTE", "LEASEHOLD_CONTEXT", false},  // 2 of 7: more than a quarter
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(IsNearMiss(c.name, c.candidate) == c.near);
  }
}

TEST_CASE("UnknownVariableWarnings: a name of any length costs no more than a short one") {
  // 1 MiB names (the kernel allows 128 KiB a string; the injected environment has no limit):
  // without the length bound the edit distances cost ~10^9 steps, seconds; with it, none.
  const std::string tail(1 << 20, 'A');
  const Environment env = FakeEnvironment({{"LEASEHOLD_" + tail, "x"},
                                           {"LEASEHOLD_LEASE_DURATION" + tail, "x"},
                                           {"LEASEHOLD_LEASE_DURATOIN", "x"}});
  const auto start = std::chrono::steady_clock::now();
  const Strings warnings = UnknownVariableWarnings(env, AllSettings(), "leasehold");
  const auto took = std::chrono::steady_clock::now() - start;
  REQUIRE(warnings.size() == 1);  // the near miss still warns; the long names do not
  CHECK(warnings[0].rfind("LEASEHOLD_LEASE_DURATOIN is not a leasehold variable", 0) == 0);
  CHECK(took < std::chrono::milliseconds(500));
}

// ---------------------------------------------------------------------------------------------
// The variables of everything around the product (harnesses, build scripts, CI): none of them
// may make the agent or the gate warn. The product no longer lists them: the
// near-miss rule keeps them silent, and this test proves it for the names known to be used.

// Outside this repository, or set by CI: the names the product used to compile in.
const std::vector<std::string> kOutsideNames = {
    "LEASEHOLD_BIN",           "LEASEHOLD_INTEROP_BIN",
    "LEASEHOLD_SANITIZE",      "LEASEHOLD_BUILD_TESTS",
    "LEASEHOLD_VARIANT",       "LEASEHOLD_PID",
    "LEASEHOLD_SOAK_SECONDS",  "LEASEHOLD_TEST_CERTS_DIR",
    "LEASEHOLD_E2E_CP",        "LEASEHOLD_E2E_CACHE",
    "LEASEHOLD_E2E_OUT",       "LEASEHOLD_SKIP_E2E",
    "LEASEHOLD_SKIP_FUZZ",     "LEASEHOLD_SKIP_SANITIZERS",
    "LEASEHOLD_SKIP_MODEL",    "LEASEHOLD_SKIP_RULES",
    "LEASEHOLD_FUZZ",          "LEASEHOLD_FUZZ_SECONDS",
    "LEASEHOLD_CHAOS_SEED",    "LEASEHOLD_CHAOS_LONG",
    "LEASEHOLD_IMAGE",         "LEASEHOLD_SETUP_FUZZ",
    "LEASEHOLD_UPDATE_GOLDEN", "LEASEHOLD_NODE",
    "LEASEHOLD_STATIC",        "LEASEHOLD_PROMETHEUS",
    "LEASEHOLD_TERM",          "LEASEHOLD_TERM_RELIABLE",
};

// Every LEASEHOLD_* name in the harnesses' files.
std::set<std::string> NamesInTree() {
  namespace fs = std::filesystem;
  const std::regex name("LEASEHOLD_[A-Z0-9_]*[A-Z0-9]");
  std::set<std::string> out;
  const auto scan = [&](const fs::path& file) {
    std::error_code ec;
    if (fs::file_size(file, ec) > (1u << 20) || ec) return;
    std::ifstream in(file, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    const std::string text = s.str();
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name);
         it != std::sregex_iterator(); ++it) {
      out.insert(it->str());
    }
  };
  for (const char* dir : {"e2e", "scripts", "deploy", "fuzz", "bench", ".ci"}) {
    const fs::path root = fs::path(kSource) / dir;
    if (!fs::exists(root)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_regular_file()) scan(entry.path());
    }
  }
  for (const char* file : {"Makefile", "Dockerfile"}) {
    if (fs::exists(fs::path(kSource) / file)) scan(fs::path(kSource) / file);
  }
  return out;
}

TEST_CASE("no variable of the harnesses makes the agent or the gate warn") {
  const std::set<std::string> in_tree = NamesInTree();
  // The scan finds them (it would pass vacuously on an empty set).
  CHECK(in_tree.count("LEASEHOLD_E2E_CP") == 1);
  CHECK(in_tree.count("LEASEHOLD_BIN") == 1);
  std::map<std::string, std::string> vars;
  for (const std::string& n : in_tree) vars[n] = "x";
  for (const std::string& n : kOutsideNames) vars[n] = "x";
  INFO(vars.size() << " names");
  CHECK(vars.size() > 50);
  const Environment env = FakeEnvironment(vars);
  for (const char* command : {"leasehold", "leasehold gate"}) {
    CAPTURE(command);
    CHECK(UnknownVariableWarnings(env, AllSettings(), command) == Strings{});
  }
}

}  // namespace
}  // namespace leasehold::app
