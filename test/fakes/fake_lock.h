// A strict fake Lock: every call must have been expected, in order. Each expectation may make
// the fake clock advance while the call is "in flight", to model latency and hung calls.
#pragma once

#include <doctest/doctest.h>

#include <deque>
#include <functional>
#include <optional>
#include <string>

#include "base/clock.h"
#include "election/lock.h"
#include "fakes/fake_clock.h"

namespace leasehold::election::testing {

enum class Op { kGet, kCreate, kUpdate };

inline const char* OpName(Op op) {
  switch (op) {
    case Op::kGet:
      return "Get";
    case Op::kCreate:
      return "Create";
    case Op::kUpdate:
      return "Update";
  }
  return "?";
}

struct Expectation {
  Op op;
  Status status;                       // returned (Get: only when !ok)
  std::optional<LockObservation> obs;  // returned by Get on success
  Duration latency{};                  // the fake clock moves this much during the call
  std::function<void(const LeaderElectionRecord&, MonoTime deadline)> check;
  std::function<void()> during;  // runs while the call is in flight, after the latency
};

class FakeLock final : public Lock {
 public:
  explicit FakeLock(FakeClock& clock) : clock_(clock) {}
  ~FakeLock() override { CHECK_MESSAGE(script_.empty(), "expected calls never made: ", Pending()); }

  FakeLock& ExpectGet(LockObservation obs, Duration latency = {},
                      std::function<void()> during = nullptr) {
    script_.push_back(
        {Op::kGet, Status::Ok(), std::move(obs), latency, nullptr, std::move(during)});
    return *this;
  }
  FakeLock& ExpectGetError(Status st, Duration latency = {}) {
    script_.push_back({Op::kGet, std::move(st), std::nullopt, latency, nullptr, nullptr});
    return *this;
  }
  FakeLock& ExpectWrite(Op op, Status st,
                        std::function<void(const LeaderElectionRecord&, MonoTime)> check,
                        Duration latency = {}) {
    script_.push_back({op, std::move(st), std::nullopt, latency, std::move(check), nullptr});
    return *this;
  }

  Result<LockObservation> Get(MonoTime deadline) override {
    auto e = Next(Op::kGet, nullptr, deadline);
    if (!e) return Status(Code::kUnavailable, "unexpected Get");
    if (!e->status.ok()) return e->status;
    return *e->obs;
  }
  Status Create(const LeaderElectionRecord& r, MonoTime deadline) override {
    auto e = Next(Op::kCreate, &r, deadline);
    return e ? e->status : Status(Code::kUnavailable, "unexpected Create");
  }
  Status Update(const LeaderElectionRecord& r, MonoTime deadline) override {
    auto e = Next(Op::kUpdate, &r, deadline);
    return e ? e->status : Status(Code::kUnavailable, "unexpected Update");
  }
  LockDescription Describe() const override { return {LockType::kLeases, "ns", "lock"}; }

  // The calls made so far, e.g. "Get Update".
  const std::string& calls() const { return calls_; }
  bool done() const { return script_.empty(); }

 private:
  std::string Pending() const {
    std::string s;
    for (const auto& e : script_) s += std::string(OpName(e.op)) + " ";
    return s;
  }
  std::optional<Expectation> Next(Op op, const LeaderElectionRecord* r, MonoTime deadline) {
    if (!calls_.empty()) calls_ += " ";
    calls_ += OpName(op);
    if (script_.empty()) {
      FAIL_CHECK("unexpected call ", OpName(op), " after: ", calls_);
      return std::nullopt;
    }
    Expectation e = std::move(script_.front());
    script_.pop_front();
    if (e.op != op) {
      FAIL_CHECK("expected ", OpName(e.op), " but got ", OpName(op), " (calls: ", calls_, ")");
      return std::nullopt;
    }
    CHECK_MESSAGE(deadline > clock_.MonotonicNow(), "call made with its deadline already past");
    if (e.check && r) e.check(*r, deadline);
    clock_.Advance(e.latency);
    if (e.during) e.during();
    return e;
  }

  FakeClock& clock_;
  std::deque<Expectation> script_;
  std::string calls_;
};

}  // namespace leasehold::election::testing
