#include "app/options.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string_view>

#include "base/file.h"
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
