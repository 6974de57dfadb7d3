// An app::Environment from maps, for the flag parsers' tests: variables, files, and a fixed host
// name and random suffix. Names not in the maps are absent (a file read is NotFound).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "app/options.h"

namespace leasehold::app::testing {

inline Environment FakeEnvironment(std::map<std::string, std::string> vars,
                                   std::map<std::string, std::string> files = {}) {
  Environment env;
  env.getenv = [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
  env.names = [vars] {
    std::vector<std::string> out;
    for (const auto& [name, value] : vars) out.push_back(name);
    return out;
  };
  env.read_file = [files](const std::string& path) -> Result<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return Status(Code::kNotFound, "cannot read " + path);
    return it->second;
  };
  env.hostname = [] { return std::string("node-host"); };
  env.random_hex8 = [] { return std::string("0badcafe"); };
  return env;
}

}  // namespace leasehold::app::testing
