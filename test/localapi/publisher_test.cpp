// The publisher on a real Elector with a strict fake lock and a FakeClock: Poll() is driven by
// hand, so every instant is exact. One case runs the thread on the real clock.
#include "localapi/publisher.h"

#include <doctest/doctest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"
#include "fakes/fake_lock.h"

namespace leasehold::localapi {
namespace {

using namespace std::chrono_literals;
using election::ElectionConfig;
using election::Elector;
using election::LockObservation;
using election::ReleaseMode;
using election::Snapshot;
using election::testing::FakeLock;
using election::testing::Op;

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
        config(*ElectionConfig::Create(kMe, {15s, 10s, 2s}, mode, 30s)),
        elector(config, lock, clock, [] { return 0.5; }),
        publisher([this](bool promise) { return promise ? elector.Take() : elector.Peek(); },
                  clock) {}

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

bool Has(const std::string& json, const std::string& part) {
  return json.find(part) != std::string::npos;
}

TEST_CASE("publisher: the first state, then only news; every renew while leading") {
  Fixture f;
  RecordingSink sink;
  f.publisher.AddSink(&sink);

  CHECK(f.publisher.Poll() == MonoTime::max());
  CHECK(f.publisher.Poll() == MonoTime::max());  // nothing new
  REQUIRE(sink.got().size() == 1);
  CHECK(sink.got()[0].sequence == 1);
  CHECK(sink.got()[0].leadership_changed);
  CHECK(Has(sink.got()[0].json, R"("reason":"the lock has not been read yet")"));
  CHECK(sink.got()[0].json.back() == '}');  // one line, no newline

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
  CHECK(Has(got[1].json, R"("isLeader":true,"term":0)"));
  CHECK(Has(got[1].json, R"("validForMs":10000,"validUntil":"2026-01-02T03:00:10.000Z")"));
  CHECK(got[2].sequence == 3);
  CHECK_FALSE(got[2].leadership_changed);  // a renew: only validUntil moved
  CHECK(Has(got[2].json, R"("validForMs":10000,"validUntil":"2026-01-02T03:00:12.000Z")"));
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
  CHECK(Has(got[1].json, R"("name":"them_0002")"));
  CHECK(Has(got[1].json, R"("isLeader":false,"term":3)"));
  CHECK(Has(got[2].json, R"("name":"other_0003")"));
  CHECK(Has(got[2].json, R"("term":4)"));
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
  CHECK(Has(down.json,
            R"("name":"me_0001","leader":"me_0001","identity":"me_0001","isLeader":false)"));
  CHECK_FALSE(Has(down.json, "validUntil"));
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
      CHECK(f.elector.Peek().phase == election::Phase::kDone);
    }
  }
}

TEST_CASE("publisher: the listener records each write's latency once, whatever the order") {
  Fixture f;
  std::vector<Duration> seen;
  f.publisher.SetWriteObserver([&](Duration d) { seen.push_back(d); });
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
  CHECK(seen == std::vector<Duration>{5ms, 7ms, 12ms});
}

TEST_CASE("publisher: the elector reports each acquire or renew write with its latency") {
  Fixture f;
  std::vector<Duration> seen;
  f.publisher.SetWriteObserver([&](Duration d) { seen.push_back(d); });
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
  CHECK(seen == std::vector<Duration>{30ms, 4ms, 9ms});
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
  CHECK(current.sequence == 1);                       // the same state...
  CHECK(Has(current.json, R"("validForMs":8500,)"));  // ...counted from now
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

TEST_CASE("publisher thread: wakes on the listener, and at valid_until on its own") {
  // A source whose "yes" runs out 300ms after the start, on the real clock. The steady
  // instant is taken first, so that it is not later than the boot-clock instant.
  RealClock clock;
  std::mutex mu;
  std::string holder = "x";
  const auto steady_valid_until = std::chrono::steady_clock::now() + 300ms;
  const MonoTime valid_until = clock.MonotonicNow() + 300ms;
  Publisher publisher(
      [&](bool) {
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
}  // namespace leasehold::localapi
