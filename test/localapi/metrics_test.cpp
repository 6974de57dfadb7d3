// /metrics: the exposition is parsed back by a small parser of the Prometheus text format
// 0.0.4, then its samples are compared with a table.
#include "localapi/metrics.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"

namespace leasehold::localapi {
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

constexpr const char* kL = "lock_namespace=\"ns\",lock_name=\"my-lock\"";

std::string K(const std::string& name, const std::string& extra = "") {
  return name + "{" + kL + (extra.empty() ? "" : "," + extra) + "}";
}

MetricsLabels Labels() {
  MetricsLabels l;
  l.lock_namespace = "ns";
  l.lock_name = "my-lock";
  l.lock_type = "leases";
  l.version = "1.2.3";
  l.timings = Timings{15s, 10s, 2s, 5500ms};
  return l;
}

int64_t Ns(MonoTime t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// This replica leads until now + 10s; it last renewed 1.5 s ago.
void Leading(election::Gauges& g, const Clock& clock) {
  g.observed = true;
  g.term = 4;
  g.held = true;
  g.holder_is_me = true;
  g.holder_hash = 12345;
  g.leader_until_ns = Ns(clock.MonotonicNow() + 10s);
  g.last_renew_ns = Ns(clock.MonotonicNow() - 1500ms);
  g.slowpath_total = 2;
  g.acquired_total = 3;
  g.renew_failures_total = 5;
  g.promise_overtaken_total = 6;
}

double Unix(SysTime t) { return std::chrono::duration<double>(t.time_since_epoch()).count(); }

std::set<std::string> Keys(const Exposition& e) {
  std::set<std::string> keys;
  for (const auto& [key, value] : e.values) keys.insert(key);
  return keys;
}

TEST_CASE("metrics: the exposition parses, and says what happened") {
  FakeClock clock;
  Metrics m(clock);
  m.SetLabels(Labels());
  m.SetWatchers([] { return 7; });
  for (Duration d : std::vector<Duration>{3ms, 3ms, 40ms, 700ms, 20s}) m.ObserveRenew(d);
  m.ObserveRequest("PUT", 200);
  m.ObserveRequest("PUT", 200);
  m.ObserveRequest("GET", 404);
  m.ObserveRequest("PUT", 409);
  m.ObserveRequest("PUT", 0);
  m.ObserveRequest("WATCH", 200);
  m.ObserveRequest("PUT", 418);     // not listed: "other"
  m.ObserveRequest("DELETE", 200);  // not listed: "OTHER"
  m.ObserveWatchRestart("expired");
  m.ObserveWatchRestart("expired");
  m.ObserveWatchRestart("bogus");  // not a reason: not counted, no new series
  election::Gauges g;
  Leading(g, clock);

  const Exposition e = Parse(m.Render(g));
  std::map<std::string, double> want = {
      {"leader_election_master_status{name=\"my-lock\"}", 1},
      {"leader_election_slowpath_total{name=\"my-lock\"}", 2},
      {"leasehold_lock_info{" + std::string(kL) + ",lock_type=\"leases\"}", 1},
      {K("leasehold_is_leader"), 1},
      {K("leasehold_observed"), 1},
      {K("leasehold_ready"), 1},
      {K("leasehold_lock_held"), 1},
      {K("leasehold_holder_is_me"), 1},
      {K("leasehold_holder_hash"), 12345},
      {K("leasehold_term"), 4},
      {K("leasehold_term_reliable"), 1},
      {K("leasehold_leader_transitions_total"), 3},
      {K("leasehold_renew_failures_total"), 5},
      {K("leasehold_promise_overtaken_total"), 6},
      {K("leasehold_last_renew_timestamp_seconds"), Unix(clock.SystemNow() - 1500ms)},
      {K("leasehold_promise_end_timestamp_seconds"), Unix(clock.SystemNow() + 10s)},
      {K("leasehold_lease_duration_seconds"), 15},
      {K("leasehold_renew_deadline_seconds"), 10},
      {K("leasehold_retry_period_seconds"), 2},
      {K("leasehold_renew_interval_seconds"), 5.5},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"0.005\""), 2},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"0.01\""), 2},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"0.025\""), 2},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"0.05\""), 3},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"0.1\""), 3},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"0.25\""), 3},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"0.5\""), 3},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"1\""), 4},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"2.5\""), 4},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"5\""), 4},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"10\""), 4},
      {K("leasehold_renew_duration_seconds_bucket", "le=\"+Inf\""), 5},
      {K("leasehold_renew_duration_seconds_sum"), 20.746},
      {K("leasehold_renew_duration_seconds_count"), 5},
      {K("leasehold_watchers"), 7},
      {K("leasehold_watch_restarts_total", "reason=\"expired\""), 2},
      {K("leasehold_watch_restarts_total", "reason=\"lock_type\""), 0},
      {"leasehold_build_info{version=\"1.2.3\"}", 1},
  };
  for (const char* verb : Metrics::kVerbs) {
    for (const char* code : Metrics::kCodes) {
      want[K("leasehold_api_requests_total",
             std::string("verb=\"") + verb + "\",code=\"" + code + "\"")] = 0;
    }
  }
  auto req = [](const char* verb, const char* code) {
    return K("leasehold_api_requests_total",
             std::string("verb=\"") + verb + "\",code=\"" + code + "\"");
  };
  want[req("GET", "404")] = 1;
  want[req("PUT", "200")] = 2;
  want[req("PUT", "409")] = 1;
  want[req("PUT", "error")] = 1;
  want[req("PUT", "other")] = 1;
  want[req("WATCH", "200")] = 1;
  want[req("OTHER", "200")] = 1;
  CHECK(e.values.size() == want.size());
  for (const auto& [key, value] : want) {
    CAPTURE(key);
    REQUIRE(e.values.count(key) == 1);
    CHECK(e.values.at(key) == doctest::Approx(value).epsilon(1e-12));
  }
  CHECK(e.types.at("leasehold_promise_overtaken_total") == "counter");
  CHECK(e.types.at("leasehold_renew_failures_total") == "counter");
  CHECK(e.types.at("leasehold_renew_duration_seconds") == "histogram");
  CHECK(e.types.at("leasehold_promise_end_timestamp_seconds") == "gauge");
  for (const Sample& s : e.samples) {
    CAPTURE(s.name);
    CHECK(s.labels.count("namespace") == 0);  // the target's own label
  }
}

TEST_CASE("metrics: leadership is judged at the scrape's instant; timestamps are 0 for none") {
  FakeClock clock;
  Metrics m(clock);
  m.SetLabels(Labels());
  election::Gauges g;
  Leading(g, clock);
  clock.Advance(9999ms);
  Exposition e = Parse(m.Render(g));
  CHECK(e.values.at(K("leasehold_is_leader")) == 1);
  clock.Advance(1ms);  // the claim ends now
  e = Parse(m.Render(g));
  CHECK(e.values.at(K("leasehold_is_leader")) == 0);
  CHECK(e.values.at("leader_election_master_status{name=\"my-lock\"}") == 0);
  CHECK(e.values.at(K("leasehold_promise_end_timestamp_seconds")) == 0);
  election::Gauges fresh;
  e = Parse(m.Render(fresh));
  CHECK(e.values.at(K("leasehold_last_renew_timestamp_seconds")) == 0);
  CHECK(e.values.at(K("leasehold_observed")) == 0);
  CHECK(e.values.at(K("leasehold_ready")) == 0);
  fresh.observed = true;
  fresh.last_error = static_cast<int>(Code::kForbidden);
  CHECK(Parse(m.Render(fresh)).values.at(K("leasehold_ready")) == 0);
  fresh.last_error = static_cast<int>(Code::kUnavailable);  // an outage keeps it ready
  CHECK(Parse(m.Render(fresh)).values.at(K("leasehold_ready")) == 1);
}

TEST_CASE("metrics: every series from the first scrape, and never more (restarts, identities)") {
  FakeClock clock;
  // The first scrape of a replica that has done nothing.
  Metrics first(clock);
  first.SetLabels(Labels());
  const std::set<std::string> at_start = Keys(Parse(first.Render(election::Gauges{})));
  // After everything that can happen: leading, holder changes (any identity, any hash), every
  // request outcome, renews of every latency.
  election::Gauges g;
  for (int i = 0; i < 50; ++i) {
    Leading(g, clock);
    g.holder_hash = election::HolderHash("pod-" + std::to_string(i));
    g.term = i;
    first.ObserveRequest(i % 2 ? "GET" : "VERB" + std::to_string(i), 100 + i * 10);
    first.ObserveRequest("PUT", 0);
    first.ObserveRenew(std::chrono::milliseconds(i * 300));
    first.ObserveWatchRestart(i % 2 ? "expired" : "lock_type");
    clock.Advance(7s);
  }
  CHECK(Keys(Parse(first.Render(g))) == at_start);
  // A restart (a new process, a new identity): the same series.
  Metrics restarted(clock);
  restarted.SetLabels(Labels());
  CHECK(Keys(Parse(restarted.Render(g))) == at_start);
  CHECK(at_start.size() == 22 + 14 + Metrics::kVerbs.size() * Metrics::kCodes.size() +
                               Metrics::kWatchRestartReasons.size());
}

TEST_CASE("metrics: odd label values are escaped") {
  FakeClock clock;
  Metrics m(clock);
  MetricsLabels l = Labels();
  l.lock_name = "a\"b\\c\nd";
  m.SetLabels(l);
  const std::string text = m.Render(election::Gauges{});
  const Exposition e = Parse(text);
  CHECK(text.find(R"(leader_election_master_status{name="a\"b\\c\nd"} 0)") != std::string::npos);
  CHECK(e.samples[0].labels.at("name") == "a\"b\\c\nd");
}

TEST_CASE("metrics: the shortest round-tripping number, in plain notation") {
  FakeClock clock;
  Metrics m(clock);
  m.SetLabels(Labels());
  m.ObserveRenew(39581525ns);
  const std::string text = m.Render({});
  CHECK(text.find(K("leasehold_renew_duration_seconds_sum") + " 0.039581525\n") !=
        std::string::npos);
  CHECK(text.find("le=\"10\"}") != std::string::npos);
  CHECK(text.find("le=\"0.005\"}") != std::string::npos);
  CHECK(text.find("e+") == std::string::npos);
}

}  // namespace
}  // namespace leasehold::localapi
