// Observe mode end to end in-process: the real libcurl client, the Lease lock, the Observer's
// loop and the lock watch against the fake API server over TLS, while another writer (standing
// in for a controller-runtime manager) holds and renews the Lease. Real time passes: timings are
// short, and every wait is a bounded poll for a condition.
#include <doctest/doctest.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "base/rfc3339.h"
#include "cluster/lock_watcher.h"
#include "election/observer.h"
#include "fakes/fake_apiserver.h"
#include "kube/curl_api_client.h"
#include "kube/watch.h"
#include "locks/factory.h"

namespace leasehold {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;

const auto kLoggerReady = spdlog::default_logger();

bool WaitFor(const std::function<bool()>& pred, Duration timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

std::string Lease(const std::string& holder, SysTime renewed, int transitions) {
  return R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"lock",)"
         R"("namespace":"ns"},"spec":{"holderIdentity":")" +
         holder +
         R"(","leaseDurationSeconds":4,"acquireTime":"2026-01-02T03:04:05.000000Z",)"
         R"("renewTime":")" +
         FormatMicroTime(renewed) + R"(","leaseTransitions":)" + std::to_string(transitions) + "}}";
}

// A foreign elector: writes `holder` into the Lease every `period` until stopped.
class Renewer {
 public:
  Renewer(FakeApiServer& server, std::string holder, int transitions, Duration period)
      : thread_([&server, holder, transitions, period, this] {
          while (!stop_) {
            server.Put("leases", "ns", "lock",
                       Lease(holder, std::chrono::system_clock::now(), transitions));
            std::this_thread::sleep_for(period);
          }
        }) {}
  ~Renewer() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One observing agent: its client, Lease lock, Observer loop and lock watch, each on a thread.
class ObservingAgent {
 public:
  ObservingAgent(FakeApiServer& server, const std::string& pod) {
    kube::ClientOptions co;
    co.request_timeout = 1s;
    client_ = std::move(kube::NewCurlApiClient(server.ClientConfig(), co, clock_)).value();
    watcher_ = std::move(kube::NewCurlWatcher(server.ClientConfig(), co, clock_)).value();
    locks::LockOptions lo;
    lo.type = locks::LockType::kLeases;
    lo.name_space = "ns";
    lo.name = "lock";
    lo.identity = pod;
    lock_ = std::move(locks::NewLock(lo, *client_, clock_)).value();
    election::ObserverConfig oc;
    oc.match = {election::MatchRule::kPod, pod};
    oc.identity = pod;
    oc.lease_duration = 4s;
    oc.renew_deadline = 1500ms;  // the span: min(1.5s, 4s - kObserveMargin)
    oc.retry_period = 200ms;
    observer_ = std::make_unique<election::Observer>(oc, *lock_, clock_);
    lock_watcher_ =
        std::make_unique<cluster::LockWatcher>(*watcher_, *observer_, *lock_, clock_, 200ms);
    watch_thread_ = std::thread([this] { lock_watcher_->Run(); });
    thread_ = std::thread([this] { observer_->Run(); });
  }
  ~ObservingAgent() {
    observer_->Stop();
    thread_.join();
    lock_watcher_->Stop();
    watch_thread_.join();
  }
  election::Snapshot Take() const { return observer_->Take(); }

 private:
  RealClock clock_;
  std::unique_ptr<kube::ApiClient> client_;
  std::unique_ptr<kube::Watcher> watcher_;
  std::unique_ptr<election::Lock> lock_;
  std::unique_ptr<election::Observer> observer_;
  std::unique_ptr<cluster::LockWatcher> lock_watcher_;
  std::thread watch_thread_;
  std::thread thread_;
};

TEST_CASE("observe mode: reads and watches only, and follows a foreign holder") {
  FakeApiServer server;
  auto renewer = std::make_unique<Renewer>(server, "pod-a_6b0e", 1, 300ms);
  REQUIRE(WaitFor([&] { return server.Get("leases", "ns", "lock").has_value(); }, 2s));
  ObservingAgent a(server, "pod-a");
  ObservingAgent b(server, "pod-b");

  // The holder's renewals change the record's whole second about once a second: pod-a's yes
  // starts at the first change after its first Get.
  CHECK(WaitFor([&] { return a.Take().is_leader; }, 5s));
  CHECK_FALSE(b.Take().is_leader);
  CHECK(b.Take().record.holder_identity == "pod-a_6b0e");

  SUBCASE("a takeover reaches both views by the watch, and ends pod-a's yes at once") {
    renewer->Stop();
    // The last renewal was read; its yes still runs (1.5s from the Get before it).
    REQUIRE(WaitFor([&] { return a.Take().is_leader; }, 1s));
    const auto put = std::chrono::steady_clock::now();
    server.Put("leases", "ns", "lock", Lease("pod-b_77c1", std::chrono::system_clock::now(), 2));
    CHECK(WaitFor([&] { return !a.Take().is_leader; }, 1s));
    const auto seen = std::chrono::steady_clock::now() - put;
    MESSAGE("pod-a's yes ended ",
            std::chrono::duration_cast<std::chrono::milliseconds>(seen).count(),
            " ms after the takeover was written");
    CHECK(WaitFor([&] { return a.Take().record.holder_identity == "pod-b_77c1"; }, 1s));
    // pod-b's yes needs a version written after one of its Gets: the takeover's next renewal.
    Renewer b_renews(server, "pod-b_77c1", 2, 300ms);
    CHECK(WaitFor([&] { return b.Take().is_leader; }, 5s));
    CHECK_FALSE(a.Take().is_leader);
  }
  SUBCASE("a holder that stops renewing: the yes runs out within the span") {
    renewer->Stop();
    const auto stopped = std::chrono::steady_clock::now();
    CHECK(WaitFor([&] { return !a.Take().is_leader; }, 3s));
    const auto lasted = std::chrono::steady_clock::now() - stopped;
    // At most renew-deadline after the Get before the last change, which preceded the stop.
    CHECK(lasted <= 1500ms + 200ms);
  }
  // Never a write: Gets and watches only (a watch is a GET with watch=true).
  for (const char* method : {"POST", "PUT", "PATCH", "DELETE"}) {
    CAPTURE(method);
    size_t writes = 0;
    for (const testing::RecordedRequest& r : server.Requests()) {
      // The renewers' writes do not go through HTTP (FakeApiServer::Put): every request here is
      // the observers'.
      if (r.method == method) ++writes;
    }
    CHECK(writes == 0);
  }
  CHECK(server.CountRequests("GET", "/apis/coordination.k8s.io/v1/namespaces/ns/leases") > 0);
}

}  // namespace
}  // namespace leasehold
