// The local HTTP API as our code sees it: localapi::Handle(HttpQuery, its Route, Snapshot, Clock,
// options) with the method, path, query parameters and the election snapshot all taken from the
// input (the listener's request parser has its own target, http_head_fuzzer). Beyond "no crash, no
// UB": the status codes and bodies keep the documented contract, including the probe listener's
// (HandlerOptions::probe_only: /healthz, /readyz and /is-leader only, never a release), the
// loopback rule of POST /release, and /metrics.
//
// Input layout (FuzzedDataProvider): strings from the front, each ended by a backslash and any
// other byte ("\\\n" in the seeds): method, path, then per parameter a key and a value, then the
// snapshot's identity, holder, lock type/namespace/name and last error message. The numbers and
// flags come from the end of the input; fuzz/make_handler_seeds.py writes readable seeds.
#include <fuzzer/FuzzedDataProvider.h>
#include <rapidjson/document.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <string>

#include "fakes/fake_clock.h"
#include "fuzz_util.h"
#include "localapi/handler.h"
#include "localapi/routes.h"

namespace leasehold::localapi {
namespace {

using election::Phase;
using election::Snapshot;
using std::chrono::seconds;

constexpr int64_t kYear = 366 * 24 * 3600;

// A monotonic instant within a year of `now`: the elector only stores instants it has seen.
MonoTime Near(FuzzedDataProvider& p, MonoTime now) {
  return now + std::chrono::nanoseconds(
                   p.ConsumeIntegralInRange<int64_t>(-kYear * 1000000000, kYear * 1000000000));
}

std::optional<SysTime> MaybeTime(FuzzedDataProvider& p) {
  if (!p.ConsumeBool()) return std::nullopt;
  // Any SysTime: the codecs accept every instant of its range.
  return SysTime(SysTime::duration(p.ConsumeIntegral<int64_t>()));
}

const rapidjson::Value* Member(const rapidjson::Value& o, const char* name) {
  const auto it = o.FindMember(name);
  return it == o.MemberEnd() ? nullptr : &it->value;
}

void Fuzz(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  HttpQuery q;
  q.method = p.ConsumeRandomLengthString(16);
  q.path = p.ConsumeRandomLengthString(256);
  const int params = p.ConsumeIntegralInRange(0, 3);
  for (int i = 0; i < params; ++i) {
    std::string key = p.ConsumeRandomLengthString(32);
    q.params.emplace(std::move(key), p.ConsumeRandomLengthString(32));
  }

  Snapshot s;
  q.loopback_peer = p.ConsumeBool();
  s.identity = p.ConsumeRandomLengthString(64);
  const std::string holder = p.ConsumeRandomLengthString(64);
  // The seeds spell a lock type (make_handler_seeds.py); any other string still picks one.
  const std::string lock_type = p.ConsumeRandomLengthString(32);
  s.lock.type = election::ParseLockType(lock_type).value_or(
      election::kAllLockTypes[lock_type.size() % std::size(election::kAllLockTypes)]);
  s.lock.name_space = p.ConsumeRandomLengthString(64);
  s.lock.name = p.ConsumeRandomLengthString(64);
  const std::string error_message = p.ConsumeRandomLengthString(128);

  FakeClock clock;
  clock.Advance(seconds(p.ConsumeIntegralInRange<int64_t>(0, kYear)));
  const MonoTime now = clock.MonotonicNow();
  s.phase = static_cast<Phase>(p.ConsumeIntegralInRange(0, static_cast<int>(Phase::kDone)));
  s.observed = p.ConsumeBool();
  s.record.holder_identity = p.ConsumeBool() ? s.identity : holder;
  s.record.lease_duration_seconds = p.ConsumeIntegral<int>();
  s.record.acquire_time = MaybeTime(p);
  s.record.renew_time = MaybeTime(p);
  s.record.leader_transitions = p.ConsumeIntegral<int64_t>();
  s.is_leader = p.ConsumeBool();
  if (s.is_leader) s.valid_until = Near(p, now);
  const auto code =
      static_cast<Code>(p.ConsumeIntegralInRange(0, static_cast<int>(Code::kDeadlineExceeded)));
  if (code != Code::kOk) s.last_error = Status(code, error_message);
  if (p.ConsumeBool()) s.last_attempt_at = Near(p, now);
  if (p.ConsumeBool()) s.last_progress_at = Near(p, now);
  if (p.ConsumeBool()) s.last_renew_at = Near(p, now);
  s.slowpath_total = p.ConsumeIntegral<uint64_t>();
  s.acquired_total = p.ConsumeIntegral<uint64_t>();
  s.stopping = p.ConsumeBool();

  HandlerOptions options;
  options.started_at = Near(p, now);
  if (p.ConsumeBool()) {
    options.timings = Timings{};
    options.timings->lease_duration = seconds(p.ConsumeIntegralInRange<int64_t>(1, 24 * 3600));
  }
  int released = 0;
  if (p.ConsumeBool()) options.release = [&released] { ++released; };
  int metrics_calls = 0;
  if (p.ConsumeBool()) {
    options.metrics = [&metrics_calls] {
      ++metrics_calls;
      return std::string("leasehold_is_leader 1\n");
    };
  }
  options.probe_only = p.ConsumeBool();

  const Route* route = FindRoute(q.path);
  const http::Answer a = Handle(q, route, s, clock, options);
  // LEASEHOLD_FUZZ_DEBUG=1 ./handler_fuzzer <file> shows what an input decodes to.
  static const bool debug = std::getenv("LEASEHOLD_FUZZ_DEBUG") != nullptr;
  if (debug) {
    std::fprintf(stderr,
                 "%s %s (%zu params) identity=%s holder=%s observed=%d leader=%d "
                 "phase=%d error=%s\n-> %d %s\n%s\n",
                 q.method.c_str(), q.path.c_str(), q.params.size(), s.identity.c_str(),
                 s.record.holder_identity.c_str(), s.observed, s.is_leader,
                 static_cast<int>(s.phase), s.last_error.ToString().c_str(), a.status,
                 a.content_type.c_str(), a.body.c_str());
  }

  const bool get = q.method == "GET" || q.method == "HEAD";
  // The endpoints of handler.h; a new one belongs here too.
  // Both listeners serve the probes and, when given metrics, /metrics (scrapeable on
  // the pod IP); only the loopback API serves the rest.
  const bool probe_path = q.path == "/healthz" || q.path == "/readyz" || q.path == "/is-leader" ||
                          (q.path == "/metrics" && options.metrics);
  const bool known =
      probe_path || (!options.probe_only && (q.path == "/" || q.path == "/leader" ||
                                             q.path == "/release" || q.path == "/leader/watch"));
  FUZZ_CHECK((route != nullptr && route->promise == Promise::kAnswer) ==
             (q.path == "/" || q.path == "/leader" || q.path == "/is-leader"));
  FUZZ_CHECK(!a.content_type.empty());
  // Only POST /release on the main listener, from a loopback peer, releases.
  FUZZ_CHECK(released == ((q.method == "POST" && q.path == "/release" && options.release &&
                           !options.probe_only && q.loopback_peer)
                              ? 1
                              : 0));
  FUZZ_CHECK(metrics_calls == (known && get && q.path == "/metrics" ? 1 : 0));
  if (!known) {
    FUZZ_CHECK(a.status == 404);
  } else if (q.path == "/release" ? q.method != "POST" : !get) {
    FUZZ_CHECK(a.status == 405);
    FUZZ_CHECK(a.headers.size() == 1 && a.headers[0].first == "Allow");
  } else {
    FUZZ_CHECK(a.status != 404 && a.status != 405);
  }
  if (known && get && q.path == "/metrics") {
    FUZZ_CHECK(a.status == 200 && a.body == "leasehold_is_leader 1\n");
    return;
  }
  if (known && get && q.path == "/leader/watch") FUZZ_CHECK(a.status == 503);

  // The only "you lead" answers: 200 true on /is-leader, 200 isLeader:true on /leader and /,
  // and only for a snapshot that says so and whose claim has not run out at the instant of the
  // answer (a leader snapshot at or past valid_until answers "no": election/publisher.h (b)).
  const bool leads = s.is_leader && now < s.valid_until;
  if (q.path == "/is-leader" && get) {
    FUZZ_CHECK(a.status == (leads ? 200 : 503));
    FUZZ_CHECK(a.body == (leads ? "true" : "false"));
  }
  if (a.content_type.rfind("application/json", 0) != 0) {
    FUZZ_CHECK(a.status == 200 || a.status == 503);
    return;
  }

  // Every JSON answer is one object, followed by a newline; with valid UTF-8 in, valid UTF-8 out.
  FUZZ_CHECK(!a.body.empty() && a.body.back() == '\n');
  const bool utf8 = fuzz::ValidUtf8(s.identity) && fuzz::ValidUtf8(s.record.holder_identity) &&
                    fuzz::ValidUtf8(s.lock.name_space) && fuzz::ValidUtf8(s.lock.name) &&
                    fuzz::ValidUtf8(s.last_error.message());
  rapidjson::Document doc;
  if (utf8) {
    doc.Parse<rapidjson::kParseValidateEncodingFlag>(a.body.data(), a.body.size());
  } else {
    doc.Parse(a.body.data(), a.body.size());
  }
  FUZZ_CHECK(!doc.HasParseError() && doc.IsObject());

  if (known && (q.path == "/leader" || q.path == "/") && get) {
    FUZZ_CHECK(a.status == (s.observed ? 200 : 503));
    const rapidjson::Value* is_leader = Member(doc, "isLeader");
    FUZZ_CHECK(is_leader != nullptr && is_leader->IsBool() && is_leader->GetBool() == leads);
    const rapidjson::Value* name = Member(doc, "name");
    FUZZ_CHECK(name != nullptr && name->IsString() &&
               std::string(name->GetString(), name->GetStringLength()) == s.record.holder_identity);
    const rapidjson::Value* term = Member(doc, "term");
    FUZZ_CHECK(term != nullptr && term->IsInt64() &&
               term->GetInt64() == s.record.leader_transitions);
    const rapidjson::Value* valid_for = Member(doc, "validForMs");
    FUZZ_CHECK((valid_for != nullptr) == leads);
    if (valid_for != nullptr) {
      FUZZ_CHECK(valid_for->IsInt64() && valid_for->GetInt64() >= 0);
      // Rounded down: never promises past valid_until.
      FUZZ_CHECK(std::chrono::milliseconds(valid_for->GetInt64()) <=
                 std::max(Duration::zero(), s.valid_until - now));
      FUZZ_CHECK(Member(doc, "validUntil") != nullptr);
    }
  }
  if (q.path == "/readyz" && get) {
    const rapidjson::Value* ready = Member(doc, "ready");
    FUZZ_CHECK(ready != nullptr && ready->IsBool() && ready->GetBool() == (a.status == 200));
    FUZZ_CHECK(a.status == 200 || a.status == 503);
    if (!s.observed) FUZZ_CHECK(a.status == 503);
  }
  if (known && q.path == "/release" && q.method == "POST") {
    FUZZ_CHECK(a.status == (q.loopback_peer ? 202 : 403));
  }
}

}  // namespace
}  // namespace leasehold::localapi

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  leasehold::localapi::Fuzz(data, size);
  return 0;
}
