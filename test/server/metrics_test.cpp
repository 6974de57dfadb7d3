// /metrics: the exposition is parsed back by a small parser of the Prometheus text format
// 0.0.4, then its samples are compared with a table.
#include "server/metrics.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"

namespace leasehold::server {
namespace {

using namespace std::chrono_literals;

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Exposition {
  std::map<std::string, std::string> types;  // family → type
  std::vector<Sample> samples;
  // "name{a=\"x\",b=\"y\"}" → value, labels in the order given.
  std::map<std::string, double> values;
};

bool IsNameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

// The family a sample belongs to: histogram samples carry a suffix.
std::string FamilyOf(const std::string& name, const std::map<std::string, std::string>& types) {
  for (const char* suffix : {"_bucket", "_sum", "_count"}) {
    const std::string s = suffix;
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      const std::string base = name.substr(0, name.size() - s.size());
      if (types.count(base) && types.at(base) == "histogram") return base;
    }
  }
  return name;
}

// Fails the test on anything the format does not allow; returns what it read.
Exposition Parse(const std::string& text) {
  Exposition e;
  std::set<std::string> helped;
  const bool ends_with_newline = !text.empty() && text.back() == '\n';
  REQUIRE_MESSAGE(ends_with_newline, "must end with a newline");
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    CAPTURE(line);
    REQUIRE_FALSE(line.empty());
    if (line[0] == '#') {
      std::string kind = line.substr(2, 4);
      REQUIRE((kind == "HELP" || kind == "TYPE"));
      const size_t sp = line.find(' ', 7);
      REQUIRE(sp != std::string::npos);
      const std::string family = line.substr(7, sp - 7);
      if (kind == "TYPE") {
        const std::string type = line.substr(sp + 1);
        REQUIRE((type == "gauge" || type == "counter" || type == "histogram"));
        REQUIRE_MESSAGE(e.types.count(family) == 0, "TYPE twice for " << family);
        e.types[family] = type;
      } else {
        REQUIRE(helped.insert(family).second);
      }
      continue;
    }
    Sample s;
    size_t i = 0;
    REQUIRE(IsNameChar(line[0], true));
    while (i < line.size() && IsNameChar(line[i], i == 0)) s.name += line[i++];
    std::string key = s.name;
    if (i < line.size() && line[i] == '{') {
      key += '{';
      ++i;
      while (line[i] != '}') {
        std::string label;
        while (IsNameChar(line[i], label.empty())) label += line[i++];
        REQUIRE_FALSE(label.empty());
        REQUIRE(line.substr(i, 2) == "=\"");
        i += 2;
        std::string value;
        while (line[i] != '"') {
          if (line[i] == '\\') {
            ++i;
            REQUIRE((line[i] == '\\' || line[i] == '"' || line[i] == 'n'));
            value += line[i] == 'n' ? '\n' : line[i];
          } else {
            value += line[i];
          }
          ++i;
        }
        ++i;
        s.labels[label] = value;
        key += label + "=\"" + value + "\"";
        if (line[i] == ',') {
          key += ',';
          ++i;
        }
      }
      key += '}';
      ++i;
    }
    REQUIRE(line[i] == ' ');
    const std::string number = line.substr(i + 1);
    char* end = nullptr;
    s.value = std::strtod(number.c_str(), &end);
    REQUIRE_MESSAGE(*end == '\0', "not a number: " << number);
    const std::string family = FamilyOf(s.name, e.types);
    REQUIRE_MESSAGE(e.types.count(family), "sample before its TYPE: " << s.name);
    e.values[key] = s.value;
    e.samples.push_back(s);
  }
  return e;
}

election::Snapshot Leading(const Clock& clock) {
  election::Snapshot s;
  s.identity = "me";
  s.lock = {"leases", "ns", "my-lock"};
  s.observed = true;
  s.is_leader = true;
  s.valid_until = clock.MonotonicNow() + 10s;
  s.last_renew_at = clock.MonotonicNow() - 1500ms;
  s.slowpath_total = 2;
  s.acquired_total = 3;
  return s;
}

TEST_CASE("metrics: the exposition parses, and says what happened") {
  FakeClock clock;
  Metrics m("my-lock", "1.2.3", clock);
  m.SetWatchers([] { return 7; });
  for (Duration d : std::vector<Duration>{3ms, 3ms, 40ms, 700ms, 20s}) m.ObserveRenew(d);
  m.ObserveRequest("PUT", 200);
  m.ObserveRequest("PUT", 200);
  m.ObserveRequest("GET", 404);
  m.ObserveRequest("PUT", 409);
  m.ObserveRequest("PUT", 0);
  m.ObserveRequest("WATCH", 200);

  const Exposition e = Parse(m.Render(Leading(clock)));
  const std::map<std::string, double> want = {
      {"leader_election_master_status{name=\"my-lock\"}", 1},
      {"leader_election_slowpath_total{name=\"my-lock\"}", 2},
      {"leasehold_is_leader", 1},
      {"leasehold_leader_transitions_total", 3},
      {"leasehold_last_renew_age_seconds", 1.5},
      {"leasehold_renew_duration_seconds_bucket{le=\"0.005\"}", 2},
      {"leasehold_renew_duration_seconds_bucket{le=\"0.01\"}", 2},
      {"leasehold_renew_duration_seconds_bucket{le=\"0.025\"}", 2},
      {"leasehold_renew_duration_seconds_bucket{le=\"0.05\"}", 3},
      {"leasehold_renew_duration_seconds_bucket{le=\"0.1\"}", 3},
      {"leasehold_renew_duration_seconds_bucket{le=\"0.25\"}", 3},
      {"leasehold_renew_duration_seconds_bucket{le=\"0.5\"}", 3},
      {"leasehold_renew_duration_seconds_bucket{le=\"1\"}", 4},
      {"leasehold_renew_duration_seconds_bucket{le=\"2.5\"}", 4},
      {"leasehold_renew_duration_seconds_bucket{le=\"5\"}", 4},
      {"leasehold_renew_duration_seconds_bucket{le=\"10\"}", 4},
      {"leasehold_renew_duration_seconds_bucket{le=\"+Inf\"}", 5},
      {"leasehold_renew_duration_seconds_sum", 20.746},
      {"leasehold_renew_duration_seconds_count", 5},
      {"leasehold_api_requests_total{verb=\"GET\",code=\"404\"}", 1},
      {"leasehold_api_requests_total{verb=\"PUT\",code=\"200\"}", 2},
      {"leasehold_api_requests_total{verb=\"PUT\",code=\"409\"}", 1},
      {"leasehold_api_requests_total{verb=\"PUT\",code=\"error\"}", 1},
      {"leasehold_api_requests_total{verb=\"WATCH\",code=\"200\"}", 1},
      {"leasehold_watchers", 7},
      {"leasehold_build_info{version=\"1.2.3\"}", 1},
  };
  CHECK(e.values.size() == want.size());
  for (const auto& [key, value] : want) {
    CAPTURE(key);
    REQUIRE(e.values.count(key) == 1);
    CHECK(e.values.at(key) == doctest::Approx(value).epsilon(1e-9));
  }
  const std::map<std::string, std::string> types = {
      {"leader_election_master_status", "gauge"},
      {"leader_election_slowpath_total", "counter"},
      {"leasehold_is_leader", "gauge"},
      {"leasehold_leader_transitions_total", "counter"},
      {"leasehold_last_renew_age_seconds", "gauge"},
      {"leasehold_renew_duration_seconds", "histogram"},
      {"leasehold_api_requests_total", "counter"},
      {"leasehold_watchers", "gauge"},
      {"leasehold_build_info", "gauge"},
  };
  CHECK(e.types == types);
}

TEST_CASE("metrics: a follower that never wrote; odd label values are escaped") {
  FakeClock clock;
  Metrics m("a\"b\\c\nd", "v", clock);
  election::Snapshot s;
  const std::string text = m.Render(s);
  const Exposition e = Parse(text);
  CHECK(text.find(R"(leader_election_master_status{name="a\"b\\c\nd"} 0)") != std::string::npos);
  CHECK(e.values.count("leasehold_last_renew_age_seconds") == 0);  // absent, not 0
  CHECK(e.values.at("leasehold_is_leader") == 0);
  CHECK(e.values.at("leasehold_renew_duration_seconds_count") == 0);
  CHECK(e.values.at("leasehold_watchers") == 0);
  CHECK(e.samples[0].labels.at("name") == "a\"b\\c\nd");
}

TEST_CASE("metrics: the shortest round-tripping number, in plain notation") {
  FakeClock clock;
  Metrics m("l", "v", clock);
  m.ObserveRenew(39581525ns);
  const std::string text = m.Render({});
  CHECK(text.find("leasehold_renew_duration_seconds_sum 0.039581525\n") != std::string::npos);
  CHECK(text.find("{le=\"10\"}") != std::string::npos);
  CHECK(text.find("{le=\"0.005\"}") != std::string::npos);
  CHECK(text.find("e+") == std::string::npos);
}

}  // namespace
}  // namespace leasehold::server
