#include "cluster/lock_watcher.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "base/text.h"
#include "base/wake.h"

namespace leasehold::cluster {
namespace {

// Below the apiserver's own limit, so that the normal end of a watch is the server closing it.
constexpr std::chrono::seconds kWatchTimeout(290);

}  // namespace

LockWatcher::LockWatcher(kube::Watcher& watcher, election::Runner& elector,
                         const election::Lock& lock, const Clock& clock, Duration retry,
                         RestartObserver on_restart)
    : watcher_(watcher),
      elector_(elector),
      lock_(lock),
      clock_(clock),
      retry_(retry),
      on_restart_(std::move(on_restart)) {}

void LockWatcher::Stop() {
  {
    std::lock_guard<std::mutex> l(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  watcher_.Cancel();
}

void LockWatcher::Pause(Duration d) {
  std::unique_lock<std::mutex> l(mu_);
  WaitUntil(cv_, l, clock_, clock_.MonotonicNow() + d, [this] { return stop_; });
}

Status LockWatcher::WatchOnce(const locks::LockObjectKind& kind, election::LockType type,
                              std::string& rv) {
  const election::LockDescription d = lock_.Describe();
  const kube::Request request =
      kube::WatchRequest(kind.Ref(d.name_space, d.name), rv, kWatchTimeout);
  Status failure;
  bool opened = false;  // this stream has delivered an event
  Status st =
      watcher_.Watch(request, clock_.MonotonicNow() + kWatchTimeout + std::chrono::seconds(10),
                     [&](const std::string& line) {
                       auto ev = kube::ParseWatchEvent(line);
                       if (!ev.ok()) {
                         failure = ev.status();
                         return false;
                       }
                       if (!ev->resource_version.empty()) rv = ev->resource_version;
                       if (!opened) {
                         // Once per stream: from here on a lost stream resumes from a version,
                         // which a compaction can expire (the 410 in Run).
                         opened = true;
                         spdlog::debug("watch on {} {}/{}: open at resourceVersion {}",
                                       election::LockTypeName(type), d.name_space, d.name,
                                       rv.empty() ? std::string("(none)") : EscapeForLog(rv));
                       }
                       if (ev->type == "BOOKMARK") return true;
                       election::LockObservation obs;
                       if (ev->type == "DELETED") {
                         // Gone: a free lock, which the elector re-reads (404) and creates.
                         obs.raw = "deleted/" + ev->resource_version;
                       } else {
                         auto decoded = kind.observe(ev->object);
                         if (!decoded.ok()) {
                           spdlog::warn("watch on {} {}/{}: cannot read the object: {}",
                                        election::LockTypeName(type), d.name_space, d.name,
                                        decoded.status().ToString());
                           return true;
                         }
                         obs = std::move(decoded).value();
                       }
                       elector_.SetWatchActive(true);
                       elector_.Observe(obs);
                       // `auto` may switch to a multilock, which cannot be watched as one object.
                       return lock_.Describe().type == type;
                     });
  if (!failure.ok()) return failure;
  return st;
}

void LockWatcher::Run() {
  std::string rv;
  std::optional<election::LockType> type;  // the type last watched; none before the first watch
  int failures = 0;
  while (true) {
    {
      std::lock_guard<std::mutex> l(mu_);
      if (stop_) break;
    }
    const election::LockDescription d = lock_.Describe();
    const locks::LockObjectKind* kind = locks::SingleLockObject(d.type);
    if (kind == nullptr) {
      elector_.SetWatchActive(false);
      Pause(retry_);
      continue;
    }
    if (d.type != type) {
      if (type && on_restart_) on_restart_(kRestartLockType);
      type = d.type;
      rv.clear();
    }
    Status st = WatchOnce(*kind, d.type, rv);
    if (st.ok()) {
      // The server ended the stream (timeoutSeconds): resume from the last version seen. The
      // watch stays "active"; nothing was missed.
      failures = 0;
      continue;
    }
    elector_.SetWatchActive(false);
    if (st.code() == Code::kGone) {
      // "too old resource version" (after an apiserver restart, a compaction, a long pause of
      // this process): start over from the current state, at once. Said at info: a follower
      // whose view lagged shows here whether this is why.
      spdlog::info(
          "watch on {} {}/{}: resourceVersion {} is too old for the API server (410 Gone); "
          "watching again from the lock's current state",
          election::LockTypeName(d.type), d.name_space, d.name,
          rv.empty() ? std::string("(none)") : EscapeForLog(rv));
      if (on_restart_) on_restart_(kRestartExpired);
      rv.clear();
      continue;
    }
    if (st.code() == Code::kForbidden && !warned_forbidden_) {
      warned_forbidden_ = true;
      spdlog::warn(
          "cannot watch {} {}/{}; polling every retry-period instead (add the `watch` verb on "
          "the lock to the Role, see deploy/rbac): {}",
          election::LockTypeName(d.type), d.name_space, d.name, st.ToString());
    } else {
      spdlog::debug("watch on {} {}/{} ended: {}", election::LockTypeName(d.type), d.name_space,
                    d.name, st.ToString());
    }
    ++failures;
    Pause(retry_ * (1 << std::min(failures - 1, 4)));
  }
  elector_.SetWatchActive(false);
}

}  // namespace leasehold::cluster
