// The curl Watcher against the fake apiserver.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "kube/component_util.h"
#include "kube/watch.h"

namespace leasehold::kube {
namespace {

using leasehold::testing::FakeApiServer;
using std::chrono::milliseconds;
using std::chrono::seconds;

MonoTime In(const Clock& clock, Duration d) { return clock.MonotonicNow() + d; }

std::unique_ptr<Watcher> MustWatcher(const ClusterConfig& config, const Clock& clock) {
  auto watcher = NewCurlWatcher(config, {}, clock);
  if (!watcher.ok()) throw std::runtime_error(watcher.status().ToString());
  return std::move(watcher).value();
}

std::string Type(const std::string& line) {
  const Result<WatchEvent> e = ParseWatchEvent(line);
  return e.ok() ? e->type : e.status().ToString();
}

TEST_CASE("a watch delivers the current object, then changes, until told to stop") {
  FakeApiServer server;
  RealClock clock;
  auto watcher = MustWatcher(server.ClientConfig(), clock);
  server.Put("leases", "ns", "lock", LeaseJson("lock", "a"));
  server.Put("leases", "ns", "other", LeaseJson("other", "a"));  // filtered out by name

  std::vector<std::string> lines;
  const Status s =
      watcher->Watch(WatchRequest(LeaseRef("lock"), "", seconds(60)), In(clock, seconds(10)),
                     [&](const std::string& line) {
                       lines.push_back(line);
                       if (lines.size() == 1) {
                         // Another writer changes the lease while we watch.
                         server.Bump("leases", "ns", "other");
                         server.Bump("leases", "ns", "lock", R"({"spec":{"holderIdentity":"b"}})");
                       }
                       return lines.size() < 2;
                     });
  CHECK_MESSAGE(s.ok(), s.ToString());
  REQUIRE(lines.size() == 2);
  CHECK(Type(lines[0]) == "ADDED");
  CHECK(Type(lines[1]) == "MODIFIED");
  const Result<WatchEvent> modified = ParseWatchEvent(lines[1]);
  REQUIRE(modified.ok());
  CHECK(modified->resource_version == server.ResourceVersion("leases", "ns", "lock"));
  CHECK(modified->object.find(R"("holderIdentity":"b")") != std::string::npos);

  const auto log = server.Requests();
  REQUIRE(log.size() == 1);
  CHECK(log[0].query ==
        "watch=1&fieldSelector=metadata.name%3Dlock&timeoutSeconds=60&allowWatchBookmarks=true");
}

TEST_CASE("a watch from a resourceVersion replays later changes; a compacted one is Gone") {
  FakeApiServer server;
  RealClock clock;
  auto watcher = MustWatcher(server.ClientConfig(), clock);
  server.Put("leases", "ns", "lock", LeaseJson("lock", "a"));
  const std::string from = server.ResourceVersion("leases", "ns", "lock");
  server.Bump("leases", "ns", "lock");
  server.Delete("leases", "ns", "lock");

  std::vector<std::string> types;
  Status s = watcher->Watch(WatchRequest(LeaseRef("lock"), from, seconds(60)),
                            In(clock, seconds(10)), [&](const std::string& line) {
                              types.push_back(Type(line));
                              return types.size() < 2;
                            });
  CHECK(s.ok());
  CHECK(types == std::vector<std::string>{"MODIFIED", "DELETED"});

  server.Compact();
  Status event_status;
  s = watcher->Watch(WatchRequest(LeaseRef("lock"), from, seconds(60)), In(clock, seconds(10)),
                     [&](const std::string& line) {
                       event_status = ParseWatchEvent(line).status();
                       return true;
                     });
  CHECK(s.ok());  // the stream itself ended normally after the ERROR event
  CHECK(event_status.code() == Code::kGone);
}

TEST_CASE("a watch ends OK when the server's timeoutSeconds runs out") {
  FakeApiServer server;
  RealClock clock;
  auto watcher = MustWatcher(server.ClientConfig(), clock);
  const auto start = std::chrono::steady_clock::now();
  const Status s = watcher->Watch(WatchRequest(LeaseRef("lock"), "", seconds(1)),
                                  In(clock, seconds(10)), [](const std::string&) { return true; });
  CHECK_MESSAGE(s.ok(), s.ToString());
  CHECK(std::chrono::steady_clock::now() - start < seconds(5));
}

TEST_CASE("a watch stops at its deadline") {
  FakeApiServer server;
  RealClock clock;
  auto watcher = MustWatcher(server.ClientConfig(), clock);
  const auto start = std::chrono::steady_clock::now();
  const Status s =
      watcher->Watch(WatchRequest(LeaseRef("lock"), "", seconds(60)), In(clock, milliseconds(300)),
                     [](const std::string&) { return true; });
  const auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(s.code() == Code::kDeadlineExceeded);
  CHECK(elapsed >= milliseconds(290));
  CHECK(elapsed < seconds(3));
}

TEST_CASE("Cancel ends a quiet watch at once, and every later one") {
  FakeApiServer server;
  RealClock clock;
  auto watcher = MustWatcher(server.ClientConfig(), clock);
  server.Put("leases", "ns", "lock", LeaseJson("lock", "a"));
  std::promise<void> streaming;
  auto result = std::async(std::launch::async, [&] {
    bool first = true;
    return watcher->Watch(WatchRequest(LeaseRef("lock"), "", seconds(60)), In(clock, seconds(60)),
                          [&](const std::string&) {
                            if (first) streaming.set_value();
                            first = false;
                            return true;
                          });
  });
  streaming.get_future().wait();  // the watch is open and idle now
  const auto start = std::chrono::steady_clock::now();
  watcher->Cancel();
  REQUIRE(result.wait_for(seconds(5)) == std::future_status::ready);
  CHECK(result.get().ok());
  CHECK(std::chrono::steady_clock::now() - start < seconds(2));
  // Sticky: a later watch does not even connect.
  server.ClearRequests();
  CHECK(watcher
            ->Watch(WatchRequest(LeaseRef("lock"), "", seconds(60)), In(clock, seconds(5)),
                    [](const std::string&) { return true; })
            .ok());
  CHECK(server.Requests().empty());
}

TEST_CASE("a watch runs on its own connection and never blocks the client") {
  FakeApiServer server;
  RealClock clock;
  auto watcher = MustWatcher(server.ClientConfig(), clock);
  auto client = MustClient(server.ClientConfig(), clock);
  server.Put("leases", "ns", "lock", LeaseJson("lock", "a"));
  std::promise<void> streaming;
  auto result = std::async(std::launch::async, [&] {
    int seen = 0;
    return watcher->Watch(WatchRequest(LeaseRef("lock"), "", seconds(60)), In(clock, seconds(30)),
                          [&](const std::string&) {
                            if (++seen == 1) streaming.set_value();
                            return seen < 2;  // stop at the client's write
                          });
  });
  streaming.get_future().wait();
  // While the watch is open, the client reads and writes the lease.
  const std::string rv = server.ResourceVersion("leases", "ns", "lock");
  const Result<Response> put =
      client->Do(Request{"PUT", LeasePath("lock"), LeaseJson("lock", "b", rv), "application/json"},
                 In(clock, seconds(5)));
  CHECK(put.ok());
  REQUIRE(result.wait_for(seconds(10)) == std::future_status::ready);
  CHECK(result.get().ok());
  CHECK(server.connections() == 2);
}

TEST_CASE("watch errors: forbidden, unauthorized, bookmarks") {
  FakeApiServer server;
  RealClock clock;
  SUBCASE("forbidden") {
    auto watcher = MustWatcher(server.ClientConfig(), clock);
    server.Deny("watch", "leases");
    const Status s = watcher->Watch(WatchRequest(LeaseRef("lock"), "", seconds(60)),
                                    In(clock, seconds(5)), [](const std::string&) { return true; });
    CHECK(s.code() == Code::kForbidden);
    CHECK(s.message() ==
          "needs verb \"watch\" on leases: "
          "leases.coordination.k8s.io is forbidden: User \"system:serviceaccount:ns:sa\" cannot "
          "watch resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"ns\"");
  }
  SUBCASE("unauthorized") {
    auto watcher = MustWatcher(server.ClientConfig("wrong"), clock);
    const Status s = watcher->Watch(WatchRequest(LeaseRef("lock"), "", seconds(60)),
                                    In(clock, seconds(5)), [](const std::string&) { return true; });
    CHECK(s.code() == Code::kUnauthorized);
  }
  SUBCASE("bookmarks") {
    auto watcher = MustWatcher(server.ClientConfig(), clock);
    server.Put("leases", "ns", "lock", LeaseJson("lock", "a"));
    std::vector<std::string> types;
    const Status s = watcher->Watch(WatchRequest(LeaseRef("lock"), "", seconds(60)),
                                    In(clock, seconds(10)), [&](const std::string& line) {
                                      types.push_back(Type(line));
                                      if (types.size() == 1) server.SendBookmarks();
                                      return types.size() < 2;
                                    });
    CHECK(s.ok());
    CHECK(types == std::vector<std::string>{"ADDED", "BOOKMARK"});
  }
}

}  // namespace
}  // namespace leasehold::kube
