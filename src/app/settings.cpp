#include "app/settings.h"

namespace leasehold::app {

std::vector<SettingDoc> AllSettings() {
  std::vector<SettingDoc> all;
  for (std::vector<SettingDoc> (*of)() :
       {AgentSettings, GateSettings, GateProbeSettings, ProbeSettings}) {
    for (SettingDoc& s : of()) all.push_back(std::move(s));
  }
  return all;
}

}  // namespace leasehold::app
