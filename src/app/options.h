// The option registry's machinery, shared by the agent, `gate`, `gate-probe` and `probe`.
//
// Each command declares each of its settings once, as one Option of its own draft type, in its
// own file: the flag (and alias), the environment variable, the default (printed from the
// draft's default value, which lives in the struct where its meaning lives), the parser with
// the setting's own validation, and the help. From that one table come the scanning of the
// command line (ScanArguments, the same for every command), the reading (the flag, else the
// variable), --help's defaults and variables, the variables' names for the
// unknown-variable warning, and the docs' flag tables (test/app/options_test.cpp regenerates
// those and fails on drift). Rules that span settings (lease > renew-deadline > retry x jitter,
// the floors, the gate's stop-grace against the sidecar's timings) stay with the code that owns
// them (election/config, gate/core); they are not per-setting parsers.
//
// Includes only base: every command's file may include it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace leasehold::app {

// What a command may read of the world besides its arguments. Tests pass maps; RealEnvironment()
// the process's.
struct Environment {
  // nullopt when unset.
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  // The names of all environment variables, for the check of unknown LEASEHOLD_* ones; an empty
  // function skips that check.
  std::function<std::vector<std::string>()> names;
  // A whole small file (the service-account namespace file); kNotFound when it does not exist.
  // RealEnvironment's reads it with ReadRegularFile (base/file.h), capped at
  // kMaxNamespaceFileBytes.
  std::function<Result<std::string>(const std::string& path)> read_file;
  std::function<std::string()> hostname;
  // 8 random lower-case hex digits, fresh per call.
  std::function<std::string()> random_hex8;
};

Environment RealEnvironment();

// The prefix of every leasehold variable.
inline constexpr const char* kVariablePrefix = "LEASEHOLD_";

// `prefix` + the flag upper-cased with dashes as underscores: ("LEASEHOLD_", "lease-duration")
// → "LEASEHOLD_LEASE_DURATION".
std::string VariableName(const std::string& prefix, const std::string& flag);

// A setting's `env` when its variable is the command's prefix + its flag (the usual case, and an
// Option's default); none when the command's prefix is "" (`probe`, `gate-probe`).
inline constexpr const char* kOwnVariable = "*";

// One setting of a command whose values are collected in a `Draft` (a plain struct whose
// default-constructed value holds every default), built by name:
//   Option<Draft>("release-holdoff", "DURATION", Store<...>).Default(...).Help("...")
template <typename Draft>
struct Option {
  using Parser = Status (*)(const std::string& text, Draft& draft);
  using DefaultText = std::string (*)(const Draft& defaults);

  // `flag` ("lease-duration") takes a value shown as `arg` in help ("DURATION"), or is a switch
  // when `arg` is "" (it takes no value; its parser gets ""). `parse` parses one given value into
  // the draft and checks it on its own: kBadConfig with a message that does not name the setting
  // (the reader puts its origin in front).
  Option(const char* flag_name, const char* arg_text, Parser parser)
      : flag(flag_name), arg(arg_text), parse(parser) {}

  // Another flag for the same setting; it has no variable.
  Option& Alias(const char* name) { return Set(&Option::alias, name); }
  // Another setting's variable instead of its own (`probe --address` reads the agent's
  // LEASEHOLD_HTTP_ADDRESS), or "" for none.
  Option& Env(const char* name) { return Set(&Option::env, name); }
  // Read when neither the flag nor its variable is given: `gate --address` falls back on the
  // agent's LEASEHOLD_HTTP_ADDRESS.
  Option& Fallback(const char* name) { return Set(&Option::fallback_env, name); }
  // It must be given, and an error says "required: " and this (Substitute'd, see below).
  Option& Required(const char* what) { return Set(&Option::required, what); }
  // The default as help prints it, from a default-constructed Draft.
  Option& Default(DefaultText text) {
    default_text = text;
    return *this;
  }
  Option& Help(const char* text) { return Set(&Option::help, text); }
  // Its cell in the docs' flag table.
  Option& Summary(const char* text) { return Set(&Option::summary, text); }

  const char* flag;
  const char* alias = "";  // "" none
  const char* arg;
  const char* env = kOwnVariable;
  const char* fallback_env = "";       // "" none
  const char* required = "";           // "" when it may be left unset
  DefaultText default_text = nullptr;  // nullptr when there is none worth printing
  Parser parse;
  const char* help = "";
  const char* summary = "";  // "" when the setting is not in a docs table

 private:
  Option& Set(const char* Option::*field, const char* value) {
    this->*field = value;
    return *this;
  }
};

// An Option's parse for the common case: what `parse` makes of the text, stored in
// `draft.*field`, e.g. Store<Draft, Duration, &Draft::holdoff, ParseDuration>.
template <typename Draft, typename T, T Draft::*field, Result<T> (*parse)(const std::string&)>
Status Store(const std::string& text, Draft& draft) {
  Result<T> v = parse(text);
  if (v.ok()) draft.*field = *v;
  return v.status();
}

// A switch's row: given, it sets `draft.*field`.
template <typename Draft, bool Draft::*field>
Option<Draft> SwitchOption(const char* flag) {
  return Option<Draft>(flag, "", [](const std::string&, Draft& draft) {
    draft.*field = true;
    return Status::Ok();
  });
}

// A command's settings, in the order its --help lists them (and its reader reads them).
template <typename Draft>
struct OptionTable {
  const char* command;  // "leasehold", "leasehold gate", ...
  // For kOwnVariable: "LEASEHOLD_", "LEASEHOLD_GATE_"; "" when its settings have none of their own.
  const char* env_prefix;
  std::vector<Option<Draft>> options;
};

// One setting as --help, the docs and the unknown-variable check see it (an Option without its
// draft type).
struct SettingDoc {
  std::string command;  // "leasehold", "leasehold gate"
  std::string flag;
  std::string alias;
  std::string arg;
  std::string env;           // "" none
  std::string fallback_env;  // "" none
  std::string required;      // "" optional
  std::string default_text;  // "" none
  std::string help;
  std::string summary;
};

// `text` with "{default}", "{env}" and "{fallback}" replaced by the setting's default, variable
// and fallback variable.
std::string Substitute(const std::string& text, const SettingDoc& setting);

// A setting's value as given, and where it came from.
struct Given {
  bool set = false;
  std::string text;
  // For messages: "--lease-duration", or "LEASEHOLD_LEASE_DURATION (--lease-duration)".
  std::string origin;
};

// What a command's argument scanner found for a flag: its last value, or nullopt.
using CommandLineValue = std::function<std::optional<std::string>(const std::string& flag)>;

// How a command reads its arguments besides its settings.
struct ScanRules {
  explicit ScanRules(const char* name, bool command_follows = false,
                     std::vector<std::string> own_switches = {})
      : command(name), takes_command(command_follows), switches(std::move(own_switches)) {}

  const char* command;  // "leasehold", "leasehold gate": every error names it
  // `gate`: CMD [ARGS...] follows the flags, after "--" or from the first argument that does not
  // start with "--". Otherwise every argument is a flag, and one that is not is an error.
  bool takes_command;
  // Switches the command handles itself besides -h and --help: the agent's "version".
  std::vector<std::string> switches;
};

// A command line scanned against a command's settings (ScanArguments).
struct Arguments {
  bool help = false;  // -h or --help: the scan stopped there
  // Each flag given, with its values in the order given (a switch's value is ""); an alias's
  // under its setting's flag.
  std::vector<std::pair<std::string, std::vector<std::string>>> values;
  std::vector<std::string> command;  // ScanRules::takes_command: CMD [ARGS...]

  // How often `flag` was given.
  size_t Count(const std::string& flag) const;
  // The flag's last value, or nullopt; what ReadOptions reads from the command line.
  std::optional<std::string> Last(const std::string& flag) const;
  CommandLineValue LastValues() const;
};

// The one argument scanner of every command: --flag=VALUE and --flag VALUE (the next argument,
// whatever it is), --switch, "--" ending the flags, -h and --help. kBadConfig, one line ending
// "(see COMMAND --help)", for an unknown flag, a flag without its value, a switch with one, and
// an argument that is no flag where the command takes none (messages: base/messages.h). Values
// are not checked here: ReadOptions does that, setting by setting.
Result<Arguments> ScanArguments(const std::vector<SettingDoc>& settings,
                                const std::vector<std::string>& args, const ScanRules& rules);

// Status(kBadConfig, "<what> (see <command> --help)"): a rejection of a command's arguments.
Status UsageError(const std::string& command, const std::string& what);

// What a subcommand does before it runs, given its parsed command line (a Result of a struct
// with an `output`): an error is one line on stderr, "<command>: <message>", and exit code 2;
// an output (--help) goes to stdout, exit code 0; nullopt: run it.
std::optional<int> ExitBeforeRunning(const std::string& command, const Status& parsed,
                                     const std::string& output);
template <typename Parsed>
std::optional<int> ExitBeforeRunning(const std::string& command, const Result<Parsed>& parsed) {
  return ExitBeforeRunning(command, parsed.status(), parsed.ok() ? parsed->output : "");
}

// The flag's last value on the command line, else its variable, else its fallback variable (an
// empty variable counts as unset). Not set: origin names the flag.
Given Lookup(const SettingDoc& setting, const CommandLineValue& command_line,
             const Environment& env);

// Status(kBadConfig, "<origin>: <message>").
Status BadValue(const Given& given, const std::string& message);

template <typename Draft>
SettingDoc Describe(const OptionTable<Draft>& table, const Option<Draft>& o) {
  SettingDoc d;
  d.command = table.command;
  d.flag = o.flag;
  d.alias = o.alias;
  d.arg = o.arg;
  const std::string env = o.env, prefix = table.env_prefix;
  d.env = env != kOwnVariable ? env : prefix.empty() ? "" : VariableName(prefix, o.flag);
  d.fallback_env = o.fallback_env;
  d.required = o.required;
  if (o.default_text != nullptr) d.default_text = o.default_text(Draft{});
  d.help = o.help;
  d.summary = o.summary;
  return d;
}

template <typename Draft>
std::vector<SettingDoc> Describe(const OptionTable<Draft>& table) {
  std::vector<SettingDoc> out;
  for (const Option<Draft>& o : table.options) out.push_back(Describe(table, o));
  return out;
}

// Reads every setting of `table` that was given, in table order, into `draft`: the first bad
// value (or missing required one) is the error, naming its origin. Settings not given keep the
// draft's defaults.
template <typename Draft>
Status ReadOptions(const OptionTable<Draft>& table, const CommandLineValue& command_line,
                   const Environment& env, Draft& draft) {
  for (const Option<Draft>& o : table.options) {
    const SettingDoc doc = Describe(table, o);
    const Given given = Lookup(doc, command_line, env);
    if (!given.set && !doc.required.empty()) {
      return BadValue(given, "required: " + Substitute(doc.required, doc));
    }
    if (!given.set) continue;
    if (Status st = o.parse(given.text, draft); !st.ok()) return BadValue(given, st.message());
  }
  return Status::Ok();
}

// Levenshtein distance.
size_t EditDistance(const std::string& a, const std::string& b);

// The near-miss rule of the unknown-variable warning: `name` (a variable no setting has) is
// taken for a mistyped `candidate` when they differ by at most 2 edits and by at most a quarter
// of the candidate's name after "LEASEHOLD_". So LEASEHOLD_LEASE_DURATOIN is a near miss of
// LEASEHOLD_LEASE_DURATION, but LEASEHOLD_PID (1 edit from LEASEHOLD_ID, a name of 2 letters)
// and LEASEHOLD_BIN are not: a variable that is far from every setting belongs to someone else
// (a harness, a build script) and is none of leasehold's business.
bool IsNearMiss(const std::string& name, const std::string& candidate);
// The most edits a near miss may be from its setting's variable.
inline constexpr size_t kNearMissMaxEdits = 2;

// One warning for each LEASEHOLD_* variable of `env` (in any case) that no setting of `settings`
// reads but is a near miss of one (or of an alias's would-be variable) once upper-cased, naming
// the closest, sorted by name:
//   LEASEHOLD_LEASE_DURATOIN is not a leasehold variable and is ignored; did you mean
//   LEASEHOLD_LEASE_DURATION (--lease-duration)?
// A setting of another command is named with it: "(leasehold gate --stop-grace)". `own` is the
// command being run.
std::vector<std::string> UnknownVariableWarnings(const Environment& env,
                                                 const std::vector<SettingDoc>& settings,
                                                 const std::string& own);

// Help in two columns: for each setting with a help text, "  --flag ARG" padded to `column`,
// then its help (Substitute'd), whose lines (split at '\n') continue at `column`. A flag too
// wide for the column is followed by two spaces.
std::string RenderColumns(const std::vector<SettingDoc>& settings, size_t column);

}  // namespace leasehold::app
