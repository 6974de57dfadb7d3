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
  label_backoff_ = options_.label_retry;
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
    desired_label_ = leading ? kLeader : kFollower;
    label_due_ = MonoTime::min();  // now
    label_backoff_ = options_.label_retry;
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

Status KubeAnnouncer::PatchLabel(const std::string& value, MonoTime deadline) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("metadata");
  w.StartObject();
  w.Key("labels");
  w.StartObject();
  Str(w, options_.label_key);
  Str(w, value);
  w.EndObject();
  w.EndObject();
  w.EndObject();
  const kube::ObjectRef pod{"", "v1", "pods", options_.pod_namespace, options_.pod_name};
  kube::Request req =
      kube::ObjectRequest("PATCH", pod, std::string(buf.GetString(), buf.GetSize()));
  req.content_type = "application/merge-patch+json";
  auto r = client_.Do(req, deadline);
  return r.ok() ? Status::Ok() : r.status();
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
  std::string label;
  {
    std::lock_guard<std::mutex> l(mu_);
    if (!options_.label_key.empty() && !desired_label_.empty() && now >= label_due_ && now < stop) {
      label = desired_label_;
    }
  }
  if (!label.empty()) {
    Status st = PatchLabel(label, deadline_from(now));
    now = clock_.MonotonicNow();
    std::lock_guard<std::mutex> l(mu_);
    const std::string pod = options_.pod_namespace + "/" + options_.pod_name;
    if (st.ok()) {
      if (label_failing_) spdlog::info("leader label: pod {} labelled again", pod);
      spdlog::debug("leader label: pod {} {}={}", pod, options_.label_key, label);
      label_failing_ = false;
      applied_label_ = label;
      label_backoff_ = options_.label_retry;
      // A publication in between asked for another value: write that one at once.
      label_due_ = desired_label_ == label ? now + options_.label_reassert : now;
    } else {
      if (!label_failing_) {
        const bool rbac = st.code() == Code::kForbidden;  // a 401 is the credentials
        spdlog::warn("leader label: cannot set {}={} on pod {}: {}{}", options_.label_key, label,
                     pod, st.ToString(),
                     rbac ? " -- the agent needs get and patch on pods (see "
                            "deploy/rbac/leader-label)"
                          : "");
      } else {
        spdlog::debug("leader label: still failing: {}", st.ToString());
      }
      label_failing_ = true;
      applied_label_.clear();
      label_due_ = now + label_backoff_;
      label_backoff_ = std::min<Duration>(label_backoff_ * 2, options_.label_reassert);
    }
  }

  std::lock_guard<std::mutex> l(mu_);
  if (!events_.empty() && !events_forbidden_) return now;
  return options_.label_key.empty() || desired_label_.empty() ? MonoTime::max() : label_due_;
}

bool KubeAnnouncer::DoneLocked(MonoTime now) const {
  if (!stopping_) return false;
  if (now >= stop_deadline_) return true;
  const bool events_left = !events_.empty() && !events_forbidden_;
  const bool label_left =
      !options_.label_key.empty() && !desired_label_.empty() && applied_label_ != desired_label_;
  return !events_left && !label_left;
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
    if (!options_.label_key.empty() && !desired_label_.empty()) {
      // This pod no longer takes part, whatever it was.
      if (desired_label_ != kFollower || applied_label_ != kFollower) label_due_ = MonoTime::min();
      desired_label_ = kFollower;
    }
    woken_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace leasehold::cluster
