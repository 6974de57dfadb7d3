#include "election/publisher.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "base/wake.h"

namespace leasehold::election {

bool Publisher::Key::operator==(const Key& o) const {
  return observed == o.observed && holder == o.holder && is_leader == o.is_leader &&
         term == o.term && valid_until == o.valid_until && lock_type == o.lock_type;
}

Publisher::Key Publisher::KeyOf(const Snapshot& s) {
  Key k;
  k.observed = s.observed;
  k.holder = s.record.holder_identity;
  k.is_leader = s.is_leader;
  k.term = s.record.leader_transitions;
  // Only a leader's validUntil is news; a follower's snapshot has none.
  if (s.is_leader) k.valid_until = s.valid_until;
  k.lock_type = s.lock.type;
  return k;
}

Publisher::Publisher(SnapshotSource source, const Clock& clock)
    : source_(std::move(source)), clock_(clock) {}

Publisher::~Publisher() { Stop(); }

void Publisher::AddSink(PublicationSink* sink) {
  std::lock_guard<std::mutex> l(publish_mu_);
  sinks_.push_back(sink);
}

void Publisher::SetWriteHook(WriteHook* hook) {
  std::lock_guard<std::mutex> l(publish_mu_);
  write_hook_ = hook;
}

SnapshotListener Publisher::Listener() {
  return [this](const Snapshot& s) { OnSnapshot(s); };
}

void Publisher::OnSnapshot(const Snapshot& s) {
  // On the elector's thread, in the middle of its loop: this must return at once whatever the
  // sinks do. It takes wake_mu_ only, which Loop() never holds while Poll() runs the sinks (a
  // stalled sink holds publish_mu_, never this), and the hook is atomics only.
  // The elector calls this from several threads, so snapshots may arrive out of order: only a
  // write count above every one seen so far is a new write. A write whose snapshot is overtaken
  // by a later one before it arrives goes unrecorded; that takes two writes within one call.
  bool new_write = false;
  {
    std::lock_guard<std::mutex> l(wake_mu_);
    if (s.writes_total > writes_seen_) {
      writes_seen_ = s.writes_total;
      new_write = true;
    }
    woken_ = true;
  }
  wake_cv_.notify_one();
  // Set before Start() and never changed after, so reading it here needs no lock.
  if (new_write && write_hook_ != nullptr) write_hook_->OnWrite(s.last_write_latency);
}

MonoTime Publisher::Poll() {
  std::lock_guard<std::mutex> l(publish_mu_);
  return PollLocked(Reading::kPeek);
}

MonoTime Publisher::PollLocked(Reading reading) {
  for (const PublicationSink* sink : sinks_) {
    if (sink->HandsOutLeadership()) reading = Reading::kPromise;
  }
  Snapshot s = source_(reading);
  const MonoTime next = s.is_leader ? s.valid_until : MonoTime::max();
  Key key = KeyOf(s);
  if (published_ && key == last_key_) return next;

  Publication p;
  p.sequence = last_.sequence + 1;
  p.leadership_changed = !published_ || key.observed != last_key_.observed ||
                         key.holder != last_key_.holder || key.is_leader != last_key_.is_leader ||
                         key.term != last_key_.term;
  p.snapshot = std::move(s);
  if (p.leadership_changed) {
    spdlog::debug("publishing #{}: holder {}, isLeader {}, term {}", p.sequence, key.holder,
                  key.is_leader, key.term);
  }
  for (PublicationSink* sink : sinks_) sink->Publish(p);
  published_ = true;
  last_key_ = std::move(key);
  last_ = std::move(p);
  return next;
}

void Publisher::Attach(const std::function<void(const Publication& current)>& attach) {
  std::lock_guard<std::mutex> l(publish_mu_);
  // Publish whatever is new first, as a promise: the caller is about to hand it out.
  PollLocked(Reading::kPromise);
  // The last publication: the same state (so the same sequence); whoever renders it counts
  // validForMs from the moment of rendering, not from when it was first published.
  attach(last_);
}

Publication Publisher::Last() const {
  std::lock_guard<std::mutex> l(publish_mu_);
  return last_;
}

void Publisher::Start() {
  std::lock_guard<std::mutex> l(thread_mu_);
  if (thread_.joinable() || stopped_) return;
  thread_ = std::thread([this] { Loop(); });
}

void Publisher::Loop() {
  while (true) {
    const MonoTime next = Poll();
    std::unique_lock<std::mutex> l(wake_mu_);
    // Until the listener calls, Stop(), or the published "yes" runs out (next; max() while no
    // "yes" is published).
    WaitUntil(wake_cv_, l, clock_, next, [this] { return woken_ || stop_; });
    if (stop_) return;
    woken_ = false;
  }
}

void Publisher::Stop() {
  std::lock_guard<std::mutex> l(thread_mu_);
  if (stopped_) return;
  stopped_ = true;
  {
    std::lock_guard<std::mutex> w(wake_mu_);
    stop_ = true;
  }
  wake_cv_.notify_all();
  if (!thread_.joinable()) return;  // never started: tests that drive Poll() themselves
  thread_.join();
  Poll();
}

}  // namespace leasehold::election
