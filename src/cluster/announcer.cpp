#include "cluster/announcer.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "base/rfc3339.h"
#include "base/wake.h"
#include "kube/object_ref.h"
#include "locks/lock_type.h"

namespace leasehold::cluster {
namespace {

constexpr const char* kLeader = "leader";
constexpr const char* kFollower = "follower";
constexpr const char* kComponent = "leasehold";
// The ReplicaSet controller deletes the pods of lowest cost first (an int32 as a string).
constexpr const char* kDeletionCost = "controller.kubernetes.io/pod-deletion-cost";
// The apiserver's limit on reportingInstance.
constexpr size_t kMaxReportingInstance = 128;

template <typename W>
void Str(W& w, const std::string& s) {
  w.String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
}

}  // namespace

KubeAnnouncer::KubeAnnouncer(kube::ApiClient& client, const Clock& clock,
                             KubeAnnouncerOptions options)
    : client_(client), clock_(clock), options_(std::move(options)) {
  marks_backoff_ = options_.label_retry;
}

KubeAnnouncer::~KubeAnnouncer() { Shutdown(Duration::zero()); }

void KubeAnnouncer::Publish(const election::Publication& p) {
  const election::Snapshot& s = p.snapshot;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (stopping_) return;
    const bool leading = s.is_leader;
    if (seen_ && leading == leading_) return;
    if (options_.events && !events_forbidden_ && (leading || seen_)) {
      if (events_.size() >= options_.queue_limit) {
        events_.pop_front();
        if (!warned_dropped_) {
          warned_dropped_ = true;
          spdlog::warn("events: the API server is not keeping up; dropping the oldest event");
        }
      }
      events_.push_back({s.lock,
                         options_.identity + (leading ? " became leader" : " stopped leading"),
                         clock_.SystemNow()});
    }
    seen_ = true;
    leading_ = leading;
    desired_role_ = leading ? kLeader : kFollower;
    marks_due_ = MonoTime::min();  // now
    marks_backoff_ = options_.label_retry;
    woken_ = true;
  }
  cv_.notify_all();
}

Status KubeAnnouncer::SendEvent(const PendingEvent& e, MonoTime deadline) {
  const std::string ts = FormatRfc3339Seconds(e.at);
  const auto unix_nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(e.at.time_since_epoch()).count();
  Status result;
  for (const locks::LockObjectKind* kind : locks::LockObjects(e.lock.type)) {
    // client-go's name: "<object>.<unix nanos in hex>"; the sequence keeps the two events of a
    // multilock apart. A lock name near the 253-character limit gets a generated name instead.
    char suffix[32];
    std::snprintf(suffix, sizeof suffix, ".%llx",
                  static_cast<unsigned long long>(unix_nanos) + event_seq_++);
    const bool named = e.lock.name.size() + std::char_traits<char>::length(suffix) <= 253;
    rapidjson::StringBuffer buf;
    rapidjson::Writer<rapidjson::StringBuffer> w(buf);
    w.StartObject();
    w.Key("apiVersion");
    w.String("v1");
    w.Key("kind");
    w.String("Event");
    w.Key("metadata");
    w.StartObject();
    if (named) {
      w.Key("name");
      Str(w, e.lock.name + suffix);
    } else {
      w.Key("generateName");
      Str(w, e.lock.name.substr(0, 240) + ".");
    }
    w.Key("namespace");
    Str(w, e.lock.name_space);
    w.EndObject();
    w.Key("involvedObject");
    w.StartObject();
    w.Key("apiVersion");
    Str(w, kind->ApiVersion());
    w.Key("kind");
    Str(w, std::string(kind->kind));
    w.Key("name");
    Str(w, e.lock.name);
    w.Key("namespace");
    Str(w, e.lock.name_space);
    w.EndObject();
    w.Key("reason");
    w.String("LeaderElection");
    w.Key("message");
    Str(w, e.message);
    w.Key("type");
    w.String("Normal");
    w.Key("source");
    w.StartObject();
    w.Key("component");
    w.String(kComponent);
    w.EndObject();
    w.Key("firstTimestamp");
    Str(w, ts);
    w.Key("lastTimestamp");
    Str(w, ts);
    w.Key("count");
    w.Int(1);
    w.Key("reportingComponent");
    w.String(kComponent);
    w.Key("reportingInstance");
    Str(w, options_.identity.substr(0, kMaxReportingInstance));
    w.EndObject();

    const kube::ObjectRef events{"", "v1", "events", e.lock.name_space, ""};
    auto r = client_.Do(
        kube::ObjectRequest("POST", events, std::string(buf.GetString(), buf.GetSize())), deadline);
    if (!r.ok()) {
      result = r.status();
      if (r.code() == Code::kForbidden || r.code() == Code::kUnauthorized) break;
    }
  }
  return result;
}

Status KubeAnnouncer::PatchPod(const std::string& role, MonoTime deadline) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  if (!options_.label_key.empty()) {
    w.Key("labels");
    w.StartObject();
    Str(w, options_.label_key);
    Str(w, role);
    w.EndObject();
  }
  if (options_.deletion_cost) {
    w.Key("annotations");
    w.StartObject();
    w.Key(kDeletionCost);
    if (role == kLeader) {
      Str(w, std::to_string(*options_.deletion_cost));
    } else {
      w.Null();  // a merge patch's null removes the key
    }
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  const kube::ObjectRef pod{"", "v1", "pods", options_.pod_namespace, options_.pod_name};
  kube::Request req =
      kube::ObjectRequest("PATCH", pod, std::string(buf.GetString(), buf.GetSize()));
  req.content_type = "application/merge-patch+json";
  auto r = client_.Do(req, deadline);
  return r.ok() ? Status::Ok() : r.status();
}

std::string KubeAnnouncer::MarksText(const std::string& role) const {
  std::string text;
  if (!options_.label_key.empty()) text = "label " + options_.label_key + "=" + role;
  if (options_.deletion_cost) {
    if (!text.empty()) text += " and ";
    text += std::string("annotation ") + kDeletionCost +
            (role == kLeader ? "=" + std::to_string(*options_.deletion_cost) : " removed");
  }
  return text;
}

MonoTime KubeAnnouncer::Step() {
  std::deque<PendingEvent> events;
  bool send_events;
  MonoTime stop;  // requests end by then; MonoTime::max() until Shutdown()
  {
    std::lock_guard<std::mutex> l(mu_);
    events.swap(events_);
    send_events = !events_forbidden_;
    stop = stop_deadline_;
  }
  // Read again for every request: Shutdown() may set the budget while this step runs, and the
  // request it wants (the label back to follower) must end by that budget.
  const auto deadline_from = [&](MonoTime now) {
    std::lock_guard<std::mutex> l(mu_);
    return std::min(now + options_.request_timeout, stop_deadline_);
  };
  for (const PendingEvent& e : events) {
    const MonoTime now = clock_.MonotonicNow();
    if (!send_events || now >= stop) break;
    Status st = SendEvent(e, deadline_from(now));
    if (st.code() == Code::kForbidden || st.code() == Code::kUnauthorized) {
      // A 401 is the credentials (its message says so), not the Role.
      spdlog::warn(
          "events: the API server refuses to record Events ({}); no more events will be "
          "sent.{}",
          st.ToString(),
          st.code() == Code::kForbidden ? " Grant create on events (see the Role in deploy/rbac)"
                                        : "");
      std::lock_guard<std::mutex> l(mu_);
      events_forbidden_ = true;
      events_.clear();
      send_events = false;
    } else if (!st.ok()) {
      spdlog::warn("events: cannot record \"{}\": {}", e.message, st.ToString());
    }
  }

  MonoTime now = clock_.MonotonicNow();
  std::string role;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (MarksPod() && !desired_role_.empty() && now >= marks_due_ && now < stop) {
      role = desired_role_;
    }
  }
  if (!role.empty()) {
    Status st = PatchPod(role, deadline_from(now));
    now = clock_.MonotonicNow();
    std::lock_guard<std::mutex> l(mu_);
    const std::string pod = options_.pod_namespace + "/" + options_.pod_name;
    if (st.ok()) {
      if (marks_failing_) spdlog::info("pod {}: {} written again", pod, MarksText(role));
      spdlog::debug("pod {}: {}", pod, MarksText(role));
      marks_failing_ = false;
      applied_role_ = role;
      marks_backoff_ = options_.label_retry;
      // A publication in between asked for another value: write that one at once.
      marks_due_ = desired_role_ == role ? now + options_.label_reassert : now;
    } else {
      if (!marks_failing_) {
        const bool rbac = st.code() == Code::kForbidden;  // a 401 is the credentials
        spdlog::warn("pod {}: cannot write {}: {}{}", pod, MarksText(role), st.ToString(),
                     rbac ? " -- the agent needs get and patch on pods (see "
                            "deploy/rbac/leader-label)"
                          : "");
      } else {
        spdlog::debug("pod {}: still failing: {}", pod, st.ToString());
      }
      marks_failing_ = true;
      applied_role_.clear();
      marks_due_ = now + marks_backoff_;
      marks_backoff_ = std::min<Duration>(marks_backoff_ * 2, options_.label_reassert);
    }
  }

  std::lock_guard<std::mutex> l(mu_);
  if (!events_.empty() && !events_forbidden_) return now;
  return !MarksPod() || desired_role_.empty() ? MonoTime::max() : marks_due_;
}

bool KubeAnnouncer::DoneLocked(MonoTime now) const {
  if (!stopping_) return false;
  if (now >= stop_deadline_) return true;
  const bool events_left = !events_.empty() && !events_forbidden_;
  const bool marks_left = MarksPod() && !desired_role_.empty() && applied_role_ != desired_role_;
  return !events_left && !marks_left;
}

void KubeAnnouncer::Start() {
  std::lock_guard<std::mutex> l(thread_mu_);
  if (thread_.joinable() || shut_down_) return;
  thread_ = std::thread([this] { Loop(); });
}

void KubeAnnouncer::Loop() {
  while (true) {
    const MonoTime next = Step();
    std::unique_lock<std::mutex> l(mu_);
    const MonoTime now = clock_.MonotonicNow();
    if (DoneLocked(now)) return;
    // Until a publication or Shutdown() wakes it, or the next work or the stop budget is due.
    WaitUntil(cv_, l, clock_, std::min(next, stop_deadline_), [this] { return woken_; });
    woken_ = false;
  }
}

void KubeAnnouncer::Shutdown(Duration budget) {
  std::lock_guard<std::mutex> t(thread_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  {
    std::lock_guard<std::mutex> l(mu_);
    stopping_ = true;
    stop_deadline_ = clock_.MonotonicNow() + budget;
    if (MarksPod() && !desired_role_.empty()) {
      // This pod no longer takes part, whatever it was.
      if (desired_role_ != kFollower || applied_role_ != kFollower) marks_due_ = MonoTime::min();
      desired_role_ = kFollower;
    }
    woken_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace leasehold::cluster
