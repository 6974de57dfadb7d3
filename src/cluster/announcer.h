// Tells the cluster who leads, best effort, on a thread and an API connection of its own so that
// nothing here can delay a renew:
//
// * Events on the lock object, as client-go's elector records them: type Normal, reason
//   LeaderElection, "<identity> became leader" / "<identity> stopped leading", source component
//   leasehold. A multilock (configmapsleases, endpointsleases) gets one on each of its two
//   objects, as client-go's MultiLock does. A 403 is logged once and events stop.
// * --leader-label KEY: this pod's label KEY set to "leader" or "follower" with a JSON merge
//   patch, on every change of leadership and again every label_reassert (never per renew), and
//   "follower" at shutdown. A Service can select the leader with it. It is a routing hint that
//   lags the election by a request: never use it for mutual exclusion.
// * --deletion-cost COST: in the same patch, this pod's controller.kubernetes.io/pod-deletion-cost
//   annotation is COST while it leads and removed otherwise, so that a ReplicaSet scaling down
//   (a scale-down, a rollout's old pods) deletes the leader's pod last. Also only a hint: the
//   election never depends on it, and a failed patch costs nothing but the hint.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "election/lock.h"
#include "election/publisher.h"
#include "kube/api_client.h"

namespace leasehold::cluster {

struct KubeAnnouncerOptions {
  std::string identity;
  // Record Events. Off for --lock-type none, which has no object to put them on.
  bool events = true;
  // --leader-label; "" = no label. pod_name and pod_namespace then name this pod.
  std::string label_key;
  // --deletion-cost: the leader's pod-deletion-cost, written as the annotation's decimal
  // string; none = the annotation is left alone. pod_name and pod_namespace then name this pod.
  std::optional<int32_t> deletion_cost;
  std::string pod_name;
  std::string pod_namespace;
  // The label and the cost are written again this long after the last successful write, so
  // that a mark someone removed or changed comes back.
  Duration label_reassert = std::chrono::seconds(60);
  // The first retry after a failed write of them; it doubles up to label_reassert.
  Duration label_retry = std::chrono::seconds(5);
  // Deadline of each request.
  Duration request_timeout = std::chrono::seconds(5);
  // Events waiting to be sent; beyond it the oldest is dropped.
  size_t queue_limit = 32;
};

class KubeAnnouncer final : public election::PublicationSink {
 public:
  // `client` (its own connection, not the elector's) and `clock` must outlive this object.
  KubeAnnouncer(kube::ApiClient& client, const Clock& clock, KubeAnnouncerOptions options);
  ~KubeAnnouncer() override;  // Shutdown(0) if still running
  KubeAnnouncer(const KubeAnnouncer&) = delete;
  KubeAnnouncer& operator=(const KubeAnnouncer&) = delete;

  // PublicationSink: notes a change of leadership and wakes the thread; never blocks.
  void Publish(const election::Publication& p) override;
  bool HandsOutLeadership() const override { return false; }

  // Sends what is due now (queued events, a label write) and returns when more is due:
  // MonoTime::max() for "nothing until the next publication". The thread calls it in a loop;
  // tests call it directly with a FakeClock.
  MonoTime Step();

  // Starts the thread. Call once.
  void Start();
  // Sends what is still queued and labels the pod "follower", giving up after `budget`, then
  // joins the thread. Idempotent.
  void Shutdown(Duration budget);

 private:
  struct PendingEvent {
    election::LockDescription lock;
    std::string message;
    SysTime at;
  };
  Status SendEvent(const PendingEvent& e, MonoTime deadline);
  // The pod's marks for `role` (kLeader / kFollower): its label and its deletion cost, those
  // that are on, in one merge patch.
  Status PatchPod(const std::string& role, MonoTime deadline);
  bool MarksPod() const {
    return !options_.label_key.empty() || options_.deletion_cost.has_value();
  }
  // What PatchPod writes, for the log: "label K=V and annotation A=N".
  std::string MarksText(const std::string& role) const;
  bool DoneLocked(MonoTime now) const;
  void Loop();

  kube::ApiClient& client_;
  const Clock& clock_;
  const KubeAnnouncerOptions options_;

  mutable std::mutex mu_;  // guards the fields below
  std::condition_variable cv_;
  bool woken_ = false;
  bool seen_ = false;     // a publication arrived
  bool leading_ = false;  // as of the last publication
  std::deque<PendingEvent> events_;
  bool events_forbidden_ = false;
  bool warned_dropped_ = false;
  std::string desired_role_;  // "leader" / "follower"; "" before the first publication
  std::string applied_role_;  // as last written successfully; "" when unknown
  MonoTime marks_due_ = MonoTime::max();
  Duration marks_backoff_{};
  bool marks_failing_ = false;
  uint64_t event_seq_ = 0;
  bool stopping_ = false;
  MonoTime stop_deadline_ = MonoTime::max();

  std::mutex thread_mu_;
  std::thread thread_;
  bool shut_down_ = false;
};

}  // namespace leasehold::cluster
