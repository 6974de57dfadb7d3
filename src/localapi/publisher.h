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
#include "localapi/handler.h"

namespace leasehold::localapi {

struct Publication {
  uint64_t sequence = 0;  // 1, 2, ... in the order of publication
  // Taken as a promise (Elector::Take) whenever a sink hands leadership on, else peeked.
  election::Snapshot snapshot;
  // The /leader body for `snapshot` on one line, without the trailing newline; validForMs is
  // counted from the moment of publication.
  std::string json;
  // The holder, isLeader, the term or "observed" differ from the previous publication (always
  // true for the first). False when only validUntil moved (a renew) or the lock type resolved.
  bool leadership_changed = true;
};

class PublicationSink {
 public:
  virtual ~PublicationSink() = default;
  // Called on the publisher's thread, one publication at a time, in sequence order. Must not
  // block on the network: queue such work for a thread of its own.
  virtual void Publish(const Publication& p) = 0;
  // True while the sink tells someone "you lead" (connected watch clients, the status file):
  // the publisher then takes its snapshot as a promise, which safe-mode shutdown waits out.
  virtual bool HandsOutLeadership() const = 0;
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
  // Called with the latency of every successful acquire or renew write the listener learns of
  // (Snapshot::writes_total moved on); for the renew-duration histogram. Before Start().
  void SetWriteObserver(std::function<void(Duration latency)> observer);

  // For Elector::SetListener: records a new write's latency and wakes the publisher's thread.
  // Returns at once; thread-safe.
  election::SnapshotListener Listener();

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
    election::LockType lock_type = election::LockType::kAuto;
    bool operator==(const Key& o) const;
  };
  static Key KeyOf(const election::Snapshot& s);
  MonoTime PollLocked(bool force_promise);
  void OnSnapshot(const election::Snapshot& s);
  void Loop();

  const SnapshotSource source_;
  const Clock& clock_;
  std::vector<PublicationSink*> sinks_;
  std::function<void(Duration)> write_observer_;

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

}  // namespace leasehold::localapi
