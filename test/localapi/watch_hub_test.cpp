// The watch hub without HTTP: queues, limits and the wake-up signal, driven by hand (heartbeats
// and hang-ups are the listener's: watch_stream_test.cpp).
#include "localapi/watch_hub.h"

#include <doctest/doctest.h>
#include <poll.h>

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "fakes/fake_clock.h"

namespace leasehold::localapi {
namespace {

using namespace std::chrono_literals;
using election::Snapshot;

// A snapshot the test changes by hand.
struct Source {
  Source() {
    s.identity = "me";
    s.lock = {election::LockType::kLeases, "ns", "lock"};
    s.observed = true;
    s.record.holder_identity = "them";
    s.record.leader_transitions = 1;
  }
  Snapshot Get(election::Reading reading) {
    std::lock_guard<std::mutex> l(mu);
    if (reading == election::Reading::kPromise) ++promises;
    return s;
  }
  // A new term: a change every sink hears of.
  void NextTerm() {
    std::lock_guard<std::mutex> l(mu);
    ++s.record.leader_transitions;
  }
  std::mutex mu;
  Snapshot s;
  int promises = 0;
};

// What the stream of `c` writes next, or nullopt when it ends. Frames are queued by this thread,
// so nothing is waited for.
std::optional<std::string> NextFrame(WatchHub& hub, WatchHub::Client& c) {
  WatchHub::Frames f = hub.Take(c, 1);
  if (!f.frames.empty()) return f.frames[0];
  CHECK(f.ended);
  return std::nullopt;
}

struct Fixture {
  explicit Fixture(WatchHubOptions o = {})
      : publisher([this](election::Reading r) { return source.Get(r); }, clock), hub(publisher, o) {
    publisher.AddSink(&hub);
  }
  // The term each frame carries, or the frame itself when it is not an event.
  std::string TermOf(const std::string& frame) {
    const size_t at = frame.find("\"term\":");
    if (frame.rfind("event: leader\ndata: {", 0) != 0 || at == std::string::npos) return frame;
    return frame.substr(at + 7, frame.find(',', at) - at - 7);
  }
  // Publishes one new term.
  void Publish() {
    source.NextTerm();
    publisher.Poll();
  }

  FakeClock clock;
  Source source;
  election::Publisher publisher;
  WatchHub hub;
};

TEST_CASE("watch hub: the first event is the current state, as a promise") {
  Fixture f;
  auto c = f.hub.Attach("peer-1");
  REQUIRE(c.ok());
  CHECK(f.source.promises == 1);
  const auto frame = NextFrame(f.hub, **c);
  REQUIRE(frame);
  CHECK(frame->rfind("event: leader\ndata: {\"name\":\"them\"", 0) == 0);
  CHECK(frame->substr(frame->size() - 3) == "}\n\n");
  CHECK(frame->find('\n') == std::string("event: leader").size());
  CHECK(f.TermOf(*frame) == "1");
}

TEST_CASE("watch hub: at most max_watchers; a client that goes frees its place") {
  WatchHubOptions o;
  o.max_watchers = 2;
  Fixture f(o);
  auto a = f.hub.Attach("a");
  auto b = f.hub.Attach("b");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(f.hub.watchers() == 2);
  CHECK(f.hub.HandsOutLeadership());
  const int promises = f.source.promises;
  auto c = f.hub.Attach("c");
  REQUIRE_FALSE(c.ok());
  CHECK(c.code() == Code::kUnavailable);
  CHECK(c.status().message() == "too many watchers (--max-watchers=2)");
  CHECK(f.source.promises == promises);       // a refused client costs no promise
  a = Status(Code::kUnavailable, "dropped");  // the stream ended: its client goes
  CHECK(f.hub.watchers() == 1);
  CHECK(f.hub.Attach("c").ok());
}

TEST_CASE("watch hub: no clients, no promise") {
  Fixture f;
  CHECK_FALSE(f.hub.HandsOutLeadership());
  f.publisher.Poll();
  CHECK(f.source.promises == 0);
  {
    auto c = f.hub.Attach("a");
    f.Publish();
    CHECK(f.source.promises == 2);  // the first event and the publication
  }
  f.Publish();
  CHECK(f.source.promises == 2);
}

TEST_CASE("watch hub: every client gets every publication, in order") {
  Fixture f;
  std::vector<std::shared_ptr<WatchHub::Client>> clients;
  for (int i = 0; i < 5; ++i) clients.push_back(f.hub.Attach("c" + std::to_string(i)).value());
  for (int i = 0; i < 3; ++i) f.Publish();
  for (auto& c : clients) {
    std::vector<std::string> terms;
    for (int i = 0; i < 4; ++i) terms.push_back(f.TermOf(*NextFrame(f.hub, *c)));
    CHECK(terms == std::vector<std::string>{"1", "2", "3", "4"});
  }
}

TEST_CASE("watch hub: a client that stops reading is cut off; nobody else waits for it") {
  WatchHubOptions o;
  o.queue_limit = 3;
  Fixture f(o);
  auto reader = f.hub.Attach("reader").value();
  auto stalled = f.hub.Attach("stalled").value();
  std::vector<std::string> terms;
  terms.push_back(f.TermOf(*NextFrame(f.hub, *reader)));
  for (int i = 0; i < 10; ++i) {
    f.Publish();  // returns at once: it only appends to queues
    terms.push_back(f.TermOf(*NextFrame(f.hub, *reader)));
  }
  CHECK(terms.size() == 11);
  CHECK(terms.back() == "11");
  // The stalled one had 1 + 2 events queued when the third publication found its queue full.
  CHECK_FALSE(NextFrame(f.hub, *stalled).has_value());
  CHECK(f.hub.watchers() == 2);  // until its stream lets go of it
  stalled.reset();
  CHECK(f.hub.watchers() == 1);
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, 0) == 1;
}

TEST_CASE("watch hub: the signal fd wakes the event loop for a frame, and Take() clears it") {
  Fixture f;
  auto c = f.hub.Attach("a").value();
  const int fd = f.hub.SignalFd(*c);
  CHECK(NextFrame(f.hub, *c));  // the first event
  CHECK_FALSE(Readable(fd));
  f.Publish();
  CHECK(Readable(fd));
  WatchHub::Frames frames = f.hub.Take(*c, 10);
  CHECK(frames.frames.size() == 1);
  CHECK_FALSE(frames.ended);
  CHECK_FALSE(Readable(fd));
  // At most `max` frames at a time; the rest stay queued.
  for (int i = 0; i < 3; ++i) f.Publish();
  CHECK(f.hub.Take(*c, 2).frames.size() == 2);
  frames = f.hub.Take(*c, 2);
  REQUIRE(frames.frames.size() == 1);
  CHECK(f.TermOf(frames.frames[0]) == "5");
  f.hub.Close();
  CHECK(Readable(fd));
  CHECK(f.hub.Take(*c, 10).ended);
}

TEST_CASE("watch hub: Close ends every stream after its newest event; no new clients") {
  Fixture f;
  auto a = f.hub.Attach("a").value();
  auto b = f.hub.Attach("b").value();
  CHECK(NextFrame(f.hub, *b));  // b read its first event, a did not
  f.Publish();
  f.Publish();
  f.hub.Close();
  CHECK(f.TermOf(*NextFrame(f.hub, *a)) == "3");
  CHECK_FALSE(NextFrame(f.hub, *a));
  CHECK(f.TermOf(*NextFrame(f.hub, *b)) == "3");
  CHECK_FALSE(NextFrame(f.hub, *b));
  auto late = f.hub.Attach("late");
  REQUIRE_FALSE(late.ok());
  CHECK(late.status().message() == "shutting down");
  f.hub.Close();  // idempotent
}

}  // namespace
}  // namespace leasehold::localapi
