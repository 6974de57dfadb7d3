#include "locks/local_lock.h"

#include <doctest/doctest.h>

#include "election/elector.h"
#include "fakes/fake_clock.h"

namespace leasehold::locks {
namespace {

using namespace std::chrono_literals;

TEST_CASE("LocalLock: NotFound until created, then every write is a new version") {
  LocalLock lock("ns", "lock");
  CHECK(lock.Get(MonoTime{}).code() == Code::kNotFound);
  CHECK(lock.Update({}, MonoTime{}).code() == Code::kFailedPrecondition);
  election::LeaderElectionRecord r;
  r.holder_identity = "me";
  REQUIRE(lock.Create(r, MonoTime{}).ok());
  CHECK(lock.Create(r, MonoTime{}).code() == Code::kAlreadyExists);
  auto a = lock.Get(MonoTime{});
  REQUIRE(a.ok());
  CHECK(a->record.holder_identity == "me");
  REQUIRE(lock.Update(r, MonoTime{}).ok());
  auto b = lock.Get(MonoTime{});
  REQUIRE(b.ok());
  CHECK(a->raw != b->raw);
  CHECK(lock.Describe().type == election::LockType::kNone);
  CHECK(election::LockTypeName(lock.Describe().type) == "none");
}

TEST_CASE("--lock-type none: the elector leads at once and keeps one term for its life") {
  FakeClock clock;
  LocalLock lock("ns", "lock");
  auto config = election::ElectionConfig::Create("me", {}, election::ReleaseMode::kSafe, 30s);
  REQUIRE(config.ok());
  election::Elector elector(*config, lock, clock, [] { return 0.5; });
  CHECK_FALSE(elector.Take().observed);
  elector.Step();
  auto s = elector.Take();
  CHECK(s.is_leader);
  CHECK(s.record.leader_transitions == 0);
  for (int i = 0; i < 100; ++i) {
    clock.Advance(2s);
    elector.Step();
    s = elector.Take();
    REQUIRE(s.is_leader);
    CHECK(s.record.leader_transitions == 0);
    CHECK(s.last_error.ok());
  }
  elector.Stop();
  CHECK_FALSE(elector.Take().is_leader);
  elector.Step();  // safe mode: waits out the last "yes" handed out
  clock.Advance(10s);
  elector.Step();
  CHECK(elector.Take().phase == election::Phase::kDone);
}

}  // namespace
}  // namespace leasehold::locks
