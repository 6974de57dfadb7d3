// The local API's guards, pinned over route x listener x method x peer:
//
//   - the probe listener (reachable on the pod IP) hides /, /leader, /leader/watch and /release,
//     even when it is given a watch hub and a release callback; it shows /metrics, read-only, to
//     any peer, so that Prometheus can scrape it, and never as a promise;
//   - POST /release is accepted from a loopback peer only, and no other method releases;
//   - on the main listener, /, /leader, /is-leader and the watch stream take their snapshot as a
//     PROMISE (Elector::Take): a `safe` release waits until every "yes" handed out has run out.
//     The probe listener's /is-leader never does (it is the kubelet's, and would otherwise hold
//     up every safe release by a probe period). Without the promise, a released lock could be
//     taken by a rival while this pod's main container still acts on a "yes": two leaders.
//
// Every guard here has a mutant in scripts/mutant_patches.py that this test kills. The table is the
// contract; only Ask() knows how requests reach the local API, so the table survives moves of
// the code beneath it.
#include <doctest/doctest.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "election/publisher.h"
#include "fakes/fake_clock.h"
#include "localapi/router.h"
#include "localapi/watch_hub.h"

namespace leasehold::localapi {
namespace {

// The listener (src/http) and its request parser.
using namespace leasehold::http;

using namespace std::chrono_literals;

enum class Listener { kMain, kProbe };
enum class Peer { kLoopback, kRemote };

// A leader's snapshot, so that every route answers its success when allowed.
struct Source {
  explicit Source(const Clock& clock) {
    s.identity = "pod-a";
    s.lock = {election::LockType::kLeases, "default", "my-lock"};
    s.observed = true;
    s.phase = election::Phase::kLeader;
    s.is_leader = true;
    s.record.holder_identity = "pod-a";
    s.record.leader_transitions = 3;
    s.record.lease_duration_seconds = 15;
    s.valid_until = clock.MonotonicNow() + 10s;
    s.last_attempt_at = clock.MonotonicNow();
    s.last_progress_at = s.last_attempt_at;
  }
  election::Snapshot Get(election::Reading reading) {
    std::lock_guard<std::mutex> l(mu);
    (reading == election::Reading::kPromise ? promises : peeks)++;
    return s;
  }
  std::mutex mu;
  election::Snapshot s;
  int promises = 0;
  int peeks = 0;
};

struct Outcome {
  int status = 0;  // 200 for an accepted watch stream
  bool promised = false;
  bool released = false;
  bool read = false;  // the election's snapshot was taken, as a promise or a peek
};

// One request, on a fresh agent: both listeners are given the watch hub, the release callback
// and the metrics, so that what the probe listener hides, it hides by its own guards.
Outcome Ask(Listener listener, const std::string& method, const std::string& path, Peer peer) {
  FakeClock clock;
  Source source(clock);
  election::SnapshotSource snapshots = [&source](election::Reading r) { return source.Get(r); };
  election::Publisher publisher(snapshots, clock);
  WatchHub hub(publisher, WatchHubOptions{});
  publisher.AddSink(&hub);
  int releases = 0;
  HandlerOptions options;
  options.started_at = clock.MonotonicNow();
  options.release = [&releases] { ++releases; };
  options.metrics = [] { return std::string("leasehold_up 1\n"); };
  options.probe_only = listener == Listener::kProbe;
  Router router(snapshots, clock, options, &hub);

  RequestHead head;
  head.method = method;
  head.target = path;
  const std::string label = "listener";
  const std::string from = peer == Peer::kLoopback ? "127.0.0.1:5000" : "10.1.2.3:5000";
  http::Routed r = router.Serve(head, http::Peer{label, from, peer == Peer::kLoopback});
  Outcome out;
  out.status = r.stream ? 200 : r.answer.status;
  r.stream.reset();
  out.promised = source.promises > 0;
  out.read = source.promises + source.peeks > 0;
  out.released = releases > 0;
  return out;
}

struct Row {
  Listener listener;
  const char* method;
  const char* path;
  int loopback_status;  // the answer to a loopback peer
  int remote_status;    // the answer to any other peer
  // The snapshot is taken as a promise (for either peer). On the main listener the paths that
  // can say "you lead" take it before the method is judged, so a refused method promises too:
  // more promise than needed only makes a safe release wait longer, never less.
  bool promise;
};

constexpr Listener M = Listener::kMain;
constexpr Listener P = Listener::kProbe;

// Every route, every method that matters (GET, HEAD, the state-changing POST, and one that no
// route takes), on both listeners. /release releases exactly when it answers 202.
const Row kRows[] = {
    // The main listener.
    {M, "GET", "/", 200, 200, true},
    {M, "HEAD", "/", 200, 200, true},
    {M, "POST", "/", 405, 405, true},
    {M, "PUT", "/", 405, 405, true},
    {M, "GET", "/leader", 200, 200, true},
    {M, "HEAD", "/leader", 200, 200, true},
    {M, "POST", "/leader", 405, 405, true},
    {M, "PUT", "/leader", 405, 405, true},
    {M, "GET", "/is-leader", 200, 200, true},
    {M, "HEAD", "/is-leader", 200, 200, true},
    {M, "POST", "/is-leader", 405, 405, true},
    {M, "PUT", "/is-leader", 405, 405, true},
    {M, "GET", "/leader/watch", 200, 200, true},
    {M, "HEAD", "/leader/watch", 200, 200, false},
    {M, "POST", "/leader/watch", 405, 405, false},
    {M, "PUT", "/leader/watch", 405, 405, false},
    {M, "GET", "/release", 405, 405, false},
    {M, "HEAD", "/release", 405, 405, false},
    {M, "POST", "/release", 202, 403, false},
    {M, "PUT", "/release", 405, 405, false},
    {M, "GET", "/healthz", 200, 200, false},
    {M, "HEAD", "/healthz", 200, 200, false},
    {M, "POST", "/healthz", 405, 405, false},
    {M, "GET", "/readyz", 200, 200, false},
    {M, "HEAD", "/readyz", 200, 200, false},
    {M, "POST", "/readyz", 405, 405, false},
    {M, "GET", "/metrics", 200, 200, false},
    {M, "HEAD", "/metrics", 200, 200, false},
    {M, "POST", "/metrics", 405, 405, false},
    {M, "GET", "/nope", 404, 404, false},
    {M, "POST", "/nope", 404, 404, false},
    {M, "GET", "/leader/", 404, 404, false},
    {M, "GET", "/is-leader/x", 404, 404, false},
    // The probe listener: /healthz, /readyz, /is-leader and /metrics only, never a promise.
    {P, "GET", "/", 404, 404, false},
    {P, "HEAD", "/", 404, 404, false},
    {P, "GET", "/leader", 404, 404, false},
    {P, "HEAD", "/leader", 404, 404, false},
    {P, "GET", "/is-leader", 200, 200, false},
    {P, "HEAD", "/is-leader", 200, 200, false},
    {P, "POST", "/is-leader", 405, 405, false},
    {P, "GET", "/leader/watch", 404, 404, false},
    {P, "HEAD", "/leader/watch", 404, 404, false},
    {P, "POST", "/leader/watch", 404, 404, false},
    {P, "GET", "/release", 404, 404, false},
    {P, "POST", "/release", 404, 404, false},
    {P, "PUT", "/release", 404, 404, false},
    {P, "GET", "/healthz", 200, 200, false},
    {P, "HEAD", "/healthz", 200, 200, false},
    {P, "POST", "/healthz", 405, 405, false},
    {P, "GET", "/readyz", 200, 200, false},
    {P, "HEAD", "/readyz", 200, 200, false},
    {P, "POST", "/readyz", 405, 405, false},
    {P, "GET", "/metrics", 200, 200, false},
    {P, "HEAD", "/metrics", 200, 200, false},
    {P, "POST", "/metrics", 405, 405, false},
    {P, "GET", "/nope", 404, 404, false},
};

TEST_CASE("routes: status, promise and release over route x listener x method x peer") {
  for (const Row& row : kRows) {
    for (Peer peer : {Peer::kLoopback, Peer::kRemote}) {
      const bool loopback = peer == Peer::kLoopback;
      const std::string where =
          std::string(row.listener == M ? "main" : "probe") + " " + row.method + " " + row.path;
      CAPTURE(where);
      CAPTURE(loopback);
      const Outcome o = Ask(row.listener, row.method, row.path, peer);
      const int want = loopback ? row.loopback_status : row.remote_status;
      CHECK(o.status == want);
      CHECK(o.promised == row.promise);
      // Only an accepted POST /release releases; nothing else changes state.
      CHECK(o.released == (want == 202));
      // A path the listener does not serve reads nothing: 404 floods never take its lock.
      if (want == 404) CHECK_FALSE(o.read);
    }
  }
}

TEST_CASE("routes: the table covers every route of the local API on both listeners") {
  // A route added to the API without a row here would have no pinned guard.
  const char* routes[] = {"/",        "/leader",  "/is-leader", "/leader/watch",
                          "/release", "/healthz", "/readyz",    "/metrics"};
  for (const char* route : routes) {
    for (Listener l : {M, P}) {
      bool get = false;
      bool post = false;
      for (const Row& row : kRows) {
        if (row.listener != l || std::string(row.path) != route) continue;
        get = get || std::string(row.method) == "GET";
        post = post || std::string(row.method) == "POST";
      }
      CAPTURE(std::string(route));
      CHECK(get);
      if (l == M) CHECK(post);
    }
  }
}

}  // namespace
}  // namespace leasehold::localapi
