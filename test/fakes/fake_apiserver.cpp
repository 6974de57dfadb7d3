// The fake apiserver. One mutex guards all state; handlers run on httplib's worker threads and
// block (held requests, watches) on one condition variable with that mutex released.
#include "fakes/fake_apiserver.h"

#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "test_paths.h"  // LEASEHOLD_TEST_CERTS_DIR

// Debian's libcpp-httplib is the compiled flavour built with OpenSSL; its pkg-config flags define
// CPPHTTPLIB_OPENSSL_SUPPORT already, and the struct layouts depend on it, so insist on it.
#ifndef CPPHTTPLIB_OPENSSL_SUPPORT
#define CPPHTTPLIB_OPENSSL_SUPPORT
#endif
#include <httplib.h>
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

namespace leasehold::testing {

std::string TestCert(const std::string& file) {
  return std::string(LEASEHOLD_TEST_CERTS_DIR) + "/" + file;
}

namespace {

using rapidjson::Document;
using rapidjson::Value;
using SteadyTime = std::chrono::steady_clock::time_point;

// Threads serving connections: each keep-alive connection, held request and watch takes one.
constexpr size_t kServerThreads = 32;
// How long an idle keep-alive connection is kept (seconds); also bounds how long stopping the
// server waits for a client that is still connected.
constexpr time_t kKeepAliveSeconds = 2;
// The apiserver picks 30-60 min when a watch names no timeoutSeconds.
constexpr int kDefaultWatchTimeoutSeconds = 1800;
// How often a quiet watch checks whether its client went away.
constexpr auto kWatchPoll = std::chrono::milliseconds(50);

// What the fake knows about each resource it serves.
struct ResourceInfo {
  const char* resource;  // plural, as in the path
  const char* group;     // "" for the core group
  const char* kind;
  bool create_on_update;      // PUT of a missing object creates it (strategy AllowCreateOnUpdate)
  bool unconditional_update;  // PUT without resourceVersion is allowed
};

constexpr ResourceInfo kLeases{"leases", "coordination.k8s.io", "Lease", true, false};
constexpr ResourceInfo kConfigMaps{"configmaps", "", "ConfigMap", false, true};
constexpr ResourceInfo kEndpoints{"endpoints", "", "Endpoints", true, true};
constexpr ResourceInfo kPods{"pods", "", "Pod", false, true};
constexpr ResourceInfo kCoreEvents{"events", "", "Event", false, true};
constexpr ResourceInfo kEvents{"events", "events.k8s.io", "Event", false, true};

std::string ApiVersion(const ResourceInfo& r) {
  return r.group[0] == '\0' ? "v1" : std::string(r.group) + "/v1";
}
// "leases.coordination.k8s.io" or "configmaps": how the apiserver names a resource in messages.
std::string Qualified(const ResourceInfo& r) {
  return r.group[0] == '\0' ? r.resource : std::string(r.resource) + "." + r.group;
}
// "Lease.coordination.k8s.io" or "ConfigMap": the name used in Invalid messages.
std::string QualifiedKind(const ResourceInfo& r) {
  return r.group[0] == '\0' ? r.kind : std::string(r.kind) + "." + r.group;
}

const ResourceInfo* FindResource(const std::string& name) {
  for (const ResourceInfo* r : {&kLeases, &kConfigMaps, &kEndpoints, &kPods, &kCoreEvents}) {
    if (name == r->resource) return r;
  }
  return nullptr;
}

std::string Key(const std::string& resource, const std::string& ns, const std::string& name) {
  return resource + "/" + ns + "/" + name;
}

// ---- JSON helpers ----------------------------------------------------------------------------

std::string Serialize(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Serialization with object members sorted, to compare two objects as the apiserver would
// (it re-encodes both sides, so member order never matters).
void SerializeCanonical(const Value& v, std::string* out) {
  if (v.IsObject()) {
    std::vector<const Value::Member*> members;
    for (const auto& m : v.GetObject()) members.push_back(&m);
    std::sort(members.begin(), members.end(), [](const auto* a, const auto* b) {
      return std::string_view(a->name.GetString(), a->name.GetStringLength()) <
             std::string_view(b->name.GetString(), b->name.GetStringLength());
    });
    out->push_back('{');
    for (const auto* m : members) {
      *out += Serialize(m->name) + ":";
      SerializeCanonical(m->value, out);
      out->push_back(',');
    }
    out->push_back('}');
  } else if (v.IsArray()) {
    out->push_back('[');
    for (const auto& e : v.GetArray()) {
      SerializeCanonical(e, out);
      out->push_back(',');
    }
    out->push_back(']');
  } else {
    *out += Serialize(v);
  }
}

std::string Canonical(const Value& v) {
  std::string out;
  SerializeCanonical(v, &out);
  return out;
}

// The member `name` of object `obj`, created as an empty object if missing or not an object.
Value& ObjectMember(Value& obj, const char* name, Document::AllocatorType& a) {
  auto it = obj.FindMember(name);
  if (it == obj.MemberEnd()) {
    obj.AddMember(Value(name, a), Value(rapidjson::kObjectType), a);
    it = obj.FindMember(name);
  } else if (!it->value.IsObject()) {
    it->value.SetObject();
  }
  return it->value;
}

void SetString(Value& obj, const char* name, const std::string& value, Document::AllocatorType& a) {
  auto it = obj.FindMember(name);
  if (it != obj.MemberEnd()) {
    it->value.SetString(value.c_str(), static_cast<rapidjson::SizeType>(value.size()), a);
  } else {
    obj.AddMember(Value(name, a), Value(value.c_str(), a), a);
  }
}

// A string member, "" when absent or not a string.
std::string GetString(const Value& obj, const char* name) {
  if (!obj.IsObject()) return "";
  const auto it = obj.FindMember(name);
  if (it == obj.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

const Value& Metadata(const Value& obj) {
  static const Value kEmpty(rapidjson::kObjectType);
  if (!obj.IsObject()) return kEmpty;
  const auto it = obj.FindMember("metadata");
  return it != obj.MemberEnd() && it->value.IsObject() ? it->value : kEmpty;
}

// RFC 7386 JSON merge patch.
void MergePatch(Value& target, const Value& patch, Document::AllocatorType& a) {
  if (!patch.IsObject()) {
    target.CopyFrom(patch, a);
    return;
  }
  if (!target.IsObject()) target.SetObject();
  for (const auto& m : patch.GetObject()) {
    auto it = target.FindMember(m.name);
    if (m.value.IsNull()) {
      if (it != target.MemberEnd()) target.RemoveMember(it);
    } else if (it != target.MemberEnd()) {
      MergePatch(it->value, m.value, a);
    } else {
      Value v(rapidjson::kObjectType);
      MergePatch(v, m.value, a);
      target.AddMember(Value(m.name, a), v, a);
    }
  }
}

std::string Rfc3339(SysTime t) {
  const time_t secs = std::chrono::system_clock::to_time_t(t);
  tm utc{};
  gmtime_r(&secs, &utc);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

// ---- Status bodies ---------------------------------------------------------------------------

struct Cause {
  std::string reason, message, field;
};

struct Details {
  std::string name, group, kind, uid;
  std::vector<Cause> causes;
  bool present = false;  // false: no "details" member at all (401, 503, ...)
};

Details DetailsFor(const ResourceInfo& r, const std::string& name) {
  Details d;
  d.present = true;
  d.name = name;
  d.group = r.group;
  d.kind = r.resource;
  return d;
}

// A metav1.Status as the apiserver encodes it: members in this order, empty ones omitted.
std::string StatusJson(int code, const std::string& reason, const std::string& message,
                       const Details& details, bool success = false) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> w(buffer);
  w.StartObject();
  w.Key("kind");
  w.String("Status");
  w.Key("apiVersion");
  w.String("v1");
  w.Key("metadata");
  w.StartObject();
  w.EndObject();
  w.Key("status");
  w.String(success ? "Success" : "Failure");
  if (!message.empty()) {
    w.Key("message");
    w.String(message.c_str());
  }
  if (!reason.empty()) {
    w.Key("reason");
    w.String(reason.c_str());
  }
  if (details.present) {
    w.Key("details");
    w.StartObject();
    const auto field = [&w](const char* key, const std::string& value) {
      if (value.empty()) return;
      w.Key(key);
      w.String(value.c_str());
    };
    field("name", details.name);
    field("group", details.group);
    field("kind", details.kind);
    field("uid", details.uid);
    if (!details.causes.empty()) {
      w.Key("causes");
      w.StartArray();
      for (const Cause& c : details.causes) {
        w.StartObject();
        field("reason", c.reason);
        field("message", c.message);
        field("field", c.field);
        w.EndObject();
      }
      w.EndArray();
    }
    w.EndObject();
  }
  if (!success) {
    w.Key("code");
    w.Int(code);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// What a handler answers. status 0 = drop the connection.
struct Answer {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

Answer Json(int status, std::string body) {
  return Answer{status, std::move(body), "application/json", {}};
}

Answer Failure(int code, const std::string& reason, const std::string& message,
               const Details& details = {}) {
  return Json(code, StatusJson(code, reason, message, details));
}

Answer NotFound(const ResourceInfo& r, const std::string& name) {
  return Failure(404, "NotFound", Qualified(r) + " \"" + name + "\" not found",
                 DetailsFor(r, name));
}

Answer Conflict(const ResourceInfo& r, const std::string& name, const std::string& why) {
  return Failure(409, "Conflict",
                 "Operation cannot be fulfilled on " + Qualified(r) + " \"" + name + "\": " + why,
                 DetailsFor(r, name));
}

constexpr const char* kOptimisticLockMessage =
    "the object has been modified; please apply your changes to the latest version and try "
    "again";

Answer BadRequest(const std::string& message) { return Failure(400, "BadRequest", message); }

Answer PathNotFound() {
  Details d;
  d.present = true;  // the apiserver sends "details":{} here
  return Failure(404, "NotFound", "the server could not find the requested resource", d);
}

// A field error for an Invalid answer.
struct FieldError {
  std::string field;
  std::string reason;  // FieldValueInvalid, FieldValueRequired, FieldValueForbidden
  std::string detail;  // "Invalid value: 0: must be greater than 0"
};

Answer Invalid(const ResourceInfo& r, const std::string& name,
               const std::vector<FieldError>& errors) {
  Details d;
  d.present = true;
  d.name = name;
  d.group = r.group;
  d.kind = r.kind;
  std::string list;
  for (const FieldError& e : errors) {
    d.causes.push_back({e.reason, e.detail, e.field});
    if (!list.empty()) list += ", ";
    list += e.field + ": " + e.detail;
  }
  if (errors.size() > 1) list = "[" + list + "]";
  return Failure(422, "Invalid", QualifiedKind(r) + " \"" + name + "\" is invalid: " + list, d);
}

// The usual reason and message of an injected error code.
std::pair<std::string, std::string> DefaultReason(int code) {
  switch (code) {
    case 400:
      return {"BadRequest", "injected bad request"};
    case 401:
      return {"Unauthorized", "Unauthorized"};
    case 403:
      return {"Forbidden", "injected forbidden"};
    case 404:
      return {"NotFound", "injected not found"};
    case 405:
      return {"MethodNotAllowed",
              "the server does not allow this method on the requested resource"};
    case 409:
      return {"Conflict", "injected conflict"};
    case 410:
      return {"Expired", "injected expiry"};
    case 422:
      return {"Invalid", "injected invalid"};
    case 429:
      return {"TooManyRequests", "Too many requests, please try again later."};
    case 500:
      return {"InternalError", "Internal error occurred: injected fault"};
    case 503:
      return {"ServiceUnavailable", "the server is currently unable to handle the request"};
    case 504:
      return {"Timeout",
              "the server was unable to return a response in the time allotted, but may still "
              "be processing the request"};
    default:
      return {"", "injected fault"};
  }
}

bool Matches(const std::string& rule_method, const std::string& prefix, const std::string& method,
             const std::string& path) {
  return (rule_method.empty() || rule_method == method) && path.rfind(prefix, 0) == 0;
}

// ---- Lease validation ----------------------------------------------------------------------

// metav1.MicroTime: Go's RFC3339Micro layout needs exactly 6 fraction digits and a zone ("Z" or
// "+hh:mm"). Hand-written, not std::regex (GCC 12's <regex> trips -Wmaybe-uninitialized).
bool IsMicroTime(const std::string& s) {
  // 'd' = a digit; anything else must match literally.
  static constexpr std::string_view kLayout = "dddd-dd-ddTdd:dd:dd.dddddd";
  if (s.size() < kLayout.size() + 1) return false;
  for (size_t i = 0; i < kLayout.size(); ++i) {
    const bool digit = s[i] >= '0' && s[i] <= '9';
    if (kLayout[i] == 'd' ? !digit : s[i] != kLayout[i]) return false;
  }
  const std::string_view zone = std::string_view(s).substr(kLayout.size());
  if (zone == "Z") return true;
  const auto digit = [](char c) { return c >= '0' && c <= '9'; };
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && digit(zone[1]) &&
         digit(zone[2]) && zone[3] == ':' && digit(zone[4]) && digit(zone[5]);
}

// Decoding errors are 400; semantic ones 422, as the apiserver splits them.
std::optional<Answer> ValidateLease(const Value& obj, const std::string& name) {
  const auto spec_it = obj.FindMember("spec");
  if (spec_it == obj.MemberEnd() || spec_it->value.IsNull()) return std::nullopt;
  const std::string decode_prefix = "Lease in version \"v1\" cannot be handled as a Lease: ";
  const Value& spec = spec_it->value;
  if (!spec.IsObject()) return BadRequest(decode_prefix + "spec: expected an object");

  for (const char* field : {"acquireTime", "renewTime"}) {
    const auto it = spec.FindMember(field);
    if (it == spec.MemberEnd() || it->value.IsNull()) continue;
    if (!it->value.IsString()) {
      return BadRequest(decode_prefix + "spec." + field + ": expected a string");
    }
    const std::string v(it->value.GetString(), it->value.GetStringLength());
    if (!IsMicroTime(v)) {
      return BadRequest(decode_prefix + "parsing time \"" + v +
                        "\" as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse \"" + v +
                        "\" as RFC3339Micro");
    }
  }
  std::vector<FieldError> errors;
  for (const char* field : {"leaseDurationSeconds", "leaseTransitions"}) {
    const auto it = spec.FindMember(field);
    if (it == spec.MemberEnd() || it->value.IsNull()) continue;
    if (!it->value.IsInt()) {
      return BadRequest(decode_prefix + "spec." + field + ": expected an int32");
    }
    const int v = it->value.GetInt();
    const bool duration = std::string_view(field) == "leaseDurationSeconds";
    if (duration ? v <= 0 : v < 0) {
      errors.push_back(
          {std::string("spec.") + field, "FieldValueInvalid",
           "Invalid value: " + std::to_string(v) +
               (duration ? ": must be greater than 0" : ": must be greater than or equal to 0")});
    }
  }
  for (const char* field : {"holderIdentity", "strategy", "preferredHolder"}) {
    const auto it = spec.FindMember(field);
    if (it != spec.MemberEnd() && !it->value.IsNull() && !it->value.IsString()) {
      return BadRequest(decode_prefix + "spec." + field + ": expected a string");
    }
  }
  if (!GetString(spec, "preferredHolder").empty() && GetString(spec, "strategy").empty()) {
    errors.push_back({"spec.preferredHolder", "FieldValueForbidden",
                      "Forbidden: preferredHolder is only allowed if strategy is set"});
  }
  if (!errors.empty()) return Invalid(kLeases, name, errors);
  return std::nullopt;
}

// ---- watches ---------------------------------------------------------------------------------

struct WatchStream {
  const ResourceInfo* info;
  std::string ns;
  std::string name;  // "" = every object of the namespace
  bool bookmarks = false;
  std::deque<std::string> lines;
  bool finish = false;  // end the stream once `lines` is drained
  SteadyTime end;
  int fd = -1;
};

std::string WatchLine(const std::string& type, const std::string& object_json) {
  return "{\"type\":\"" + type + "\",\"object\":" + object_json + "}\n";
}

// True when the peer closed its side (the client gave up on the watch).
bool PeerGone(int fd) {
  if (fd < 0) return false;
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  if (::poll(&p, 1, 0) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

// Counts accepted connections: httplib hands each accepted socket to the task queue.
class CountingThreadPool final : public httplib::ThreadPool {
 public:
  CountingThreadPool(size_t n, std::atomic<int>* counter) : ThreadPool(n), counter_(counter) {}
  void enqueue(std::function<void()> fn) override {
    counter_->fetch_add(1);
    ThreadPool::enqueue(std::move(fn));
  }

 private:
  std::atomic<int>* counter_;
};

struct Route {
  enum Kind { kUnknown, kDiscovery, kVersion, kCollection, kObject } kind = kUnknown;
  const ResourceInfo* info = nullptr;
  std::string ns, name;
};

Route ParseRoute(const std::string& path) {
  std::vector<std::string> seg;
  size_t start = 1;
  while (start <= path.size()) {
    const size_t slash = std::min(path.find('/', start), path.size());
    seg.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  while (!seg.empty() && seg.back().empty()) seg.pop_back();
  Route r;
  if (seg.size() == 1 && seg[0] == "version") {
    r.kind = Route::kVersion;
    return r;
  }
  // Where "namespaces" starts, and which resource table applies.
  size_t ns_at = 0;
  if (seg.size() >= 2 && seg[0] == "api" && seg[1] == "v1") {
    ns_at = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis" && seg[2] == "v1" &&
             (seg[1] == kLeases.group || seg[1] == kEvents.group)) {
    if (seg.size() == 3) {
      if (seg[1] == kLeases.group) r.kind = Route::kDiscovery;
      return r;
    }
    ns_at = 3;
  } else {
    return r;
  }
  if (seg.size() < ns_at + 3 || seg.size() > ns_at + 4 || seg[ns_at] != "namespaces") return r;
  const std::string& resource = seg[ns_at + 2];
  if (ns_at == 3) {
    const ResourceInfo* info = seg[1] == kLeases.group ? &kLeases : &kEvents;
    if (resource != info->resource) return r;
    r.info = info;
  } else {
    r.info = FindResource(resource);
    if (r.info == nullptr || r.info == &kLeases) return r;
  }
  r.ns = seg[ns_at + 1];
  if (seg.size() == ns_at + 4) {
    r.name = seg[ns_at + 3];
    r.kind = Route::kObject;
  } else {
    r.kind = Route::kCollection;
  }
  return r;
}

}  // namespace

// ---- the server ------------------------------------------------------------------------------

struct FakeApiServer::Impl {
  struct Stored {
    std::string json;
    const ResourceInfo* info;
  };
  struct HistoryEntry {
    int64_t rv;
    const ResourceInfo* info;
    std::string ns, name, line;
  };

  explicit Impl(FakeApiServerOptions opts)
      : options(std::move(opts)),
        clock(options.clock != nullptr ? options.clock : &real_clock),
        tokens(options.tokens),
        lease_api(options.lease_api),
        rng(std::random_device{}()) {}

  FakeApiServerOptions options;
  RealClock real_clock;
  const Clock* clock;
  std::unique_ptr<httplib::SSLServer> server;
  std::thread listener;
  std::atomic<int> connections{0};

  mutable std::mutex mu;
  mutable std::condition_variable cv;  // held requests, watch streams, request log waiters
  bool stopping = false;
  int64_t rv = 1000;         // the last resourceVersion handed out (etcd's revision)
  int64_t compacted_rv = 0;  // watches from below this get 410
  std::map<std::string, Stored> objects;
  std::vector<std::string> events;
  std::vector<HistoryEntry> history;
  std::set<std::shared_ptr<WatchStream>> streams;
  std::map<std::string, std::string> tokens;
  bool accept_client_certs = true;
  std::set<std::pair<std::string, std::string>> denies;
  std::vector<Fault> faults;
  std::vector<Hang> hangs;
  int held = 0;
  uint64_t release_generation = 0;
  DownMode down = DownMode::kUp;
  bool lease_api;
  std::vector<std::shared_ptr<RecordedRequest>> log;
  size_t answered = 0;
  std::mt19937_64 rng;

  // --- helpers, called with mu held ---

  std::string NextRv() { return std::to_string(++rv); }

  std::string NewUid() {
    std::uniform_int_distribution<uint64_t> d;
    char buf[40];
    const uint64_t a = d(rng), b = d(rng);
    snprintf(buf, sizeof buf, "%08x-%04x-4%03x-a%03x-%012llx", static_cast<unsigned>(a >> 32),
             static_cast<unsigned>((a >> 16) & 0xFFFF), static_cast<unsigned>(a & 0xFFF),
             static_cast<unsigned>(b >> 52),
             static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFull));
    return buf;
  }

  // Fills kind/apiVersion and the namespace/name of a stored object.
  void Normalize(Document& doc, const ResourceInfo& info, const std::string& ns,
                 const std::string& name) {
    auto& a = doc.GetAllocator();
    SetString(doc, "kind", info.kind, a);
    SetString(doc, "apiVersion", ApiVersion(info), a);
    Value& meta = ObjectMember(doc, "metadata", a);
    SetString(meta, "name", name, a);
    SetString(meta, "namespace", ns, a);
  }

  // Stores `doc` with a fresh resourceVersion and tells the watches. Returns the stored JSON.
  std::string Store(Document& doc, const ResourceInfo& info, const std::string& ns,
                    const std::string& name, const char* event_type) {
    const std::string new_rv = NextRv();
    SetString(ObjectMember(doc, "metadata", doc.GetAllocator()), "resourceVersion", new_rv,
              doc.GetAllocator());
    std::string json = Serialize(doc);
    objects[Key(info.resource, ns, name)] = Stored{json, &info};
    Emit(info, ns, name, event_type, json);
    return json;
  }

  void Emit(const ResourceInfo& info, const std::string& ns, const std::string& name,
            const char* type, const std::string& json) {
    HistoryEntry entry{rv, &info, ns, name, WatchLine(type, json)};
    for (const auto& s : streams) {
      if (s->info->resource == std::string_view(info.resource) && s->ns == ns &&
          (s->name.empty() || s->name == name)) {
        s->lines.push_back(entry.line);
      }
    }
    history.push_back(std::move(entry));
    cv.notify_all();
  }

  // --- request handling ---

  void Handle(const httplib::Request& req, httplib::Response& res) {
    auto rec = std::make_shared<RecordedRequest>();
    rec->method = req.method;
    rec->path = req.path;
    const size_t q = req.target.find('?');
    if (q != std::string::npos) rec->query = req.target.substr(q + 1);
    rec->body = req.body;
    const std::string auth = req.get_header_value("Authorization");
    if (auth.rfind("Bearer ", 0) == 0) rec->token = auth.substr(7);
    rec->client_cert_cn = ClientCertCn(req.ssl);
    rec->content_type = req.get_header_value("Content-Type");
    rec->user_agent = req.get_header_value("User-Agent");
    rec->remote_port = req.remote_port;
    {
      std::lock_guard<std::mutex> l(mu);
      log.push_back(rec);
    }
    const Answer answer = Serve(req, res, *rec);
    if (answer.status == 0) {
      // Close the connection under httplib's feet: its response write fails and the client
      // sees the connection end without an answer.
      if (req.ssl != nullptr) ::shutdown(SSL_get_fd(req.ssl), SHUT_RDWR);
      res.status = 500;
    } else if (answer.status > 0) {
      res.status = answer.status;
      res.set_content(answer.body, answer.content_type);
      for (const auto& [k, v] : answer.headers) res.set_header(k, v);
    }  // < 0: a watch; `res` was set up by the watch handler
    std::lock_guard<std::mutex> l(mu);
    rec->status = answer.status < 0 ? 200 : answer.status;
    ++answered;
    cv.notify_all();
  }

  static std::string ClientCertCn(const SSL* ssl) {
    if (ssl == nullptr) return "";
    X509* cert = SSL_get1_peer_certificate(ssl);
    if (cert == nullptr) return "";
    std::string cn;
    if (SSL_get_verify_result(ssl) == X509_V_OK) {
      char buf[256] = {0};
      if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert), NID_commonName, buf, sizeof buf) >
          0) {
        cn = buf;
      }
    }
    X509_free(cert);
    return cn;
  }

  Answer Serve(const httplib::Request& req, httplib::Response& res, const RecordedRequest& rec) {
    std::unique_lock<std::mutex> l(mu);
    if (stopping) return Answer{0, "", "", {}};
    if (down == DownMode::kServiceUnavailable) {
      return Failure(503, "ServiceUnavailable",
                     "the server is currently unable to handle the request");
    }
    if (down == DownMode::kDropConnections) return Answer{0, "", "", {}};

    for (auto it = faults.begin(); it != faults.end(); ++it) {
      if (it->count == 0 || !Matches(it->method, it->path_prefix, rec.method, rec.path)) continue;
      const Fault f = *it;
      if (it->count > 0 && --it->count == 0) faults.erase(it);
      Answer a;
      a.status = f.http_status;
      if (f.raw_body) {
        a.body = *f.raw_body;
        a.content_type = "text/plain";
      } else {
        auto [reason, message] = DefaultReason(f.http_status);
        if (!f.reason.empty()) reason = f.reason;
        if (!f.message.empty()) message = f.message;
        a.body = StatusJson(f.http_status, reason, message, {});
      }
      if (f.retry_after_seconds) {
        a.headers.emplace_back("Retry-After", std::to_string(*f.retry_after_seconds));
      }
      return a;
    }

    for (auto it = hangs.begin(); it != hangs.end(); ++it) {
      if (it->count == 0 || !Matches(it->method, it->path_prefix, rec.method, rec.path)) continue;
      const Duration duration = it->duration;
      if (it->count > 0 && --it->count == 0) hangs.erase(it);
      ++held;
      cv.notify_all();
      const uint64_t generation = release_generation;
      cv.wait_for(l, duration, [&] { return stopping || release_generation != generation; });
      --held;
      if (stopping) return Answer{0, "", "", {}};
      break;
    }

    // Authentication: a verified client certificate or a known bearer token.
    std::string user;
    if (accept_client_certs && !rec.client_cert_cn.empty()) {
      user = rec.client_cert_cn;
    } else if (const auto t = tokens.find(rec.token); !rec.token.empty() && t != tokens.end()) {
      user = t->second;
    } else {
      return Failure(401, "Unauthorized", "Unauthorized");
    }

    const Route route = ParseRoute(rec.path);
    if (!lease_api && rec.path.rfind("/apis/coordination.k8s.io", 0) == 0) return PathNotFound();
    switch (route.kind) {
      case Route::kUnknown:
        return PathNotFound();
      case Route::kVersion:
        if (rec.method != "GET") return MethodNotAllowed();
        return Json(200, R"({"major":"1","minor":"30","gitVersion":"v1.30.0-fake"})");
      case Route::kDiscovery:
        if (rec.method != "GET") return MethodNotAllowed();
        return Json(200, kLeaseDiscovery);
      case Route::kCollection:
      case Route::kObject:
        break;
    }

    const bool watch =
        req.get_param_value("watch") == "1" || req.get_param_value("watch") == "true";
    const std::string verb = Verb(rec.method, route.kind == Route::kObject, watch);
    if (verb.empty()) return MethodNotAllowed();
    if (denies.count({verb, route.info->resource}) > 0) {
      return Forbidden(*route.info, route.name, route.ns, user, verb);
    }
    const ResourceInfo& info = *route.info;
    if (verb == "get") return GetObject(info, route.ns, route.name);
    if (verb == "list") return List(info, route.ns, req.get_param_value("fieldSelector"));
    if (verb == "watch") return StartWatch(info, route.ns, req, res);
    if (verb == "create") return Create(info, route.ns, rec.body);
    if (verb == "update") return Update(info, route.ns, route.name, rec.body);
    if (verb == "patch") return Patch(info, route.ns, route.name, rec.body, rec.content_type);
    return DeleteObject(info, route.ns, route.name);
  }

  static std::string Verb(const std::string& method, bool object, bool watch) {
    if (method == "GET") return watch ? "watch" : object ? "get" : "list";
    if (method == "POST" && !object) return "create";
    if (method == "PUT" && object) return "update";
    if (method == "PATCH" && object) return "patch";
    if (method == "DELETE" && object) return "delete";
    return "";
  }

  static Answer MethodNotAllowed() {
    return Failure(405, "MethodNotAllowed",
                   "the server does not allow this method on the requested resource",
                   Details{"", "", "", "", {}, true});
  }

  static Answer Forbidden(const ResourceInfo& info, const std::string& name, const std::string& ns,
                          const std::string& user, const std::string& verb) {
    std::string message = Qualified(info);
    if (!name.empty()) message += " \"" + name + "\"";
    message += " is forbidden: User \"" + user + "\" cannot " + verb + " resource \"" +
               info.resource + "\" in API group \"" + info.group + "\" in the namespace \"" + ns +
               "\"";
    return Failure(403, "Forbidden", message, DetailsFor(info, name));
  }

  static constexpr const char* kLeaseDiscovery =
      R"({"kind":"APIResourceList","apiVersion":"v1","groupVersion":"coordination.k8s.io/v1",)"
      R"("resources":[{"name":"leases","singularName":"lease","namespaced":true,"kind":"Lease",)"
      R"("verbs":["create","delete","deletecollection","get","list","patch","update","watch"],)"
      R"("storageVersionHash":"gqkMMb/YqFM="}]})";

  Answer GetObject(const ResourceInfo& info, const std::string& ns, const std::string& name) {
    const auto it = objects.find(Key(info.resource, ns, name));
    if (it == objects.end()) return NotFound(info, name);
    return Json(200, it->second.json);
  }

  // Only the selector leasehold uses: "metadata.name=<name>" (or none).
  static bool ParseNameSelector(const std::string& selector, std::string* name) {
    name->clear();
    if (selector.empty()) return true;
    static const std::string kPrefix = "metadata.name=";
    if (selector.rfind(kPrefix, 0) != 0) return false;
    *name = selector.substr(kPrefix.size());
    return true;
  }

  Answer List(const ResourceInfo& info, const std::string& ns, const std::string& selector) {
    std::string name;
    if (!ParseNameSelector(selector, &name)) {
      return BadRequest("fake apiserver: unsupported fieldSelector \"" + selector + "\"");
    }
    std::string items;
    const std::string prefix = Key(info.resource, ns, "");
    for (auto it = objects.lower_bound(prefix);
         it != objects.end() && it->first.rfind(prefix, 0) == 0; ++it) {
      if (!name.empty() && it->first != prefix + name) continue;
      if (!items.empty()) items += ",";
      items += it->second.json;
    }
    return Json(200, std::string("{\"kind\":\"") + info.kind + "List\",\"apiVersion\":\"" +
                         ApiVersion(info) + "\",\"metadata\":{\"resourceVersion\":\"" +
                         std::to_string(rv) + "\"},\"items\":[" + items + "]}");
  }

  // Parses a request body as a JSON object; the apiserver's 400 otherwise.
  static std::optional<Answer> Decode(const std::string& body, const ResourceInfo& info,
                                      Document* doc) {
    doc->Parse(body.c_str(), body.size());
    if (doc->HasParseError()) {
      return BadRequest(std::string(info.kind) + " in version \"v1\" cannot be handled as a " +
                        info.kind + ": json parse error at offset " +
                        std::to_string(doc->GetErrorOffset()) + ": " +
                        rapidjson::GetParseError_En(doc->GetParseError()));
    }
    if (!doc->IsObject()) {
      return BadRequest(std::string(info.kind) + " in version \"v1\" cannot be handled as a " +
                        info.kind + ": expected a JSON object");
    }
    return std::nullopt;
  }

  static std::optional<Answer> Validate(const ResourceInfo& info, const Value& obj,
                                        const std::string& name) {
    if (&info == &kLeases) return ValidateLease(obj, name);
    return std::nullopt;
  }

  Answer Create(const ResourceInfo& info, const std::string& ns, const std::string& body) {
    Document doc;
    if (auto error = Decode(body, info, &doc)) return *error;
    const Value& meta = Metadata(doc);
    std::string name = GetString(meta, "name");
    if (name.empty() && !GetString(meta, "generateName").empty()) {
      static constexpr char kChars[] = "bcdfghjklmnpqrstvwxz2456789";
      name = GetString(meta, "generateName");
      for (int i = 0; i < 5; ++i) name += kChars[rng() % (sizeof kChars - 1)];
    }
    if (name.empty()) {
      return Invalid(info, "",
                     {{"metadata.name", "FieldValueRequired",
                       "Required value: name or generateName is required"}});
    }
    const std::string body_ns = GetString(meta, "namespace");
    if (!body_ns.empty() && body_ns != ns) {
      return BadRequest(
          "the namespace of the provided object does not match the namespace sent on the "
          "request");
    }
    if (!GetString(meta, "resourceVersion").empty()) {
      return Failure(500, "InternalError",
                     "Internal error occurred: resourceVersion should not be set on objects to "
                     "be created",
                     Details{"",
                             "",
                             "",
                             "",
                             {{"",
                               "resourceVersion should not be set on "
                               "objects to be created",
                               ""}},
                             true});
    }
    if (objects.count(Key(info.resource, ns, name)) > 0) {
      return Failure(409, "AlreadyExists", Qualified(info) + " \"" + name + "\" already exists",
                     DetailsFor(info, name));
    }
    if (auto error = Validate(info, doc, name)) return *error;
    Normalize(doc, info, ns, name);
    auto& a = doc.GetAllocator();
    Value& m = ObjectMember(doc, "metadata", a);
    SetString(m, "uid", NewUid(), a);
    SetString(m, "creationTimestamp", Rfc3339(clock->SystemNow()), a);
    const std::string json = Store(doc, info, ns, name, "ADDED");
    if (info.resource == std::string_view("events")) events.push_back(json);
    return Json(201, json);
  }

  Answer Update(const ResourceInfo& info, const std::string& ns, const std::string& name,
                const std::string& body) {
    Document doc;
    if (auto error = Decode(body, info, &doc)) return *error;
    const Value& meta = Metadata(doc);
    const std::string body_name = GetString(meta, "name");
    if (body_name != name) {
      return BadRequest("the name of the object (" + body_name +
                        ") does not match the name on the URL (" + name + ")");
    }
    const std::string body_ns = GetString(meta, "namespace");
    if (!body_ns.empty() && body_ns != ns) {
      return BadRequest(
          "the namespace of the provided object does not match the namespace sent on the "
          "request");
    }
    const std::string uid = GetString(meta, "uid");
    const std::string sent_rv = GetString(meta, "resourceVersion");
    const auto it = objects.find(Key(info.resource, ns, name));
    auto& a = doc.GetAllocator();
    if (it == objects.end()) {
      if (!info.create_on_update) return NotFound(info, name);
      // Created by PUT: a uid precondition cannot hold for an object that does not exist.
      if (!uid.empty()) {
        return Conflict(
            info, name,
            "Precondition failed: UID in precondition: " + uid + ", UID in object meta: ");
      }
      if (auto error = Validate(info, doc, name)) return *error;
      Normalize(doc, info, ns, name);
      Value& m = ObjectMember(doc, "metadata", a);
      SetString(m, "uid", NewUid(), a);
      SetString(m, "creationTimestamp", Rfc3339(clock->SystemNow()), a);
      return Json(201, Store(doc, info, ns, name, "ADDED"));
    }

    Document existing;
    existing.Parse(it->second.json.c_str(), it->second.json.size());
    const Value& old_meta = Metadata(existing);
    const std::string old_rv = GetString(old_meta, "resourceVersion");
    if (sent_rv.empty() && !info.unconditional_update) {
      return Invalid(info, name,
                     {{"metadata.resourceVersion", "FieldValueInvalid",
                       "Invalid value: 0x0: must be specified for an update"}});
    }
    if (!sent_rv.empty() && sent_rv != old_rv) return Conflict(info, name, kOptimisticLockMessage);
    const std::string old_uid = GetString(old_meta, "uid");
    if (!uid.empty() && uid != old_uid) {
      return Conflict(
          info, name,
          "Precondition failed: UID in precondition: " + uid + ", UID in object meta: " + old_uid);
    }
    if (auto error = Validate(info, doc, name)) return *error;
    return Replace(info, ns, name, existing, doc);
  }

  // Stores `doc` over `existing`, keeping the server-owned metadata; a change-free write keeps
  // the resourceVersion and sends no watch event, as the apiserver does.
  Answer Replace(const ResourceInfo& info, const std::string& ns, const std::string& name,
                 const Document& existing, Document& doc) {
    auto& a = doc.GetAllocator();
    Normalize(doc, info, ns, name);
    Value& m = ObjectMember(doc, "metadata", a);
    const Value& old_meta = Metadata(existing);
    SetString(m, "uid", GetString(old_meta, "uid"), a);
    SetString(m, "creationTimestamp", GetString(old_meta, "creationTimestamp"), a);
    SetString(m, "resourceVersion", GetString(old_meta, "resourceVersion"), a);
    if (Canonical(doc) == Canonical(existing)) return Json(200, Serialize(existing));
    return Json(200, Store(doc, info, ns, name, "MODIFIED"));
  }

  Answer Patch(const ResourceInfo& info, const std::string& ns, const std::string& name,
               const std::string& body, const std::string& content_type) {
    const std::string type = content_type.substr(0, content_type.find(';'));
    if (type != "application/merge-patch+json" &&
        type != "application/strategic-merge-patch+json") {
      return Failure(415, "UnsupportedMediaType",
                     "the fake apiserver supports only merge patches, not \"" + type + "\"");
    }
    const auto it = objects.find(Key(info.resource, ns, name));
    if (it == objects.end()) return NotFound(info, name);
    Document patch;
    if (auto error = Decode(body, info, &patch)) return *error;
    Document existing;
    existing.Parse(it->second.json.c_str(), it->second.json.size());
    const std::string sent_rv = GetString(Metadata(patch), "resourceVersion");
    if (!sent_rv.empty() && sent_rv != GetString(Metadata(existing), "resourceVersion")) {
      return Conflict(info, name, kOptimisticLockMessage);
    }
    Document doc;
    doc.CopyFrom(existing, doc.GetAllocator());
    MergePatch(doc, patch, doc.GetAllocator());
    if (auto error = Validate(info, doc, name)) return *error;
    return Replace(info, ns, name, existing, doc);
  }

  Answer DeleteObject(const ResourceInfo& info, const std::string& ns, const std::string& name) {
    const auto it = objects.find(Key(info.resource, ns, name));
    if (it == objects.end()) return NotFound(info, name);
    Document doc;
    doc.Parse(it->second.json.c_str(), it->second.json.size());
    const std::string uid = GetString(Metadata(doc), "uid");
    objects.erase(it);
    // The DELETED event carries the deletion's revision.
    SetString(ObjectMember(doc, "metadata", doc.GetAllocator()), "resourceVersion", NextRv(),
              doc.GetAllocator());
    Emit(info, ns, name, "DELETED", Serialize(doc));
    Details d = DetailsFor(info, name);
    d.uid = uid;
    return Json(200, StatusJson(200, "", "", d, /*success=*/true));
  }

  Answer StartWatch(const ResourceInfo& info, const std::string& ns, const httplib::Request& req,
                    httplib::Response& res) {
    auto stream = std::make_shared<WatchStream>();
    stream->info = &info;
    stream->ns = ns;
    if (!ParseNameSelector(req.get_param_value("fieldSelector"), &stream->name)) {
      return BadRequest("fake apiserver: unsupported fieldSelector \"" +
                        req.get_param_value("fieldSelector") + "\"");
    }
    const std::string allow = req.get_param_value("allowWatchBookmarks");
    stream->bookmarks = allow == "true" || allow == "1";
    int timeout = kDefaultWatchTimeoutSeconds;
    if (const std::string t = req.get_param_value("timeoutSeconds"); !t.empty()) {
      try {
        timeout = std::stoi(t);
      } catch (const std::exception&) {
        return BadRequest("invalid timeoutSeconds \"" + t + "\"");
      }
    }
    stream->end = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
    stream->fd = req.ssl != nullptr ? SSL_get_fd(req.ssl) : -1;

    const std::string from = req.get_param_value("resourceVersion");
    const std::string prefix = Key(info.resource, ns, "");
    if (from.empty() || from == "0") {
      // "Start at most recent": the current state as synthetic ADDED events first.
      for (auto it = objects.lower_bound(prefix);
           it != objects.end() && it->first.rfind(prefix, 0) == 0; ++it) {
        if (!stream->name.empty() && it->first != prefix + stream->name) continue;
        stream->lines.push_back(WatchLine("ADDED", it->second.json));
      }
    } else {
      int64_t since = 0;
      try {
        since = std::stoll(from);
      } catch (const std::exception&) {
        return BadRequest("invalid resourceVersion \"" + from + "\"");
      }
      if (since < compacted_rv) {
        stream->lines.push_back(
            WatchLine("ERROR", StatusJson(410, "Expired",
                                          "too old resource version: " + from + " (" +
                                              std::to_string(compacted_rv) + ")",
                                          {})));
        stream->finish = true;
      } else {
        for (const HistoryEntry& e : history) {
          if (e.rv > since && e.info->resource == std::string_view(info.resource) && e.ns == ns &&
              (stream->name.empty() || e.name == stream->name)) {
            stream->lines.push_back(e.line);
          }
        }
      }
    }
    streams.insert(stream);

    res.status = 200;
    res.set_chunked_content_provider(
        "application/json",
        [this, stream](size_t, httplib::DataSink& sink) { return Pump(*stream, sink); },
        [this, stream](bool) {
          std::lock_guard<std::mutex> l(mu);
          streams.erase(stream);
          cv.notify_all();
        });
    return Answer{-1, "", "", {}};
  }

  // Called repeatedly by httplib while it returns true: writes what is queued, or waits.
  bool Pump(WatchStream& s, httplib::DataSink& sink) {
    std::unique_lock<std::mutex> l(mu);
    while (true) {
      if (!s.lines.empty()) {
        std::deque<std::string> lines;
        lines.swap(s.lines);
        l.unlock();
        for (const std::string& line : lines) {
          if (!sink.write(line.data(), line.size())) return false;
        }
        return true;
      }
      if (stopping || s.finish || std::chrono::steady_clock::now() >= s.end) {
        l.unlock();
        sink.done();
        return true;
      }
      cv.wait_for(l, kWatchPoll);
      if (PeerGone(s.fd)) return false;
    }
  }
};

// ---- public API ----------------------------------------------------------------------------

FakeApiServer::FakeApiServer(FakeApiServerOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {
  // A client that goes away mid-answer must not kill the test process.
  ::signal(SIGPIPE, SIG_IGN);
  Impl* impl = impl_.get();
  const FakeApiServerOptions& o = impl->options;
  impl->server = std::make_unique<httplib::SSLServer>([&o](SSL_CTX& ctx) {
    SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(&ctx, o.cert_file.c_str()) != 1) return false;
    if (SSL_CTX_use_PrivateKey_file(&ctx, o.key_file.c_str(), SSL_FILETYPE_PEM) != 1) return false;
    if (SSL_CTX_load_verify_locations(&ctx, o.client_ca_file.c_str(), nullptr) != 1) return false;
    SSL_CTX_set_client_CA_list(&ctx, SSL_load_client_CA_file(o.client_ca_file.c_str()));
    // Ask for a client certificate but do not require one, as the apiserver does; one that does
    // not verify fails the handshake.
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER, nullptr);
    // Needed for session resumption (curl resumes on reconnect) once peers are verified;
    // without it OpenSSL fails the resumed handshake with an internal-error alert.
    static constexpr unsigned char kSessionContext[] = "leasehold-fake-apiserver";
    SSL_CTX_set_session_id_context(&ctx, kSessionContext, sizeof kSessionContext - 1);
    return true;
  });
  if (!impl->server->is_valid()) {
    throw std::runtime_error("fake apiserver: cannot load TLS files (" + o.cert_file + ", " +
                             o.key_file + ", " + o.client_ca_file + ")");
  }
  impl->server->new_task_queue = [impl] {
    return new CountingThreadPool(kServerThreads, &impl->connections);
  };
  impl->server->set_keep_alive_max_count(1000000);
  impl->server->set_keep_alive_timeout(kKeepAliveSeconds);
  impl->server->set_tcp_nodelay(true);  // no Nagle delay between headers and body
  const auto handler = [impl](const httplib::Request& req, httplib::Response& res) {
    impl->Handle(req, res);
  };
  impl->server->Get(".*", handler);
  impl->server->Post(".*", handler);
  impl->server->Put(".*", handler);
  impl->server->Patch(".*", handler);
  impl->server->Delete(".*", handler);

  port_ = impl->server->bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("fake apiserver: cannot bind 127.0.0.1");
  impl->listener = std::thread([impl] { impl->server->listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so wait for it (start-up, not an algorithm).
  while (!impl->server->is_running()) std::this_thread::yield();
}

FakeApiServer::~FakeApiServer() {
  {
    std::lock_guard<std::mutex> l(impl_->mu);
    impl_->stopping = true;
    impl_->cv.notify_all();
  }
  impl_->server->stop();
  if (impl_->listener.joinable()) impl_->listener.join();
}

std::string FakeApiServer::url() const { return "https://127.0.0.1:" + std::to_string(port_); }

kube::ClusterConfig FakeApiServer::ClientConfig(const std::string& token) const {
  kube::ClusterConfig config;
  config.server = url();
  config.ca_file = TestCert("ca.crt");
  config.token = token;
  config.default_namespace = "ns";
  config.source = "fake apiserver";
  return config;
}

std::optional<std::string> FakeApiServer::Get(const std::string& resource, const std::string& ns,
                                              const std::string& name) const {
  std::lock_guard<std::mutex> l(impl_->mu);
  const auto it = impl_->objects.find(Key(resource, ns, name));
  if (it == impl_->objects.end()) return std::nullopt;
  return it->second.json;
}

std::string FakeApiServer::Put(const std::string& resource, const std::string& ns,
                               const std::string& name, const std::string& json) {
  const ResourceInfo* info = FindResource(resource);
  if (info == nullptr) throw std::invalid_argument("fake apiserver: unknown resource " + resource);
  Document doc;
  doc.Parse(json.c_str(), json.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    throw std::invalid_argument("fake apiserver: Put needs a JSON object");
  }
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->Normalize(doc, *info, ns, name);
  auto& a = doc.GetAllocator();
  Value& m = ObjectMember(doc, "metadata", a);
  const auto it = impl_->objects.find(Key(resource, ns, name));
  if (it != impl_->objects.end()) {
    Document old;
    old.Parse(it->second.json.c_str(), it->second.json.size());
    SetString(m, "uid", GetString(Metadata(old), "uid"), a);
    SetString(m, "creationTimestamp", GetString(Metadata(old), "creationTimestamp"), a);
  } else {
    if (GetString(m, "uid").empty()) SetString(m, "uid", impl_->NewUid(), a);
    SetString(m, "creationTimestamp", Rfc3339(impl_->clock->SystemNow()), a);
  }
  const char* type = it != impl_->objects.end() ? "MODIFIED" : "ADDED";
  return impl_->Store(doc, *info, ns, name, type);
}

std::string FakeApiServer::Bump(const std::string& resource, const std::string& ns,
                                const std::string& name, const std::string& merge_patch) {
  Document patch;
  patch.Parse(merge_patch.c_str(), merge_patch.size());
  if (patch.HasParseError() || !patch.IsObject()) {
    throw std::invalid_argument("fake apiserver: Bump needs a JSON object merge patch");
  }
  std::lock_guard<std::mutex> l(impl_->mu);
  const auto it = impl_->objects.find(Key(resource, ns, name));
  if (it == impl_->objects.end()) return "";
  Document doc;
  doc.Parse(it->second.json.c_str(), it->second.json.size());
  MergePatch(doc, patch, doc.GetAllocator());
  const ResourceInfo& info = *it->second.info;
  impl_->Normalize(doc, info, ns, name);
  return impl_->Store(doc, info, ns, name, "MODIFIED");
}

bool FakeApiServer::Delete(const std::string& resource, const std::string& ns,
                           const std::string& name) {
  const ResourceInfo* info = FindResource(resource);
  if (info == nullptr) return false;
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->DeleteObject(*info, ns, name).status == 200;
}

std::string FakeApiServer::ResourceVersion(const std::string& resource, const std::string& ns,
                                           const std::string& name) const {
  const std::optional<std::string> json = Get(resource, ns, name);
  if (!json) return "";
  Document doc;
  doc.Parse(json->c_str(), json->size());
  return GetString(Metadata(doc), "resourceVersion");
}

std::vector<std::string> FakeApiServer::Events() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->events;
}

void FakeApiServer::Compact() {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->compacted_rv = impl_->rv;
  impl_->history.clear();
}

void FakeApiServer::EndWatches() {
  std::lock_guard<std::mutex> l(impl_->mu);
  for (const auto& stream : impl_->streams) stream->finish = true;
  impl_->cv.notify_all();
}

void FakeApiServer::SetTokens(std::map<std::string, std::string> tokens) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->tokens = std::move(tokens);
}

void FakeApiServer::SetAcceptClientCerts(bool accept) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->accept_client_certs = accept;
}

void FakeApiServer::Deny(const std::string& verb, const std::string& resource) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->denies.insert({verb, resource});
}

void FakeApiServer::ClearDenies() {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->denies.clear();
}

void FakeApiServer::InjectFault(Fault fault) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->faults.push_back(std::move(fault));
}

void FakeApiServer::InjectHang(Hang hang) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->hangs.push_back(std::move(hang));
}

void FakeApiServer::ClearFaults() {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->faults.clear();
  impl_->hangs.clear();
}

void FakeApiServer::ReleaseHangs() {
  std::lock_guard<std::mutex> l(impl_->mu);
  ++impl_->release_generation;
  impl_->cv.notify_all();
}

int FakeApiServer::held() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return impl_->held;
}

bool FakeApiServer::WaitForHeld(int n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> l(impl_->mu);
  return impl_->cv.wait_for(l, timeout, [&] { return impl_->held >= n; });
}

void FakeApiServer::SetDown(DownMode mode) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->down = mode;
}

void FakeApiServer::SetLeaseApi(bool enabled) {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->lease_api = enabled;
}

void FakeApiServer::SendBookmarks() {
  std::lock_guard<std::mutex> l(impl_->mu);
  for (const auto& s : impl_->streams) {
    if (!s->bookmarks) continue;
    s->lines.push_back(WatchLine("BOOKMARK", std::string("{\"kind\":\"") + s->info->kind +
                                                 "\",\"apiVersion\":\"" + ApiVersion(*s->info) +
                                                 "\",\"metadata\":{\"resourceVersion\":\"" +
                                                 std::to_string(impl_->rv) + "\"}}"));
  }
  impl_->cv.notify_all();
}

std::vector<RecordedRequest> FakeApiServer::Requests() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  std::vector<RecordedRequest> out;
  out.reserve(impl_->log.size());
  for (const auto& r : impl_->log) out.push_back(*r);
  return out;
}

void FakeApiServer::ClearRequests() {
  std::lock_guard<std::mutex> l(impl_->mu);
  impl_->log.clear();
  impl_->answered = 0;
}

size_t FakeApiServer::CountRequests(const std::string& method,
                                    const std::string& path_prefix) const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return static_cast<size_t>(std::count_if(
      impl_->log.begin(), impl_->log.end(),
      [&](const auto& r) { return Matches(method, path_prefix, r->method, r->path); }));
}

int FakeApiServer::connections() const { return impl_->connections.load(); }

int FakeApiServer::watches() const {
  std::lock_guard<std::mutex> l(impl_->mu);
  return static_cast<int>(impl_->streams.size());
}

bool FakeApiServer::WaitForRequests(size_t n, std::chrono::milliseconds timeout) const {
  std::unique_lock<std::mutex> l(impl_->mu);
  return impl_->cv.wait_for(l, timeout, [&] { return impl_->answered >= n; });
}

}  // namespace leasehold::testing
