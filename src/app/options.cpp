#include "app/options.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>

#include "base/file.h"
#include "base/messages.h"
#include "base/text.h"

namespace leasehold::app {

std::string VariableName(const std::string& prefix, const std::string& flag) {
  std::string out = prefix;
  for (const char c : flag) {
    out += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

Given Lookup(const SettingDoc& setting, const CommandLineValue& command_line,
             const Environment& env) {
  Given g;
  g.origin = "--" + setting.flag;
  if (std::optional<std::string> v = command_line(setting.flag)) {
    g.set = true;
    g.text = *v;
    return g;
  }
  for (const std::string& var : {setting.env, setting.fallback_env}) {
    if (var.empty()) continue;
    if (auto e = env.getenv(var); e && !e->empty()) {
      g.set = true;
      g.text = *e;
      g.origin = var + " (--" + setting.flag + ")";
      return g;
    }
  }
  return g;
}

Status BadValue(const Given& given, const std::string& message) {
  return Status(Code::kBadConfig, given.origin + ": " + message);
}

namespace {

// `message` (base/messages.h) with each "{}" replaced by the next of `parts`.
std::string Fill(std::string message, std::initializer_list<std::string> parts) {
  size_t at = 0;
  for (const std::string& part : parts) {
    at = message.find("{}", at);
    if (at == std::string::npos) break;
    message.replace(at, 2, part);
    at += part.size();
  }
  return message;
}

}  // namespace

Status UsageError(const std::string& command, const std::string& what) {
  return Status(Code::kBadConfig, what + " (see " + command + " --help)");
}

std::optional<int> ExitBeforeRunning(const std::string& command, const Status& parsed,
                                     const std::string& output) {
  if (!parsed.ok()) {
    std::fprintf(stderr, "%s: %s\n", command.c_str(), EscapeForLog(parsed.message()).c_str());
    return 2;
  }
  if (output.empty()) return std::nullopt;
  std::fputs(output.c_str(), stdout);
  return 0;
}

size_t Arguments::Count(const std::string& flag) const {
  for (const auto& [name, given] : values) {
    if (name == flag) return given.size();
  }
  return 0;
}

std::optional<std::string> Arguments::Last(const std::string& flag) const {
  for (const auto& [name, given] : values) {
    if (name == flag) return given.back();
  }
  return std::nullopt;
}

CommandLineValue Arguments::LastValues() const {
  return [this](const std::string& flag) { return Last(flag); };
}

Result<Arguments> ScanArguments(const std::vector<SettingDoc>& settings,
                                const std::vector<std::string>& args, const ScanRules& rules) {
  Arguments out;
  const auto add = [&out](const std::string& flag, std::string value) {
    for (auto& [name, given] : out.values) {
      if (name == flag) {
        given.push_back(std::move(value));
        return;
      }
    }
    out.values.push_back({flag, {std::move(value)}});
  };
  size_t i = 0;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      ++i;
      break;
    }
    if (a == "-h" || a == "--help") {
      out.help = true;
      return out;
    }
    if (a.rfind("--", 0) != 0) {
      if (rules.takes_command) break;  // CMD starts here, without "--"
      return UsageError(rules.command, Fill(kUnexpectedArgument, {Quote(a), rules.command}));
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const SettingDoc* setting = nullptr;
    for (const SettingDoc& s : settings) {
      if (name == s.flag || (!s.alias.empty() && name == s.alias)) setting = &s;
    }
    const bool own_switch =
        std::find(rules.switches.begin(), rules.switches.end(), name) != rules.switches.end();
    if (setting == nullptr && !own_switch) {
      return UsageError(rules.command, Fill(kUnknownFlag, {Quote("--" + name)}));
    }
    const std::string flag = setting != nullptr ? setting->flag : name;
    if (setting == nullptr || setting->arg.empty()) {
      if (eq != std::string::npos) {
        return UsageError(rules.command, Fill(kSwitchTakesNoValue, {"--" + name}));
      }
      add(flag, "");
    } else if (eq != std::string::npos) {
      add(flag, a.substr(eq + 1));
    } else if (i + 1 < args.size()) {
      add(flag, args[++i]);
    } else {
      return UsageError(rules.command, Fill(kFlagNeedsValue, {"--" + name}));
    }
  }
  const std::vector<std::string> rest(args.begin() + static_cast<long>(i), args.end());
  if (!rules.takes_command) {
    if (!rest.empty()) {
      return UsageError(rules.command, Fill(kUnexpectedArgument, {Quote(rest[0]), rules.command}));
    }
  } else if (rest.empty()) {
    return UsageError(rules.command, Fill(kNoCommand, {rules.command}));
  }
  out.command = rest;
  return out;
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

bool IsNearMiss(const std::string& name, const std::string& candidate) {
  constexpr size_t kMaxEdits = kNearMissMaxEdits;
  const std::string_view prefix(kVariablePrefix);
  const size_t length =
      candidate.rfind(prefix.data(), 0) == 0 ? candidate.size() - prefix.size() : candidate.size();
  const size_t d = EditDistance(name, candidate);
  return d <= kMaxEdits && 4 * d <= length;
}

std::vector<std::string> UnknownVariableWarnings(const Environment& env,
                                                 const std::vector<SettingDoc>& settings,
                                                 const std::string& own) {
  std::vector<std::string> warnings;
  if (!env.names) return warnings;
  // (candidate, the setting it names): each variable, and the one each alias would have (it has
  // none: the warning names the real one).
  std::vector<std::pair<std::string, const SettingDoc*>> known;
  for (const SettingDoc& s : settings) {
    if (s.env.empty()) continue;
    known.emplace_back(s.env, &s);
    if (!s.alias.empty() && s.env == VariableName(kVariablePrefix, s.flag)) {
      known.emplace_back(VariableName(kVariablePrefix, s.alias), &s);
    }
  }
  std::vector<std::string> names = env.names();
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string& name : names) {
    // Variables are case-sensitive, and leasehold reads upper case only: leasehold_lease_duration
    // is a near miss too.
    std::string upper = name;
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (upper.rfind(kVariablePrefix, 0) != 0) continue;
    bool read = false;
    for (const SettingDoc& s : settings) read = read || name == s.env || name == s.fallback_env;
    if (read) continue;
    const std::pair<std::string, const SettingDoc*>* best = nullptr;
    size_t best_distance = 0;
    for (const auto& k : known) {
      // Cost bound: a variable's name is input of any length (a ConfigMap's keys through
      // envFrom, up to the kernel's 128 KiB a string), and the distance costs its length times
      // the candidate's. It is at least the difference of the lengths, so a name longer or
      // shorter than the candidate by more than a near miss's edits is none, without computing it.
      const size_t longer = std::max(upper.size(), k.first.size());
      const size_t shorter = std::min(upper.size(), k.first.size());
      if (longer - shorter > kNearMissMaxEdits) continue;
      const size_t d = EditDistance(upper, k.first);
      if (best == nullptr || d < best_distance) {
        best = &k;
        best_distance = d;
      }
    }
    if (best == nullptr || !IsNearMiss(upper, best->first)) continue;
    const SettingDoc& s = *best->second;
    const std::string flag = (s.command == own ? "" : s.command + " ") + "--" + s.flag;
    warnings.push_back(OneLine(name) +
                       " is not a leasehold variable and is ignored; did you mean " + s.env + " (" +
                       flag + ")?");
  }
  return warnings;
}

std::string Substitute(const std::string& text, const SettingDoc& setting) {
  std::string out = text;
  for (const auto& [key, value] :
       {std::pair<const char*, const std::string*>{"{default}", &setting.default_text},
        {"{env}", &setting.env},
        {"{fallback}", &setting.fallback_env}}) {
    const std::string k = key;
    for (size_t at = out.find(k); at != std::string::npos; at = out.find(k, at + value->size())) {
      out.replace(at, k.size(), *value);
    }
  }
  return out;
}

std::string RenderColumns(const std::vector<SettingDoc>& settings, size_t column) {
  std::string out;
  for (const SettingDoc& s : settings) {
    if (s.help.empty()) continue;
    std::string head = "  --" + s.flag + (s.arg.empty() ? "" : " " + s.arg);
    head += head.size() + 2 <= column ? std::string(column - head.size(), ' ') : "  ";
    out += head;
    const std::string help = Substitute(s.help, s);
    size_t start = 0;
    for (size_t nl = help.find('\n');; nl = help.find('\n', start)) {
      if (start > 0) out.append(column, ' ');
      out += help.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
      out += '\n';
      if (nl == std::string::npos) break;
      start = nl + 1;
    }
  }
  return out;
}

Environment RealEnvironment() {
  Environment env;
  env.getenv = [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (v == nullptr) return std::nullopt;
    return std::string(v);
  };
  env.names = [] {
    std::vector<std::string> out;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      const std::string_view kv(*e);
      out.emplace_back(kv.substr(0, kv.find('=')));
    }
    return out;
  };
  env.read_file = [](const std::string& path) {
    return ReadRegularFile(path, kMaxNamespaceFileBytes);
  };
  env.hostname = [] {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return std::string();
    return std::string(buf);
  };
  env.random_hex8 = [] {
    std::random_device rd;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
    return std::string(buf);
  };
  return env;
}

}  // namespace leasehold::app
