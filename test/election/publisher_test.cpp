// The publisher on a real Elector with a strict fake lock and a FakeClock: Poll() is driven by
// hand, so every instant is exact. Two cases run the thread: one on the real clock, one with a
// sink that stalls while the elector renews on the fake clock.
#include "election/publisher.h"

#include <doctest/doctest.h>

#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/fake_lock.h"

namespace leasehold::election {
namespace {

using namespace std::chrono_literals;
using testing::FakeLock;
using testing::Op;

constexpr const char* kMe = "me_0001";
constexpr const char* kThem = "them_0002";

// Records what it is given; hands leadership on when told to.
class RecordingSink final : public PublicationSink {
 public:
  explicit RecordingSink(bool hands_out = false) : hands_out_(hands_out) {}
  void Publish(const Publication& p) override {
    std::lock_guard<std::mutex> l(mu_);
    got_.push_back(p);
    arrived_.push_back(std::chrono::steady_clock::now());
    cv_.notify_all();
  }
  bool HandsOutLeadership() const override { return hands_out_; }

  std::vector<Publication> got() const {
    std::lock_guard<std::mutex> l(mu_);
    return got_;
  }
  // Blocks until `n` publications arrived (or 5s of real time passed); returns the n-th's
  // arrival time.
  std::chrono::steady_clock::time_point WaitFor(size_t n) {
    std::unique_lock<std::mutex> l(mu_);
    const bool ok = cv_.wait_for(l, 5s, [&] { return got_.size() >= n; });
    REQUIRE_MESSAGE(ok, "publication " << n << " never arrived");
    return arrived_[n - 1];
  }

 private:
  const bool hands_out_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Publication> got_;
  std::vector<std::chrono::steady_clock::time_point> arrived_;
};

// The metrics' side, as a test sees it: every write's latency, in order.
struct RecordingHook final : WriteHook {
  void OnWrite(Duration latency) override { seen.push_back(latency); }
  std::vector<Duration> seen;
};

LockObservation Obs(const std::string& holder, int64_t transitions, const std::string& version) {
  LockObservation o;
  o.record.holder_identity = holder;
  o.record.lease_duration_seconds = 15;
  o.record.acquire_time = SysTime(std::chrono::seconds(1767000000));
  o.record.renew_time = SysTime(std::chrono::seconds(1767000000));
  o.record.leader_transitions = transitions;
  o.raw = holder + "/" + std::to_string(transitions) + "/" + version;
  return o;
}

struct Fixture {
  explicit Fixture(ReleaseMode mode = ReleaseMode::kSafe)
      : lock(clock),
        config(*ElectionConfig::Create(kMe, {15s, 10s, 2s, 2s}, mode, 30s)),
        elector(config, lock, clock, [] { return 0.5; }),
        publisher(elector.Source(), clock) {}

  // Acquires a free lock (404 → Create).
  void BecomeLeader() {
    lock.ExpectGetError(Status(Code::kNotFound, "nf"))
        .ExpectWrite(Op::kCreate, Status::Ok(), nullptr);
    elector.Step();
    REQUIRE(elector.Peek().is_leader);
  }
  // One renew on the fast path, after `after`.
  void Renew(Duration after = 2s) {
    clock.Advance(after);
    lock.ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
    elector.Step();
  }

  FakeClock clock;
  FakeLock lock;
  ElectionConfig config;
  Elector elector;
  Publisher publisher;
};

TEST_CASE("publisher: the first state, then only news; every renew while leading") {
  Fixture f;
  RecordingSink sink;
  f.publisher.AddSink(&sink);

  CHECK(f.publisher.Poll() == MonoTime::max());
  CHECK(f.publisher.Poll() == MonoTime::max());  // nothing new
  REQUIRE(sink.got().size() == 1);
  CHECK(sink.got()[0].sequence == 1);
  CHECK(sink.got()[0].leadership_changed);
  CHECK_FALSE(sink.got()[0].snapshot.observed);

  const MonoTime start = f.clock.MonotonicNow();
  f.BecomeLeader();
  CHECK(f.publisher.Poll() == start + 10s);
  f.Renew();
  CHECK(f.publisher.Poll() == start + 12s);
  CHECK(f.publisher.Poll() == start + 12s);  // nothing new

  const auto got = sink.got();
  REQUIRE(got.size() == 3);
  CHECK(got[1].sequence == 2);
  CHECK(got[1].leadership_changed);
  CHECK(got[1].snapshot.is_leader);
  CHECK(got[1].snapshot.record.leader_transitions == 0);
  CHECK(got[1].snapshot.valid_until == start + 10s);
  CHECK(got[2].sequence == 3);
  CHECK_FALSE(got[2].leadership_changed);  // a renew: only validUntil moved
  CHECK(got[2].snapshot.valid_until == start + 12s);
}

TEST_CASE("publisher: a follower publishes a new leader or term, not the leader's renewals") {
  Fixture f;
  RecordingSink sink;
  f.publisher.AddSink(&sink);
  f.publisher.Poll();  // not read yet

  f.lock.ExpectGet(Obs(kThem, 3, "a"));
  f.elector.Step();
  f.publisher.Poll();
  for (const char* version : {"b", "c", "d"}) {  // the leader renews: the record changes
    f.clock.Advance(3s);
    f.lock.ExpectGet(Obs(kThem, 3, version));
    f.elector.Step();
    f.publisher.Poll();
  }
  // Another holder takes over (term 4).
  f.clock.Advance(3s);
  f.lock.ExpectGet(Obs("other_0003", 4, "e"));
  f.elector.Step();
  f.publisher.Poll();

  const auto got = sink.got();
  REQUIRE(got.size() == 3);
  CHECK(got[1].snapshot.record.holder_identity == "them_0002");
  CHECK_FALSE(got[1].snapshot.is_leader);
  CHECK(got[1].snapshot.record.leader_transitions == 3);
  CHECK(got[2].snapshot.record.holder_identity == "other_0003");
  CHECK(got[2].snapshot.record.leader_transitions == 4);
  CHECK(got[2].leadership_changed);
}

TEST_CASE(
    "publisher: a passive step-down is published exactly at valid_until, with no call "
    "from the elector") {
  Fixture f;
  RecordingSink sink;
  f.publisher.AddSink(&sink);
  int listener_calls = 0;
  const auto listener = f.publisher.Listener();
  f.elector.SetListener([&](const Snapshot& s) {
    ++listener_calls;
    listener(s);
  });
  f.BecomeLeader();
  const MonoTime valid_until = f.publisher.Poll();
  REQUIRE(valid_until == f.clock.MonotonicNow() + 10s);
  const int calls = listener_calls;
  const size_t published = sink.got().size();

  // The renew hangs (or the elector thread is stuck): no attempt completes, nobody calls.
  f.clock.Advance(valid_until - f.clock.MonotonicNow() - 1ns);
  CHECK(f.publisher.Poll() == valid_until);
  CHECK(sink.got().size() == published);
  f.clock.Advance(1ns);
  CHECK(f.publisher.Poll() == MonoTime::max());
  REQUIRE(sink.got().size() == published + 1);
  const Publication down = sink.got().back();
  CHECK_FALSE(down.snapshot.is_leader);
  CHECK(down.leadership_changed);
  CHECK(down.snapshot.record.holder_identity == kMe);
  CHECK_FALSE(down.snapshot.LeaderAt(f.clock.MonotonicNow()));
  CHECK(listener_calls == calls);
}

TEST_CASE("publisher: takes a promise only while a sink hands leadership on") {
  struct Case {
    const char* name;
    bool hands_out;
    bool release_waits;
  };
  const std::vector<Case> cases = {
      {"events, label and metrics only: no promise, a SIGTERM releases at once", false, false},
      {"a watch client or the status file: the safe-mode release waits", true, true},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      Fixture f;
      RecordingSink sink(c.hands_out);
      f.publisher.AddSink(&sink);
      f.elector.SetListener(f.publisher.Listener());  // itself never a promise
      f.BecomeLeader();
      const MonoTime valid_until = f.publisher.Poll();
      f.clock.Advance(1s);
      f.elector.Stop();
      if (c.release_waits) {
        CHECK(f.elector.Step() == valid_until);
        CHECK(f.lock.calls() == "Get Create");
        f.clock.Advance(valid_until - f.clock.MonotonicNow());
      }
      f.lock.ExpectGet(Obs(kMe, 0, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
      f.elector.Step();
      CHECK(f.elector.Peek().phase == Phase::kDone);
    }
  }
}

TEST_CASE("publisher: the listener records each write's latency once, whatever the order") {
  Fixture f;
  RecordingHook hook;
  f.publisher.SetWriteHook(&hook);
  const auto listener = f.publisher.Listener();
  struct Call {
    uint64_t writes;
    Duration latency;
  };
  // From several threads the elector's snapshots can arrive late: 1 after 2 is old news.
  for (const Call& c :
       {Call{0, 0ms}, Call{1, 5ms}, Call{1, 5ms}, Call{3, 7ms}, Call{2, 6ms}, Call{4, 12ms}}) {
    Snapshot s;
    s.writes_total = c.writes;
    s.last_write_latency = c.latency;
    listener(s);
  }
  CHECK(hook.seen == std::vector<Duration>{5ms, 7ms, 12ms});
}

TEST_CASE("publisher: the elector reports each acquire or renew write with its latency") {
  Fixture f;
  RecordingHook hook;
  f.publisher.SetWriteHook(&hook);
  f.elector.SetListener(f.publisher.Listener());
  f.lock.ExpectGetError(Status(Code::kNotFound, "nf"))
      .ExpectWrite(Op::kCreate, Status::Ok(), nullptr, 30ms);
  f.elector.Step();
  f.clock.Advance(2s);
  f.lock.ExpectWrite(Op::kUpdate, Status::Ok(), nullptr, 4ms);
  f.elector.Step();
  // A failed renew is no write.
  f.clock.Advance(2s);
  f.lock.ExpectWrite(Op::kUpdate, Status(Code::kConflict, "c"), nullptr, 1ms)
      .ExpectGet(Obs(kMe, 0, "b"))
      .ExpectWrite(Op::kUpdate, Status::Ok(), nullptr, 9ms);
  f.elector.Step();
  CHECK(hook.seen == std::vector<Duration>{30ms, 4ms, 9ms});
  CHECK(f.elector.Peek().writes_total == 3);
  CHECK(f.elector.Peek().last_write_latency == 9ms);
}

TEST_CASE("publisher: Attach hands out the current state, fresh, as a promise") {
  Fixture f;
  RecordingSink sink;  // hands nothing on: the publisher only peeks for it
  f.publisher.AddSink(&sink);
  f.BecomeLeader();
  f.publisher.Poll();
  REQUIRE(sink.got().size() == 1);
  f.clock.Advance(1500ms);

  Publication current;
  f.publisher.Attach([&](const Publication& p) { current = p; });
  CHECK(current.sequence == 1);  // the same state, which still leads now
  CHECK(current.snapshot.LeaderAt(f.clock.MonotonicNow()));
  CHECK(sink.got().size() == 1);

  // A change not yet polled is published to every sink before the new client sees it.
  f.Renew(500ms);
  f.publisher.Attach([&](const Publication& p) { current = p; });
  CHECK(current.sequence == 2);
  CHECK(sink.got().size() == 2);
  CHECK(sink.got()[1].sequence == 2);

  // What the client was given is a promise: a SIGTERM now waits for it.
  f.elector.Stop();
  CHECK(f.elector.Step() == current.snapshot.valid_until);
  f.clock.Advance(current.snapshot.valid_until - f.clock.MonotonicNow());
  f.lock.ExpectGet(Obs(kMe, 0, "a")).ExpectWrite(Op::kUpdate, Status::Ok(), nullptr);
  f.elector.Step();
}

TEST_CASE("Snapshot::LeaderAt: a yes only until valid_until, judged at the given instant") {
  const MonoTime until = MonoTime() + 100s;
  struct Case {
    const char* name;
    bool is_leader;
    MonoTime now;
    bool want;
  };
  const std::vector<Case> cases = {
      {"a yes, 1ns before valid_until", true, until - 1ns, true},
      {"a yes, at valid_until: run out", true, until, false},
      {"a yes, long after valid_until", true, until + 60s, false},
      {"a no stays no, whatever the deadline", false, until - 1s, false},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      Snapshot s;
      s.is_leader = c.is_leader;
      s.valid_until = until;
      CHECK(s.LeaderAt(c.now) == c.want);
    }
  }
}

// A consumer that stalls: Publish blocks until the test releases it (a status file on a hung
// volume, a sink waiting on a lock). Afterwards it records without blocking.
class StallingSink final : public PublicationSink {
 public:
  void Publish(const Publication& p) override {
    std::unique_lock<std::mutex> l(mu_);
    got_.push_back(p);
    cv_.notify_all();
    cv_.wait(l, [&] { return released_; });
  }
  bool HandsOutLeadership() const override { return true; }

  // Blocks until a publication matching `pred` arrived (or 5s of real time passed).
  template <typename Pred>
  bool WaitFor(Pred pred) {
    std::unique_lock<std::mutex> l(mu_);
    return cv_.wait_for(l, 5s, [&] {
      for (const Publication& p : got_) {
        if (pred(p)) return true;
      }
      return false;
    });
  }
  size_t count() const {
    std::lock_guard<std::mutex> l(mu_);
    return got_.size();
  }
  void Release() {
    {
      std::lock_guard<std::mutex> l(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Publication> got_;
  bool released_ = false;
};

TEST_CASE("publisher: a stalled sink delays no renew, and every write still reaches the hook") {
  Fixture f;
  StallingSink stalled;
  RecordingHook hook;
  f.publisher.AddSink(&stalled);
  f.publisher.SetWriteHook(&hook);
  f.elector.SetListener(f.publisher.Listener());
  f.publisher.Start();
  // The publisher's thread is now stuck in the sink with the first state, holding its
  // publication lock, and stays there until Release().
  REQUIRE(stalled.WaitFor([](const Publication& p) { return p.sequence == 1; }));

  const MonoTime start = f.clock.MonotonicNow();
  std::vector<MonoTime> renewed_at;
  const auto at_renew = [&](const LeaderElectionRecord&, MonoTime) {
    renewed_at.push_back(f.clock.MonotonicNow());
  };
  f.lock.ExpectGetError(Status(Code::kNotFound, "nf"))
      .ExpectWrite(Op::kCreate, Status::Ok(), nullptr, 20ms)
      .ExpectWrite(Op::kUpdate, Status::Ok(), at_renew, 5ms)
      .ExpectWrite(Op::kUpdate, Status::Ok(), at_renew, 7ms);
  // Acquire, then renew twice, each renew the instant it is due on the fake clock. On a thread of
  // its own, so that a Step() held up by the stalled sink fails the bound below, not the run.
  std::vector<MonoTime> due;
  auto steps = std::async(std::launch::async, [&] {
    due.push_back(f.elector.Step());
    for (int i = 0; i < 2; ++i) {
      f.clock.Advance(due.back() - f.clock.MonotonicNow());
      due.push_back(f.elector.Step());
    }
  });
  struct ReleaseAtExit {  // destroyed before `steps`: a held-up Step() is let go, then joined
    StallingSink& sink;
    ~ReleaseAtExit() { sink.Release(); }
  } release_at_exit{stalled};
  // Real time, for a Step() that takes microseconds: generous under any load.
  const bool on_time = steps.wait_for(10s) == std::future_status::ready;
  CHECK_MESSAGE(on_time, "a stalled sink held up the elector's Step()");
  if (!on_time) return;

  REQUIRE(due.size() == 3);
  // Each renew a retry-period after the previous write's answer, to the nanosecond.
  CHECK(due[0] == start + 20ms + 2s);
  CHECK(due[1] == due[0] + 5ms + 2s);
  CHECK(renewed_at == std::vector<MonoTime>{due[0], due[1]});
  const Snapshot now = f.elector.Peek();
  CHECK(now.is_leader);
  CHECK(now.valid_until == due[1] + 10s);  // claimed from the second renew's send
  CHECK(hook.seen == std::vector<Duration>{20ms, 5ms, 7ms});
  CHECK(stalled.count() == 1);  // the sink is still stuck in the first publication

  // Let go, the sink catches up with the latest state at once.
  stalled.Release();
  CHECK(stalled.WaitFor([&](const Publication& p) {
    return p.snapshot.is_leader && p.snapshot.valid_until == now.valid_until;
  }));
  f.publisher.Stop();
}

TEST_CASE("publisher thread: wakes on the listener, and at valid_until on its own") {
  // A source whose "yes" runs out 300ms after the start, on the real clock. The steady
  // instant is taken first, so that it is not later than the boot-clock instant.
  RealClock clock;
  std::mutex mu;
  std::string holder = "x";
  const auto steady_valid_until = std::chrono::steady_clock::now() + 300ms;
  const MonoTime valid_until = clock.MonotonicNow() + 300ms;
  Publisher publisher(
      [&](Reading) {
        std::lock_guard<std::mutex> l(mu);
        Snapshot s;
        s.identity = "me";
        s.observed = true;
        s.record.holder_identity = holder;
        s.is_leader = holder == "me" && clock.MonotonicNow() < valid_until;
        s.valid_until = valid_until;
        return s;
      },
      clock);
  RecordingSink sink;
  publisher.AddSink(&sink);
  publisher.Start();
  sink.WaitFor(1);

  {
    std::lock_guard<std::mutex> l(mu);
    holder = "me";
  }
  publisher.Listener()(Snapshot{});
  sink.WaitFor(2);
  REQUIRE(sink.got()[1].snapshot.is_leader);

  // No call: the thread's own timer ends the "yes".
  const auto arrived = sink.WaitFor(3);
  CHECK_FALSE(sink.got()[2].snapshot.is_leader);
  CHECK(arrived >= steady_valid_until);
  const auto late =
      std::chrono::duration_cast<std::chrono::milliseconds>(arrived - steady_valid_until);
  MESSAGE("passive step-down published " << late.count() << " ms after valid_until");
  CHECK(late < 500ms);

  publisher.Stop();
  CHECK(sink.got().size() == 3);  // the final state was no news
}

}  // namespace
}  // namespace leasehold::election
