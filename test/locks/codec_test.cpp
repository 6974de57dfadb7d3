#include "locks/codec.h"

#include <doctest/doctest.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "locks/go_json.h"

namespace leasehold::locks {
namespace {

using election::LeaderElectionRecord;
using std::chrono::nanoseconds;
using std::chrono::seconds;

SysTime FromUnix(int64_t secs, int64_t nanos = 0) {
  return SysTime(std::chrono::duration_cast<SysTime::duration>(seconds(secs) + nanoseconds(nanos)));
}

constexpr int64_t k20260102T030405 = 1767323045;

LeaderElectionRecord Record(std::string holder, int duration, std::optional<SysTime> acquire,
                            std::optional<SysTime> renew, int64_t transitions) {
  LeaderElectionRecord r;
  r.holder_identity = std::move(holder);
  r.lease_duration_seconds = duration;
  r.acquire_time = acquire;
  r.renew_time = renew;
  r.leader_transitions = transitions;
  return r;
}

LeaderElectionRecord Coordinated(LeaderElectionRecord r, std::string strategy,
                                 std::string preferred_holder) {
  r.strategy = std::move(strategy);
  r.preferred_holder = std::move(preferred_holder);
  return r;
}

TEST_CASE("DecodeLeaseObject") {
  const SysTime acquire = FromUnix(k20260102T030405, 123456000);
  const SysTime renew = FromUnix(k20260102T030405 + 10, 654321000);
  struct Case {
    const char* name;
    std::string json;
    Code want_code;
    LeaderElectionRecord want;
  };
  const std::vector<Case> cases = {
      {"full spec, metadata ignored",
       R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",)"
       R"("metadata":{"name":"my-lock","namespace":"ns","resourceVersion":"123","uid":"u"},)"
       R"("spec":{"holderIdentity":"host_5c0e","leaseDurationSeconds":15,)"
       R"("acquireTime":"2026-01-02T03:04:05.123456Z","renewTime":"2026-01-02T03:04:15.654321Z",)"
       R"("leaseTransitions":2}})",
       Code::kOk, Record("host_5c0e", 15, acquire, renew, 2)},
      {"coordinated fields",
       R"({"spec":{"holderIdentity":"a","leaseDurationSeconds":5,"leaseTransitions":0,)"
       R"("strategy":"OldestEmulationVersion","preferredHolder":"b"}})",
       Code::kOk,
       Coordinated(Record("a", 5, std::nullopt, std::nullopt, 0), "OldestEmulationVersion", "b")},
      {"no spec", R"({"metadata":{"name":"x"}})", Code::kOk, LeaderElectionRecord{}},
      {"null spec", R"({"spec":null})", Code::kOk, LeaderElectionRecord{}},
      {"empty spec", R"({"spec":{}})", Code::kOk, LeaderElectionRecord{}},
      {"null fields",
       R"({"spec":{"holderIdentity":null,"leaseDurationSeconds":null,"acquireTime":null,)"
       R"("renewTime":null,"leaseTransitions":null,"strategy":null,"preferredHolder":null}})",
       Code::kOk, LeaderElectionRecord{}},
      {"time without fraction, with offset",
       R"({"spec":{"renewTime":"2026-01-02T05:04:15+02:00"}})", Code::kOk,
       Record("", 0, std::nullopt, FromUnix(k20260102T030405 + 10), 0)},
      {"Go zero time reads as absent", R"({"spec":{"acquireTime":"0001-01-01T00:00:00.000000Z"}})",
       Code::kOk, LeaderElectionRecord{}},
      {"unknown spec fields ignored", R"({"spec":{"future":[1,2,{"x":null}]}})", Code::kOk,
       LeaderElectionRecord{}},
      // Wrong types and garbage.
      {"holder is a number", R"({"spec":{"holderIdentity":5}})", Code::kMalformed, {}},
      {"duration as a numeric string", R"({"spec":{"leaseDurationSeconds":"15"}})", Code::kOk,
       Record("", 15, std::nullopt, std::nullopt, 0)},
      {"a fractional duration rounds up", R"({"spec":{"leaseDurationSeconds":15.2}})", Code::kOk,
       Record("", 16, std::nullopt, std::nullopt, 0)},
      {"duration is a word", R"({"spec":{"leaseDurationSeconds":"long"}})", Code::kMalformed, {}},
      {"duration overflows int32",
       R"({"spec":{"leaseDurationSeconds":2147483648}})",
       Code::kMalformed,
       {}},
      {"transitions is a bool", R"({"spec":{"leaseTransitions":true}})", Code::kMalformed, {}},
      {"transitions overflows int32",
       R"({"spec":{"leaseTransitions":4294967296}})",
       Code::kMalformed,
       {}},
      // Times are informational: an unreadable one reads as absent, never as an error.
      {"acquireTime is a number", R"({"spec":{"acquireTime":123}})", Code::kOk,
       LeaderElectionRecord{}},
      {"renewTime is garbage", R"({"spec":{"renewTime":"yesterday"}})", Code::kOk,
       LeaderElectionRecord{}},
      {"renewTime out of SysTime range", R"({"spec":{"renewTime":"3000-01-01T00:00:00Z"}})",
       Code::kOk, LeaderElectionRecord{}},
      {"strategy is an object", R"({"spec":{"strategy":{}}})", Code::kMalformed, {}},
      {"spec is a list", R"({"spec":[]})", Code::kMalformed, {}},
      {"top level is a list", R"([{"spec":{}}])", Code::kMalformed, {}},
      {"top level is null", "null", Code::kMalformed, {}},
      {"not JSON", "<html>502 Bad Gateway</html>", Code::kMalformed, {}},
      {"truncated", R"({"spec":{"holderIdentity":"a")", Code::kMalformed, {}},
      {"empty body", "", Code::kMalformed, {}},
      {"trailing garbage", R"({"spec":{}} x)", Code::kMalformed, {}},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto got = DecodeLeaseObject(c.json);
      REQUIRE_MESSAGE(got.code() == c.want_code, got.status().ToString());
      if (c.want_code == Code::kOk) {
        CHECK(*got == c.want);
        CHECK(got->strategy == c.want.strategy);
        CHECK(got->preferred_holder == c.want.preferred_holder);
      }
    }
  }
}

TEST_CASE("EncodeLeaseSpec writes what client-go's LeaderElectionRecordToLeaseSpec does") {
  struct Case {
    const char* name;
    LeaderElectionRecord record;
    const char* want;
  };
  const std::vector<Case> cases = {
      {"held, times truncated to microseconds",
       Record("host_1", 15, FromUnix(k20260102T030405, 123456789),
              FromUnix(k20260102T030405 + 10, 999999999), 3),
       R"({"holderIdentity":"host_1","leaseDurationSeconds":15,)"
       R"("acquireTime":"2026-01-02T03:04:05.123456Z","renewTime":"2026-01-02T03:04:15.999999Z",)"
       R"("leaseTransitions":3})"},
      {"released: empty holder is still written",
       Record("", 1, FromUnix(k20260102T030405), FromUnix(k20260102T030405), 3),
       R"({"holderIdentity":"","leaseDurationSeconds":1,)"
       R"("acquireTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:04:05.000000Z",)"
       R"("leaseTransitions":3})"},
      {"absent times are null", Record("a", 15, std::nullopt, std::nullopt, 0),
       R"({"holderIdentity":"a","leaseDurationSeconds":15,"acquireTime":null,"renewTime":null,)"
       R"("leaseTransitions":0})"},
      {"strategy and preferred holder, written when not empty",
       Coordinated(Record("a", 15, std::nullopt, std::nullopt, 0), "example.com/test", "b"),
       R"({"holderIdentity":"a","leaseDurationSeconds":15,"acquireTime":null,"renewTime":null,)"
       R"("leaseTransitions":0,"strategy":"example.com/test","preferredHolder":"b"})"},
      {"a strategy alone",
       Coordinated(Record("a", 15, std::nullopt, std::nullopt, 0), "OldestEmulationVersion", ""),
       R"({"holderIdentity":"a","leaseDurationSeconds":15,"acquireTime":null,"renewTime":null,)"
       R"("leaseTransitions":0,"strategy":"OldestEmulationVersion"})"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(EncodeLeaseSpec(c.record) == c.want); }
  }
}

TEST_CASE("LeaseRawRecord sees every field, to the microsecond") {
  const LeaderElectionRecord base =
      Record("a", 15, FromUnix(k20260102T030405), FromUnix(k20260102T030405), 1);
  CHECK(LeaseRawRecord(base) ==
        R"({"holderIdentity":"a","leaseDurationSeconds":15,)"
        R"("acquireTime":"2026-01-02T03:04:05.000000Z","renewTime":"2026-01-02T03:04:05.000000Z",)"
        R"("leaderTransitions":1,"strategy":"","preferredHolder":""})");
  struct Case {
    const char* name;
    std::function<void(LeaderElectionRecord&)> change;
  };
  const std::vector<Case> cases = {
      {"holder", [](LeaderElectionRecord& s) { s.holder_identity = "b"; }},
      {"duration", [](LeaderElectionRecord& s) { s.lease_duration_seconds = 16; }},
      {"renew +1us",
       [](LeaderElectionRecord& s) { *s.renew_time += std::chrono::microseconds(1); }},
      {"acquire +1us",
       [](LeaderElectionRecord& s) { *s.acquire_time += std::chrono::microseconds(1); }},
      {"renew absent", [](LeaderElectionRecord& s) { s.renew_time.reset(); }},
      {"transitions", [](LeaderElectionRecord& s) { s.leader_transitions = 2; }},
      {"strategy", [](LeaderElectionRecord& s) { s.strategy = "OldestEmulationVersion"; }},
      {"preferred holder", [](LeaderElectionRecord& s) { s.preferred_holder = "b"; }},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      LeaderElectionRecord changed = base;
      c.change(changed);
      CHECK(LeaseRawRecord(changed) != LeaseRawRecord(base));
    }
  }
}

TEST_CASE("LeaseObservation is what the leases lock's Get reports") {
  struct Case {
    const char* name;
    std::string json;
    Code want_code;
    std::string want_holder;
    std::string want_raw;
  };
  const std::vector<Case> cases = {
      {"held",
       R"({"metadata":{"resourceVersion":"9"},"spec":{"holderIdentity":"a",)"
       R"("leaseDurationSeconds":15,"renewTime":"2026-01-02T03:04:05.5Z","leaseTransitions":4,)"
       R"("preferredHolder":"b"}})",
       Code::kOk, "a",
       R"({"holderIdentity":"a","leaseDurationSeconds":15,"acquireTime":null,)"
       R"("renewTime":"2026-01-02T03:04:05.500000Z","leaderTransitions":4,"strategy":"",)"
       R"("preferredHolder":"b"})"},
      {"resourceVersion alone is not part of the record",
       R"({"metadata":{"resourceVersion":"10"}})", Code::kOk, "",
       R"({"holderIdentity":"","leaseDurationSeconds":0,"acquireTime":null,"renewTime":null,)"
       R"("leaderTransitions":0,"strategy":"","preferredHolder":""})"},
      {"garbage", "{", Code::kMalformed, "", ""},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto got = LeaseObservation(c.json);
      REQUIRE(got.code() == c.want_code);
      if (got.ok()) {
        CHECK(got->record.holder_identity == c.want_holder);
        CHECK(got->raw == c.want_raw);
      }
    }
  }
}

TEST_CASE("EncodeAnnotationRecord matches client-go byte for byte") {
  struct Case {
    const char* name;
    LeaderElectionRecord record;
    const char* want;
  };
  const std::vector<Case> cases = {
      // Both values as found on live clusters (kubectl get configmap/endpoints -o yaml).
      {"rancher ConfigMap",
       Record("rancher-7dbd7875f7-qbj5k", 45, FromUnix(1554378792), FromUnix(1554380648), 0),
       R"({"holderIdentity":"rancher-7dbd7875f7-qbj5k","leaseDurationSeconds":45,)"
       R"("acquireTime":"2019-04-04T11:53:12Z","renewTime":"2019-04-04T12:24:08Z",)"
       R"("leaderTransitions":0})"},
      {"brief example, sub-second parts dropped",
       Record("host_5c0e", 15, FromUnix(k20260102T030405, 999999999),
              FromUnix(k20260102T030405 + 10, 1), 0),
       R"({"holderIdentity":"host_5c0e","leaseDurationSeconds":15,)"
       R"("acquireTime":"2026-01-02T03:04:05Z","renewTime":"2026-01-02T03:04:15Z",)"
       R"("leaderTransitions":0})"},
      {"zero record: times are null", LeaderElectionRecord{},
       R"({"holderIdentity":"","leaseDurationSeconds":0,"acquireTime":null,"renewTime":null,)"
       R"("leaderTransitions":0})"},
      {"HTML characters escaped as Go does", Record("a<b>&c", 15, std::nullopt, std::nullopt, 7),
       R"({"holderIdentity":"a\u003cb\u003e\u0026c","leaseDurationSeconds":15,)"
       R"("acquireTime":null,"renewTime":null,"leaderTransitions":7})"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(EncodeAnnotationRecord(c.record) == c.want); }
  }
}

TEST_CASE("GoJsonQuote escapes as Go's encoding/json") {
  struct Case {
    const char* name;
    std::string in;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"plain", "host-1_abc.def", R"("host-1_abc.def")"},
      {"empty", "", R"("")"},
      {"quote and backslash", "a\"b\\c", R"("a\"b\\c")"},
      {"short escapes", "\n\r\t", R"("\n\r\t")"},
      {"\\b and \\f as \\u00XX (pre Go 1.22)", "\b\f", R"("\u0008\u000c")"},
      {"other control bytes, lowercase hex", std::string("\x00\x01\x1f", 3),
       R"("\u0000\u0001\u001f")"},
      {"HTML", "<>&", R"("\u003c\u003e\u0026")"},
      {"DEL and slash stay", "\x7f/", "\"\x7f/\""},
      {"UTF-8 stays", "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80",
       "\"h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80\""},
      {"U+2028 and U+2029", "\xe2\x80\xa8\xe2\x80\xa9", R"("\u2028\u2029")"},
      {"U+FFFD itself stays", "\xef\xbf\xbd", "\"\xef\xbf\xbd\""},
      {"lone continuation byte", "a\x80z", R"("a\ufffdz")"},
      {"invalid lead bytes", "\xc0\xc1\xf5\xff", R"("\ufffd\ufffd\ufffd\ufffd")"},
      {"overlong 3-byte", "\xe0\x80\xaf", R"("\ufffd\ufffd\ufffd")"},
      {"surrogate", "\xed\xa0\x80", R"("\ufffd\ufffd\ufffd")"},
      {"above U+10FFFF", "\xf4\x90\x80\x80", R"("\ufffd\ufffd\ufffd\ufffd")"},
      {"truncated sequence then ASCII",
       "\xe2\x82"
       "a",
       R"("\ufffd\ufffda")"},
      {"truncated at end", "\xf0\x9f\x98", R"("\ufffd\ufffd\ufffd")"},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) { CHECK(GoJsonQuote(c.in) == c.want); }
  }
}

TEST_CASE("DecodeAnnotationRecord reads as Go's json.Unmarshal") {
  const LeaderElectionRecord rancher =
      Record("rancher-7dbd7875f7-qbj5k", 45, FromUnix(1554378792), FromUnix(1554380648), 0);
  struct Case {
    const char* name;
    std::string json;
    Code want_code;
    LeaderElectionRecord want;
  };
  const std::vector<Case> cases = {
      {"client-go value",
       R"({"holderIdentity":"rancher-7dbd7875f7-qbj5k","leaseDurationSeconds":45,)"
       R"("acquireTime":"2019-04-04T11:53:12Z","renewTime":"2019-04-04T12:24:08Z",)"
       R"("leaderTransitions":0})",
       Code::kOk, rancher},
      {"v0.31 fields and unknown fields ignored",
       R"({"holderIdentity":"rancher-7dbd7875f7-qbj5k","leaseDurationSeconds":45,)"
       R"("acquireTime":"2019-04-04T11:53:12Z","renewTime":"2019-04-04T12:24:08Z",)"
       R"("leaderTransitions":0,"strategy":"","preferredHolder":"","x":{"y":[1]}})",
       Code::kOk, rancher},
      {"fraction digits and offsets",
       R"({"acquireTime":"2019-04-04T13:53:12.999+02:00","renewTime":"2019-04-04T12:24:08.5Z"})",
       Code::kOk,
       Record("", 0, FromUnix(1554378792, 999000000), FromUnix(1554380648, 500000000), 0)},
      {"field names match case-insensitively",
       R"({"HolderIdentity":"x","LEASEDURATIONSECONDS":3,"leadertransitions":9})", Code::kOk,
       Record("x", 3, std::nullopt, std::nullopt, 9)},
      {"last duplicate wins", R"({"holderIdentity":"a","HOLDERIDENTITY":"b"})", Code::kOk,
       Record("b", 0, std::nullopt, std::nullopt, 0)},
      {"null fields stay zero",
       R"({"holderIdentity":null,"leaseDurationSeconds":null,"acquireTime":null,)"
       R"("renewTime":null,"leaderTransitions":null})",
       Code::kOk, LeaderElectionRecord{}},
      {"empty object", "{}", Code::kOk, LeaderElectionRecord{}},
      {"JSON null", "null", Code::kOk, LeaderElectionRecord{}},
      {"Go escapes decode", R"({"holderIdentity":"a\u003cb\u0026"})", Code::kOk,
       Record("a<b&", 0, std::nullopt, std::nullopt, 0)},
      {"large transitions", R"({"leaderTransitions":4294967296})", Code::kOk,
       Record("", 0, std::nullopt, std::nullopt, 4294967296)},
      // Lenient where safety does not depend on it (foreign electors, e.g. the Python client).
      {"the Python client's ConfigMapLock record",
       R"({"holderIdentity": "py1-g1", "leaseDurationSeconds": "5", )"
       R"("acquireTime": "2026-01-02 03:04:05.469560", "renewTime": "2026-01-02 03:04:15.487689"})",
       Code::kOk,
       Record("py1-g1", 5, FromUnix(k20260102T030405, 469560000),
              FromUnix(k20260102T030405 + 10, 487689000), 0)},
      {"duration as a numeric string", R"({"leaseDurationSeconds":"15"})", Code::kOk,
       Record("", 15, std::nullopt, std::nullopt, 0)},
      {"a fractional duration rounds up", R"({"leaseDurationSeconds":"7.01"})", Code::kOk,
       Record("", 8, std::nullopt, std::nullopt, 0)},
      {"a fractional number rounds up", R"({"leaseDurationSeconds":15.5})", Code::kOk,
       Record("", 16, std::nullopt, std::nullopt, 0)},
      {"durations below one second read as none", R"({"leaseDurationSeconds":"0.5"})", Code::kOk,
       LeaderElectionRecord{}},
      {"a negative duration reads as none", R"({"leaseDurationSeconds":-3})", Code::kOk,
       LeaderElectionRecord{}},
      {"time without zone reads as UTC", R"({"renewTime":"2019-04-04T12:24:08"})", Code::kOk,
       Record("", 0, std::nullopt, FromUnix(1554380648), 0)},
      {"an unreadable time reads as none", R"({"renewTime":"","acquireTime":1554378792})",
       Code::kOk, LeaderElectionRecord{}},
      // Errors, as Go's Unmarshal reports them.
      {"empty string", "", Code::kMalformed, {}},
      {"truncated", R"({"holderIdentity":"a")", Code::kMalformed, {}},
      {"a list", "[]", Code::kMalformed, {}},
      {"a string", R"("holder")", Code::kMalformed, {}},
      {"holder is a number", R"({"holderIdentity":1})", Code::kMalformed, {}},
      {"duration overflows int", R"({"leaseDurationSeconds":4294967296})", Code::kMalformed, {}},
      {"duration is a word", R"({"leaseDurationSeconds":"15s"})", Code::kMalformed, {}},
      {"duration is a bool", R"({"leaseDurationSeconds":true})", Code::kMalformed, {}},
      {"transitions is a string", R"({"leaderTransitions":"3"})", Code::kMalformed, {}},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto got = DecodeAnnotationRecord(c.json);
      REQUIRE_MESSAGE(got.code() == c.want_code, got.status().ToString());
      if (c.want_code == Code::kOk) CHECK(*got == c.want);
    }
  }
}

TEST_CASE("an unreadable Lease is an opaque holder: no holder, what duration and count it had") {
  auto o = LeaseObservation(
      R"({"metadata":{"resourceVersion":"42"},)"
      R"("spec":{"holderIdentity":5,"leaseDurationSeconds":30,"leaseTransitions":7}})");
  REQUIRE(o.ok());
  CHECK(o->opaque);
  CHECK(o->raw == "opaque:42");
  CHECK(o->record.holder_identity.empty());
  CHECK(o->record.lease_duration_seconds == 30);
  CHECK(o->record.leader_transitions == 7);
  CHECK_FALSE(o->record.transitions_recorded);
  CHECK(o->unreadable.find("spec.holderIdentity") != std::string::npos);
  auto readable = LeaseObservation(
      R"({"metadata":{"resourceVersion":"43"},"spec":{"holderIdentity":"a","leaseDurationSeconds":30}})");
  REQUIRE(readable.ok());
  CHECK_FALSE(readable->opaque);
  CHECK(readable->record.holder_identity == "a");
}

TEST_CASE("a record says whether it carried a transition count") {
  struct Case {
    const char* name;
    std::string json;
    bool recorded;
  };
  const Case cases[] = {
      {"client-go writes it", R"({"holderIdentity":"a","leaderTransitions":0})", true},
      {"the Python client does not", R"({"holderIdentity":"a","leaseDurationSeconds":"5"})", false},
      {"null is no count", R"({"holderIdentity":"a","leaderTransitions":null})", false},
  };
  for (const Case& c : cases) {
    SUBCASE(c.name) {
      auto got = DecodeAnnotationRecord(c.json);
      REQUIRE(got.ok());
      CHECK(got->transitions_recorded == c.recorded);
    }
  }
  auto lease = DecodeLeaseObject(R"({"spec":{"holderIdentity":"a"}})");
  REQUIRE(lease.ok());
  CHECK_FALSE(lease->transitions_recorded);
  lease = DecodeLeaseObject(R"({"spec":{"holderIdentity":"a","leaseTransitions":2}})");
  REQUIRE(lease.ok());
  CHECK(lease->transitions_recorded);
}

TEST_CASE("annotation records round-trip at whole seconds") {
  const LeaderElectionRecord r = Record("a<\xe2\x80\xa8\"b", 15, FromUnix(k20260102T030405, 999),
                                        FromUnix(k20260102T030405 + 9, 999999999), 41);
  auto back = DecodeAnnotationRecord(EncodeAnnotationRecord(r));
  REQUIRE(back.ok());
  LeaderElectionRecord want = r;
  want.acquire_time = FromUnix(k20260102T030405);
  want.renew_time = FromUnix(k20260102T030405 + 9);
  CHECK(*back == want);
}

}  // namespace
}  // namespace leasehold::locks
