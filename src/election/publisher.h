// Pushes the election's state to everyone who is told rather than asks: watch-stream clients,
// the status file, the Kubernetes Events and the pod label, the renew-latency histogram.
//
// The elector calls Listener() after every attempt and phase change, from its own thread and
// from the signal, HTTP and watch threads. The listener only notes that something may have
// changed and returns; the publisher's own thread then takes a fresh snapshot, drops it when
// nothing a client cares about changed, and hands it to every sink in order. While this replica
// leads, that thread also wakes exactly at the snapshot's valid_until: a leader whose claim
// simply runs out (no renew succeeded, no API call returned, the listener never called) is
// published as stepped down at that instant.
//
// A publication is "new" when any of these changed: whether the lock was read yet, the holder,
// isLeader, the term, the lock type, or (while leading) validUntil, which moves on every renew.
// A follower does not publish the leader's renewals.
//
// Typed snapshots only: no JSON, no file, no socket here. The sinks render what they hand on
// (localapi renders the /leader document through src/contract when it writes a watch event or
// the status file; the announcer reads isLeader and the lock).
//
// Why no consumer is told "yes" beyond validUntil, or after this replica stopped leading
// (the publication half of "The leadership invariant" in elector.cpp):
//   (a) a publication's snapshot is taken from the elector (Take, a promise, whenever a sink
//       hands leadership on), so its "yes" was judged from the clock at that instant, and it
//       carries that claim's end, valid_until, which safe-mode shutdown waits out;
//   (b) a sink never re-judges a snapshot from its own state: whoever renders it checks the
//       deadline against the clock at the moment of rendering (Snapshot::LeaderAt: the /leader
//       document says isLeader only while now < valid_until), and what it writes carries
//       validUntil as an absolute instant, which the reader checks against its own clock when it
//       acts (the gate; a status-file reader, as status_file.h asks): a stalled sink, a queued
//       event or a file read late can only carry a "yes" that has already run out, never extend
//       one;
//   (c) this thread wakes at valid_until and publishes the "no" (or the renewed "yes"), and
//       Stop() publishes the final state after Elector::Run() returned ("not leader").
// None of this waits on a sink: the listener takes no lock a sink can hold (see Listener()), so a
// stalled consumer delays publications, never a renew (test/election/publisher_test.cpp).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "election/elector.h"

namespace leasehold::election {

struct Publication {
  uint64_t sequence = 0;  // 1, 2, ... in the order of publication
  // Taken as a promise (Elector::Take) whenever a sink hands leadership on, else peeked. Its
  // "yes" ends at snapshot.valid_until: judge it with Snapshot::LeaderAt when handing it on.
  Snapshot snapshot;
  // The holder, isLeader, the term or "observed" differ from the previous publication (always
  // true for the first). False when only validUntil moved (a renew) or the lock type resolved.
  bool leadership_changed = true;
};

class PublicationSink {
 public:
  virtual ~PublicationSink() = default;
  // Called on the publisher's thread, one publication at a time, in sequence order. Should not
  // block on the network (queue such work for a thread of its own): a sink that stalls delays
  // every later sink and publication, though never the elector.
  virtual void Publish(const Publication& p) = 0;
  // True while the sink tells someone "you lead" (connected watch clients, the status file):
  // the publisher then takes its snapshot as a promise, which safe-mode shutdown waits out.
  virtual bool HandsOutLeadership() const = 0;
};

// Where the election's writes reach the metrics (localapi::Metrics). Called on the thread that
// called the listener, mostly the elector's between a renew's answer and its next step: it must
// never block, nor take a lock that anything else holds for long; atomics only. (The slow paths
// reach the metrics through Gauges, which the elector stores as atomics.)
class WriteHook {
 public:
  virtual ~WriteHook() = default;
  // One successful acquire or renew write took `latency` from sending to its answer.
  virtual void OnWrite(Duration latency) = 0;
};

class Publisher {
 public:
  // `source` and `clock` must outlive the publisher.
  Publisher(SnapshotSource source, const Clock& clock);
  ~Publisher();  // Stop()s
  Publisher(const Publisher&) = delete;
  Publisher& operator=(const Publisher&) = delete;

  // Before Start() (or the first Poll()). The sink must outlive the publisher.
  void AddSink(PublicationSink* sink);
  // Told the latency of every successful acquire or renew write the listener learns of
  // (Snapshot::writes_total moved on); for the renew-duration histogram. Before Start(); `hook`
  // must outlive the publisher.
  void SetWriteHook(WriteHook* hook);

  // For Elector::SetListener: hands a new write's latency to the hook and wakes the publisher's
  // thread. Returns at once, whatever the sinks do: it takes only the wake-up lock, which the
  // publisher's thread never holds while it takes a snapshot or calls a sink. Thread-safe.
  SnapshotListener Listener();

  // The clock publications are judged by: a sink that renders one counts validForMs from it.
  const Clock& clock() const { return clock_; }

  // Takes a snapshot and publishes it if it is new. Returns the instant at which the state may
  // change without anyone calling the listener (the valid_until of a published "yes"), or
  // MonoTime::max(). The thread calls it in a loop; tests call it directly with a FakeClock.
  MonoTime Poll();

  // Runs `attach` with the current state, as a fresh publication taken as a promise, serialized
  // with Poll(): whatever `attach` registers receives every later publication and no earlier
  // one. For a watch client's first event.
  void Attach(const std::function<void(const Publication& current)>& attach);

  // Starts the thread that calls Poll() whenever the listener was called or a published "yes"
  // ran out. Call once.
  void Start();
  // Joins the thread and, if it was started, publishes a last time (the final state: after
  // Elector::Run() returned, "not leader"). Idempotent.
  void Stop();

  // The last publication; sequence 0 before the first.
  Publication Last() const;

 private:
  struct Key {
    bool observed = false;
    std::string holder;
    bool is_leader = false;
    int64_t term = 0;
    MonoTime valid_until{};
    LockType lock_type = LockType::kAuto;
    bool operator==(const Key& o) const;
  };
  static Key KeyOf(const Snapshot& s);
  MonoTime PollLocked(Reading reading);
  void OnSnapshot(const Snapshot& s);
  void Loop();

  const SnapshotSource source_;
  const Clock& clock_;
  std::vector<PublicationSink*> sinks_;
  WriteHook* write_hook_ = nullptr;

  // Serializes Poll() and Attach(); guards the fields below.
  mutable std::mutex publish_mu_;
  bool published_ = false;
  Key last_key_;
  Publication last_;

  // The listener's side; guards the fields below.
  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool woken_ = false;
  bool stop_ = false;
  uint64_t writes_seen_ = 0;

  std::mutex thread_mu_;  // Start/Stop
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace leasehold::election
