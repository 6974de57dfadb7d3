// Whole agents (real libcurl client, real locks, real elector loop, lock watch) against the
// in-process fake API server over TLS. Real time passes here, so timings are short and every
// wait is a bounded poll for a condition, never a fixed sleep standing in for the algorithm.
#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/rfc3339.h"
#include "cluster/lock_watcher.h"
#include "election/elector.h"
#include "election/observer.h"
#include "fakes/fake_apiserver.h"
#include "fakes/log_capture.h"
#include "kube/curl_api_client.h"
#include "kube/watch.h"
#include "locks/codec.h"
#include "locks/factory.h"

namespace leasehold {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;

// spdlog creates its registry on first use, inside an uninstrumented shared library whose
// static-init guard TSan cannot see; create it before any agent thread logs, as app::Main does.
const auto kLoggerReady = spdlog::default_logger();

// Polls `pred` every 5 ms until it holds or `timeout` passes; returns whether it held.
bool WaitFor(const std::function<bool()>& pred, Duration timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

std::string LeaseJson(const std::string& holder, int transitions) {
  return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"lock",)"
         R"("namespace":"ns"},"spec":{"holderIdentity":")" +
         holder +
         R"(","leaseDurationSeconds":4,"acquireTime":"2026-01-02T03:04:05.000000Z",)"
         R"("renewTime":"2026-01-02T03:04:05.000000Z","leaseTransitions":)" +
         std::to_string(transitions) + "}}";
}

// The Lease ns/lock that every agent of these tests contends for or observes.
std::unique_ptr<election::Lock> LeaseLock(kube::ApiClient& client, const Clock& clock,
                                          const std::string& identity) {
  locks::LockOptions lo;
  lo.type = election::LockType::kLeases;
  lo.name_space = "ns";
  lo.name = "lock";
  lo.identity = identity;
  return std::move(locks::NewLock(lo, client, clock)).value();
}

// One agent: its own client, lock, elector on a thread, and optionally a lock watch.
class Agent {
 public:
  Agent(FakeApiServer& server, const std::string& identity, Timings timings,
        election::ReleaseMode mode, bool watch, Random01 random = MakeRandom01(),
        Duration request_timeout = Duration::zero(),
        cluster::LockWatcher::RestartObserver on_restart = {},
        election::PreferredHolderRule rule = election::PreferredHolderRule::kKeep)
      : config_(*election::ElectionConfig::Create(identity, timings, mode, 30s)) {
    config_.set_preferred_holder_rule(rule);
    kube::ClientOptions co;
    co.request_timeout = request_timeout > Duration::zero()
                             ? request_timeout
                             : std::max<Duration>(timings.renew_deadline / 2, 1s);
    client_ = std::move(kube::NewCurlApiClient(server.ClientConfig(), co, clock_)).value();
    lock_ = LeaseLock(*client_, clock_, identity);
    elector_ = std::make_unique<election::Elector>(config_, *lock_, clock_, std::move(random));
    if (watch) {
      watcher_ = std::move(kube::NewCurlWatcher(server.ClientConfig(), co, clock_)).value();
      lock_watcher_ = std::make_unique<cluster::LockWatcher>(
          *watcher_, *elector_, *lock_, clock_, timings.retry_period, std::move(on_restart));
      watch_thread_ = std::thread([this] { lock_watcher_->Run(); });
    }
    thread_ = std::thread([this] { elector_->Run(); });
  }
  ~Agent() { Stop(); }

  // Stops the loop; with ReleaseMode::kOff this is a crash as far as the lock is concerned.
  void Stop() {
    if (lock_watcher_) lock_watcher_->Stop();
    if (watch_thread_.joinable()) watch_thread_.join();
    elector_->Stop();
    elector_->AcknowledgeRelease();
    if (thread_.joinable()) thread_.join();
  }
  bool IsLeader() const { return elector_->Take().is_leader; }
  election::Snapshot Take() const { return elector_->Take(); }

 private:
  RealClock clock_;
  election::ElectionConfig config_;
  std::unique_ptr<kube::ApiClient> client_;
  std::unique_ptr<election::Lock> lock_;
  std::unique_ptr<election::Elector> elector_;
  std::unique_ptr<kube::Watcher> watcher_;
  std::unique_ptr<cluster::LockWatcher> lock_watcher_;
  std::thread thread_, watch_thread_;
};

constexpr const char* kLeasePath = "/apis/coordination.k8s.io/v1/namespaces/ns/leases/lock";

// Waits until a watching agent has completed its own first attempt (a GET of the lock) and its
// watch is open. The watch's first event may reach the elector before its own GET does, and the
// server counts the GET before the elector has its answer (CI saw 0 GETs then 1; TSan saw the
// attempt complete late): a test that counts GETs or attempts must wait for both.
bool SettledOnWatch(const FakeApiServer& server, const Agent& agent) {
  return WaitFor(
      [&] {
        const election::Snapshot s = agent.Take();
        return s.observed && s.last_attempt_at.has_value() && server.watches() >= 1 &&
               server.CountRequests("GET", kLeasePath) >= 1;
      },
      3s);
}

// One line an agent, for a failure message: what each believed when a wait ran out.
std::string Describe(const std::vector<std::unique_ptr<Agent>>& agents) {
  std::string out;
  const MonoTime now = RealClock().MonotonicNow();
  for (const auto& a : agents) {
    const election::Snapshot s = a->Take();
    const auto ago = [&](const std::optional<MonoTime>& t) {
      return t ? std::to_string(
                     std::chrono::duration_cast<std::chrono::milliseconds>(now - *t).count()) +
                     "ms ago"
               : std::string("never");
    };
    out += "\n  " + s.identity + ": phase " + election::PhaseName(s.phase) +
           (s.is_leader ? ", leads" : "") + ", sees holder '" + s.record.holder_identity +
           "' preferred '" + s.record.preferred_holder + "' term " +
           std::to_string(s.record.leader_transitions) + ", last attempt " +
           ago(s.last_attempt_at) + " (" + s.last_error.ToString() + "), acquired " +
           std::to_string(s.acquired_total);
  }
  return out;
}

// Samples every agent every 2 ms from its own thread and counts instants with two leaders.
class OverlapSampler {
 public:
  explicit OverlapSampler(std::vector<Agent*> agents) : agents_(std::move(agents)) {
    thread_ = std::thread([this] {
      while (!stop_) {
        int leaders = 0;
        {
          std::lock_guard<std::mutex> l(mu_);
          for (Agent* a : agents_) {
            if (a != nullptr && a->IsLeader()) ++leaders;
          }
        }
        if (leaders > 1) ++overlaps_;
        std::this_thread::sleep_for(2ms);
      }
    });
  }
  ~OverlapSampler() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  void Remove(Agent* a) {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& p : agents_) {
      if (p == a) p = nullptr;
    }
  }
  int overlaps() const { return overlaps_; }

 private:
  std::mutex mu_;
  std::vector<Agent*> agents_;
  std::atomic<bool> stop_{false};
  std::atomic<int> overlaps_{0};
  std::thread thread_;
};

const Timings kFast{2s, 1s, 300ms};

TEST_CASE("three agents elect exactly one leader; a new one takes over after the leader dies") {
  FakeApiServer server;
  std::vector<std::unique_ptr<Agent>> agents;
  for (const char* id : {"a", "b", "c"}) {
    agents.push_back(
        std::make_unique<Agent>(server, id, kFast, election::ReleaseMode::kOff, false));
  }
  // The sampler reads agents while they run; it is stopped before any of them goes away.
  OverlapSampler sampler({agents[0].get(), agents[1].get(), agents[2].get()});
  auto leaders = [&] {
    std::vector<Agent*> out;
    for (auto& a : agents) {
      if (a && a->IsLeader()) out.push_back(a.get());
    }
    return out;
  };
  REQUIRE(WaitFor([&] { return leaders().size() == 1; }, 5s));
  Agent* first = leaders()[0];
  const int64_t term = first->Take().record.leader_transitions;
  // Every agent sees the same holder.
  REQUIRE(WaitFor(
      [&] {
        for (auto& a : agents) {
          if (a->Take().record.holder_identity != first->Take().identity) return false;
        }
        return true;
      },
      3s));

  const auto killed_at = std::chrono::steady_clock::now();
  sampler.Remove(first);
  first->Stop();  // ReleaseMode::kOff: the lock is left to expire, as after SIGKILL
  CHECK_FALSE(first->IsLeader());
  REQUIRE(WaitFor(
      [&] {
        auto l = leaders();
        return l.size() == 1 && l[0] != first;
      },
      2s + 1320ms + 2s));  // lease-duration + 2 x 2.2 x retry-period + slack
  const auto took = std::chrono::steady_clock::now() - killed_at;
  Agent* second = leaders()[0];
  CHECK(second->Take().record.leader_transitions == term + 1);
  CHECK(took >= 1s);  // not before the lease could have expired (2s after the last renew)
  sampler.Stop();
  CHECK(sampler.overlaps() == 0);
}

// Coordinated leader election (elector.cpp, "Coordinated leader election"): what the
// coordinated-election controller writes into the Lease survives the leader's renewals, on the
// wire; with --preferred-holder yield the leader's term ends and the follower it names takes
// over, without two "yes" at once and before the third agent could.
TEST_CASE("coordinated election: renewals keep the controller's fields; yield hands over") {
  using election::PreferredHolderRule;
  for (const PreferredHolderRule rule : {PreferredHolderRule::kKeep, PreferredHolderRule::kYield}) {
    const std::string rule_name = election::PreferredHolderRuleName(rule);
    CAPTURE(rule_name);
    FakeApiServer server;
    std::vector<std::unique_ptr<Agent>> agents;
    for (const char* id : {"a", "b", "c"}) {
      agents.push_back(std::make_unique<Agent>(server, id, kFast, election::ReleaseMode::kOff,
                                               /*watch=*/true, MakeRandom01(), Duration::zero(),
                                               cluster::LockWatcher::RestartObserver{}, rule));
    }
    OverlapSampler sampler({agents[0].get(), agents[1].get(), agents[2].get()});
    auto leader = [&]() -> Agent* {
      for (auto& a : agents) {
        if (a->IsLeader()) return a.get();
      }
      return nullptr;
    };
    REQUIRE(WaitFor([&] { return leader() != nullptr; }, 5s));
    Agent* first = leader();
    Agent* preferred = first == agents[0].get() ? agents[1].get() : agents[0].get();
    const std::string preferred_id = preferred->Take().identity;
    const int64_t term = first->Take().record.leader_transitions;
    server.ClearRequests();
    // As the controller marks the end of a term.
    server.Bump(
        "leases", "ns", "lock",
        R"({"spec":{"strategy":"example.com/test","preferredHolder":")" + preferred_id + R"("}})");
    const auto stored = [&] {
      return locks::DecodeLeaseObject(server.Get("leases", "ns", "lock").value()).value();
    };
    if (rule == PreferredHolderRule::kKeep) {
      // The fast-path PUT in flight may still lack them (it fails: the version moved on); from
      // the first that carries them, every PUT does, three of them at least.
      const std::string fields =
          R"("strategy":"example.com/test","preferredHolder":")" + preferred_id + R"(")";
      const auto carrying = [&] {
        size_t n = 0;
        bool seen = false;
        for (const testing::RecordedRequest& r : server.Requests()) {
          if (r.method != "PUT") continue;
          const bool has = r.body.find(fields) != std::string::npos;
          CHECK((has || !seen));
          seen = seen || has;
          n += has ? 1 : 0;
        }
        return n;
      };
      REQUIRE(WaitFor([&] { return carrying() >= 3; }, 5s));
      const election::LeaderElectionRecord now = stored();
      CHECK(now.holder_identity == first->Take().identity);
      CHECK(now.strategy == "example.com/test");
      CHECK(now.preferred_holder == preferred_id);
      CHECK(first->IsLeader());
    } else {
      // Who takes over is the point, not how fast: the preferred one may take the lock from
      // lease-duration after it saw the mark, the third agent only one lease-duration later. So
      // wait for any new leader, with room for a loaded (TSan) run, then ask which it is.
      const auto new_leader = [&]() -> Agent* {
        Agent* now_leading = leader();
        return now_leading == first ? nullptr : now_leading;
      };
      INFO("agents when it failed: " << Describe(agents));
      REQUIRE(WaitFor([&] { return new_leader() != nullptr; }, 2s + 2s + 10s));
      REQUIRE(new_leader() == preferred);
      const election::LeaderElectionRecord now = stored();
      CHECK(now.holder_identity == preferred_id);
      CHECK(now.leader_transitions == term + 1);
      CHECK(now.strategy == "example.com/test");
      CHECK(now.preferred_holder.empty());
      CHECK_FALSE(first->IsLeader());
      CHECK(first->Take().renew_failures_total == 0);
      for (auto& a : agents) {
        if (a.get() != first && a.get() != preferred) CHECK(a->Take().acquired_total == 0);
      }
    }
    sampler.Stop();
    CHECK(sampler.overlaps() == 0);
  }
}

TEST_CASE("a watching follower takes a released lease well within retry-period") {
  FakeApiServer server;
  server.Put("leases", "ns", "lock", LeaseJson("them", 3));
  const Timings timings{4s, 3s, 2s};
  Agent follower(server, "me", timings, election::ReleaseMode::kOff, /*watch=*/true);
  REQUIRE(SettledOnWatch(server, follower));
  // The holder renews; the follower hears of it through the watch, with no GET of its own.
  const size_t gets_before = server.CountRequests("GET", kLeasePath);
  const election::Snapshot before = follower.Take();
  for (int i = 0; i < 3; ++i) {
    std::this_thread::sleep_for(700ms);  // the rival's renew rhythm, not a wait for us
    server.Bump(
        "leases", "ns", "lock",
        R"({"spec":{"renewTime":"2026-01-02T03:04:0)" + std::to_string(6 + i) + R"(.000000Z"}})");
  }
  CHECK_FALSE(follower.IsLeader());
  CHECK(server.CountRequests("GET", kLeasePath) == gets_before);
  // No attempt, but the loop judged each event: /healthz must not call a watching follower
  // wedged while its leader renews (it ages last_progress_at).
  const election::Snapshot after = follower.Take();
  CHECK(after.last_attempt_at == before.last_attempt_at);
  REQUIRE(after.last_progress_at.has_value());
  REQUIRE(before.last_progress_at.has_value());
  CHECK(*after.last_progress_at - *before.last_progress_at >= 1s);
  // The rival releases: the follower takes over within about 100 ms, not at its next poll.
  const auto released_at = std::chrono::steady_clock::now();
  server.Bump("leases", "ns", "lock", R"({"spec":{"holderIdentity":"","leaseDurationSeconds":1}})");
  REQUIRE(WaitFor([&] { return follower.IsLeader(); }, 2s));
  const auto took = std::chrono::steady_clock::now() - released_at;
  MESSAGE("released lease taken after ",
          std::chrono::duration_cast<std::chrono::milliseconds>(took).count(), " ms");
  CHECK(took < 1s);
  CHECK(follower.Take().record.leader_transitions == 4);
}

TEST_CASE("a watch answered 410 Gone starts over from the current state, said and counted") {
  FakeApiServer server;
  server.Put("leases", "ns", "lock", LeaseJson("them", 3));
  // Before the agent's threads start and after they stop: they read the default logger.
  testing::LogCapture log;
  std::mutex mu;
  std::vector<std::string> reasons;
  {
    Agent follower(server, "me", {4s, 3s, 2s}, election::ReleaseMode::kOff, /*watch=*/true,
                   MakeRandom01(), Duration::zero(), [&](const char* reason) {
                     std::lock_guard<std::mutex> l(mu);
                     reasons.emplace_back(reason);
                   });
    REQUIRE(SettledOnWatch(server, follower));
    const std::string seen = server.ResourceVersion("leases", "ns", "lock");
    // As an apiserver restart does: history from before now is gone (another object's write
    // moves the version past the follower's), and the open watch ends. The follower resumes
    // from the version it saw, and is told 410.
    server.Put("configmaps", "ns", "other", R"({"metadata":{"name":"other","namespace":"ns"}})");
    server.Compact();
    server.EndWatches();
    REQUIRE(WaitFor(
        [&] {
          std::lock_guard<std::mutex> l(mu);
          return !reasons.empty() && server.watches() >= 1;
        },
        3s));
    {
      std::lock_guard<std::mutex> l(mu);
      CHECK(reasons == std::vector<std::string>{cluster::kRestartExpired});
    }
    // The new watch, from the current state, works: the holder's release is taken at once
    // (well within retry-period, so through the watch, not a poll).
    const auto released_at = std::chrono::steady_clock::now();
    server.Bump("leases", "ns", "lock",
                R"({"spec":{"holderIdentity":"","leaseDurationSeconds":1}})");
    REQUIRE(WaitFor([&] { return follower.IsLeader(); }, 2s));
    CHECK(std::chrono::steady_clock::now() - released_at < 1s);
    CHECK(log.Lines().find("info: watch on leases ns/lock: resourceVersion " + seen +
                           " is too old for the API server (410 Gone); watching again from the "
                           "lock's current state\n") != std::string::npos);
  }
}

TEST_CASE("a loop inside a hung call makes no progress, however many watch events arrive") {
  // /healthz ages last_progress_at; only the loop thread records it, so a loop stuck in a call
  // must not look alive because the watch thread keeps delivering events.
  FakeApiServer server;
  server.Put("leases", "ns", "lock", LeaseJson("them", 3));
  const Timings timings{4s, 3s, 2s};  // request timeout: max(3s / 2, 1s) = 1.5s
  Agent follower(server, "me", timings, election::ReleaseMode::kOff, /*watch=*/true);
  REQUIRE(SettledOnWatch(server, follower));
  // The watch GETs the collection path, so only the elector's own GET of the lock hangs. Nobody
  // renews: the follower attempts when the lease would expire (4s) and its GET is held.
  testing::Hang hang;
  hang.method = "GET";
  hang.path_prefix = kLeasePath;
  hang.count = -1;
  server.InjectHang(hang);
  REQUIRE(server.WaitForHeld(1, 6000ms));
  const election::Snapshot before = follower.Take();
  for (int i = 0; i < 3; ++i) {
    server.Bump(
        "leases", "ns", "lock",
        R"({"spec":{"renewTime":"2026-01-02T03:04:0)" + std::to_string(6 + i) + R"(.000000Z"}})");
  }
  // The events reach the elector (its observation changes) but not its loop.
  REQUIRE(
      WaitFor([&] { return follower.Take().record.renew_time != before.record.renew_time; }, 1s));
  const election::Snapshot during = follower.Take();
  REQUIRE(server.held() == 1);  // still inside the call, so the check below means something
  CHECK(during.last_progress_at == before.last_progress_at);
  CHECK(during.last_attempt_at == before.last_attempt_at);
  // The call times out; the attempt completes, and that is progress again.
  server.ClearFaults();
  server.ReleaseHangs();
  REQUIRE(WaitFor([&] { return follower.Take().last_progress_at != before.last_progress_at; }, 3s));
}

TEST_CASE("a follower whose watch is forbidden falls back to polling and still takes over") {
  FakeApiServer server;
  server.Deny("watch", "leases");
  server.Put("leases", "ns", "lock", LeaseJson("them", 1));
  const Timings timings{2s, 1s, 300ms};
  Agent follower(server, "me", timings, election::ReleaseMode::kOff, /*watch=*/true);
  REQUIRE(WaitFor([&] { return follower.Take().observed; }, 3s));
  // Nobody renews: the lease expires 4s (the record's duration) after the follower first saw it.
  REQUIRE(WaitFor([&] { return follower.IsLeader(); }, 4s + 2s));
  CHECK(server.CountRequests("GET", kLeasePath) >= 2);
}

TEST_CASE("a watching leader stops saying yes within a round trip of a foreign write") {
  FakeApiServer server;
  const Timings timings{4s, 3s, 2s};
  Agent leader(server, "me", timings, election::ReleaseMode::kOff, /*watch=*/true);
  REQUIRE(WaitFor([&] { return leader.IsLeader(); }, 3s));
  REQUIRE(WaitFor([&] { return server.watches() >= 1; }, 3s));
  // A writer that breaks the protocol (client-go's release() blanking a lease it no longer
  // holds, then its elector taking it) overwrites the lease while this replica leads.
  std::this_thread::sleep_for(200ms);  // just after a renew, far from the next one (2s)
  const auto written_at = std::chrono::steady_clock::now();
  server.Bump("leases", "ns", "lock",
              R"({"spec":{"holderIdentity":"rogue","leaseTransitions":9}})");
  REQUIRE(WaitFor([&] { return !leader.IsLeader(); }, 3s));
  const auto took = std::chrono::steady_clock::now() - written_at;
  MESSAGE("yes ended ", std::chrono::duration_cast<std::chrono::milliseconds>(took).count(),
          " ms after the foreign write");
  CHECK(took < 1s);  // without the watch it would be up to retry-period (2s)
  CHECK(leader.Take().record.holder_identity == "rogue");
}

TEST_CASE("a follower counts lease-duration from when its slow GET returned, not from its start") {
  // The rival renews while the follower's GET is held; the GET then returns that renew. The
  // rival's "yes" may last until its renew was sent + renew-deadline, so the follower must wait
  // lease-duration from when its read returned. Counting from when the attempt started (mutant
  // observed-time-at-start) takes over up to a request timeout early: two leaders.
  FakeApiServer server;
  server.Put("leases", "ns", "lock", LeaseJson("them", 3));  // leaseDurationSeconds 4
  // Polls every 500 ms exactly (no jitter), so a takeover comes within one poll of the expiry the
  // follower computed. The request timeout (2.5s, within the attempt's renew-deadline) leaves
  // ample room above the 1s hold under load: a GET that timed out would prove nothing.
  const Timings timings{4s, 3s, 500ms};
  Agent follower(
      server, "me", timings, election::ReleaseMode::kOff, /*watch=*/false, [] { return 0.0; },
      /*request_timeout=*/2500ms);
  REQUIRE(WaitFor([&] { return follower.Take().observed; }, 3s));
  testing::Hang hang;
  hang.method = "GET";
  hang.path_prefix = kLeasePath;
  server.InjectHang(hang);  // the next GET of the lock, held until ReleaseHangs()
  REQUIRE(server.WaitForHeld(1, 3000ms));
  const election::Snapshot in_flight = follower.Take();
  // The rival's renew lands late in the held GET (the modelled latency of the GET, not a wait for
  // the agent), then the rival dies.
  std::this_thread::sleep_for(900ms);
  server.Bump("leases", "ns", "lock", R"({"spec":{"renewTime":"2026-01-02T03:04:09.000000Z"}})");
  std::this_thread::sleep_for(100ms);
  // Still inside that attempt (its GET has not timed out), so the GET returns after released_at
  // and with the renew.
  REQUIRE(follower.Take().last_attempt_at == in_flight.last_attempt_at);
  const auto released_at = std::chrono::steady_clock::now();
  server.ReleaseHangs();
  REQUIRE(WaitFor([&] { return follower.IsLeader(); }, 8s));
  const auto took = std::chrono::steady_clock::now() - released_at;
  MESSAGE("took over ", std::chrono::duration_cast<std::chrono::milliseconds>(took).count(),
          " ms after the held GET was let go");
  // The GET returned after released_at, so a correct follower cannot take over sooner than 4s
  // after it; the mutant does so about 1s sooner.
  CHECK(took >= 4s);
  CHECK(follower.Take().record.leader_transitions == 4);
}

// Observe mode end to end in-process: the real libcurl client, the Lease lock, the Observer's
// loop and the lock watch, while another writer (standing in for a controller-runtime manager)
// holds and renews the Lease.
std::string ObservedLease(const std::string& holder, SysTime renewed, int transitions) {
  return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"lock",)"
         R"("namespace":"ns"},"spec":{"holderIdentity":")" +
         holder +
         R"(","leaseDurationSeconds":4,"acquireTime":"2026-01-02T03:04:05.000000Z",)"
         R"("renewTime":")" +
         FormatMicroTime(renewed) + R"(","leaseTransitions":)" + std::to_string(transitions) + "}}";
}

// A foreign elector: writes `holder` into the Lease every `period` until stopped.
class Renewer {
 public:
  Renewer(FakeApiServer& server, std::string holder, int transitions, Duration period)
      : thread_([&server, holder, transitions, period, this] {
          while (!stop_) {
            server.Put("leases", "ns", "lock",
                       ObservedLease(holder, std::chrono::system_clock::now(), transitions));
            std::this_thread::sleep_for(period);
          }
        }) {}
  ~Renewer() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One observing agent: its client, Lease lock, Observer loop and lock watch, each on a thread.
class ObservingAgent {
 public:
  ObservingAgent(FakeApiServer& server, const std::string& pod) {
    kube::ClientOptions co;
    co.request_timeout = 1s;
    client_ = std::move(kube::NewCurlApiClient(server.ClientConfig(), co, clock_)).value();
    watcher_ = std::move(kube::NewCurlWatcher(server.ClientConfig(), co, clock_)).value();
    lock_ = LeaseLock(*client_, clock_, pod);
    election::ObserverConfig oc;
    oc.match = {election::MatchRule::kPod, pod};
    oc.identity = pod;
    oc.lease_duration = 4s;
    oc.renew_deadline = 1500ms;  // the span: min(1.5s, 4s - kObserveMargin)
    oc.retry_period = 200ms;
    observer_ = std::make_unique<election::Observer>(oc, *lock_, clock_);
    lock_watcher_ =
        std::make_unique<cluster::LockWatcher>(*watcher_, *observer_, *lock_, clock_, 200ms);
    watch_thread_ = std::thread([this] { lock_watcher_->Run(); });
    thread_ = std::thread([this] { observer_->Run(); });
  }
  ~ObservingAgent() {
    observer_->Stop();
    thread_.join();
    lock_watcher_->Stop();
    watch_thread_.join();
  }
  election::Snapshot Take() const { return observer_->Take(); }

 private:
  RealClock clock_;
  std::unique_ptr<kube::ApiClient> client_;
  std::unique_ptr<kube::Watcher> watcher_;
  std::unique_ptr<election::Lock> lock_;
  std::unique_ptr<election::Observer> observer_;
  std::unique_ptr<cluster::LockWatcher> lock_watcher_;
  std::thread watch_thread_;
  std::thread thread_;
};

TEST_CASE("observe mode: reads and watches only, and follows a foreign holder") {
  FakeApiServer server;
  auto renewer = std::make_unique<Renewer>(server, "pod-a_6b0e", 1, 300ms);
  REQUIRE(WaitFor([&] { return server.Get("leases", "ns", "lock").has_value(); }, 2s));
  ObservingAgent a(server, "pod-a");
  ObservingAgent b(server, "pod-b");

  // The holder's renewals change the record's whole second about once a second: pod-a's yes
  // starts at the first change after its first Get.
  CHECK(WaitFor([&] { return a.Take().is_leader; }, 5s));
  CHECK_FALSE(b.Take().is_leader);
  CHECK(b.Take().record.holder_identity == "pod-a_6b0e");

  SUBCASE("a takeover reaches both views by the watch, and ends pod-a's yes at once") {
    renewer->Stop();
    // The last renewal was read; its yes still runs (1.5s from the Get before it).
    REQUIRE(WaitFor([&] { return a.Take().is_leader; }, 1s));
    const auto put = std::chrono::steady_clock::now();
    server.Put("leases", "ns", "lock",
               ObservedLease("pod-b_77c1", std::chrono::system_clock::now(), 2));
    CHECK(WaitFor([&] { return !a.Take().is_leader; }, 1s));
    const auto seen = std::chrono::steady_clock::now() - put;
    MESSAGE("pod-a's yes ended ",
            std::chrono::duration_cast<std::chrono::milliseconds>(seen).count(),
            " ms after the takeover was written");
    CHECK(WaitFor([&] { return a.Take().record.holder_identity == "pod-b_77c1"; }, 1s));
    // pod-b's yes needs a version written after one of its Gets: the takeover's next renewal.
    Renewer b_renews(server, "pod-b_77c1", 2, 300ms);
    CHECK(WaitFor([&] { return b.Take().is_leader; }, 5s));
    CHECK_FALSE(a.Take().is_leader);
  }
  SUBCASE("a holder that stops renewing: the yes runs out within the span") {
    renewer->Stop();
    const auto stopped = std::chrono::steady_clock::now();
    CHECK(WaitFor([&] { return !a.Take().is_leader; }, 3s));
    const auto lasted = std::chrono::steady_clock::now() - stopped;
    // At most renew-deadline after the Get before the last change, which preceded the stop.
    CHECK(lasted <= 1500ms + 200ms);
  }
  // Never a write: Gets and watches only (a watch is a GET with watch=true).
  for (const char* method : {"POST", "PUT", "PATCH", "DELETE"}) {
    CAPTURE(method);
    size_t writes = 0;
    for (const testing::RecordedRequest& r : server.Requests()) {
      // The renewers' writes do not go through HTTP (FakeApiServer::Put): every request here is
      // the observers'.
      if (r.method == method) ++writes;
    }
    CHECK(writes == 0);
  }
  CHECK(server.CountRequests("GET", "/apis/coordination.k8s.io/v1/namespaces/ns/leases") > 0);
}

}  // namespace
}  // namespace leasehold
