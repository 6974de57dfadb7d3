// The one scripted kube::ApiClient of the tests: each test lists the exact requests it expects,
// in order, with the answer to give. Any other request, a wrong content type or body, a deadline
// outside the rule the test chose, or a scripted request left unsent fails the test. Every
// request that arrives (expected or not) is recorded in order, with its deadline. Thread-safe:
// the announcer calls it from its own thread.
#pragma once

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "kube/api_client.h"

namespace leasehold::testing {

// Checks a request body; reports mismatches with CHECK, never REQUIRE, because the client may be
// called on a worker thread, where REQUIRE's exception would escape the test.
using BodyCheck = std::function<void(const std::string& body)>;

struct Call {
  std::string method;
  std::string path;  // with the query, exactly as sent
  Result<kube::Response> reply = kube::Response{200, "{}"};
  // Unset: the body must be empty (a GET).
  BodyCheck body = nullptr;
  std::string content_type = "application/json";
  // Runs while the request is "in flight", e.g. to advance a FakeClock.
  std::function<void()> during = nullptr;
};

inline Call GET(std::string path, Result<kube::Response> reply) {
  return Call{"GET", std::move(path), std::move(reply)};
}
inline Call POST(std::string path, BodyCheck body, Result<kube::Response> reply) {
  return Call{"POST", std::move(path), std::move(reply), std::move(body)};
}
inline Call PUT(std::string path, BodyCheck body, Result<kube::Response> reply) {
  return Call{"PUT", std::move(path), std::move(reply), std::move(body)};
}
// A JSON merge patch (application/merge-patch+json), as the announcer sends.
inline Call PATCH(std::string path, BodyCheck body, Result<kube::Response> reply) {
  return Call{"PATCH", std::move(path), std::move(reply), std::move(body),
              "application/merge-patch+json"};
}

inline Result<kube::Response> Answer(std::string body, long http_status = 200) {
  return kube::Response{http_status, std::move(body)};
}

inline Result<kube::Response> Error(Code code, std::string message = "scripted error") {
  return Status(code, std::move(message));
}

// The body must parse to JSON equal to `expected` (member order ignored, values exact).
inline BodyCheck JsonEq(std::string expected) {
  return [expected = std::move(expected)](const std::string& body) {
    rapidjson::Document want, got;
    want.Parse(expected.c_str());
    got.Parse(body.c_str());
    if (want.HasParseError()) {
      FAIL_CHECK("bad expected JSON in test: " << expected);
    } else if (got.HasParseError()) {
      FAIL_CHECK("request body is not JSON: " << body);
    } else {
      CHECK_MESSAGE(want == got, "request body\n  got:  " << body << "\n  want: " << expected);
    }
  };
}

// Any body, for requests whose body another case already pins down.
inline BodyCheck AnyBody() {
  return [](const std::string&) {};
}

// The body must equal `expected` byte for byte.
inline BodyCheck BytesEq(std::string expected) {
  return [expected = std::move(expected)](const std::string& body) { CHECK(body == expected); };
}

class ScriptedApiClient final : public kube::ApiClient {
 public:
  // Every request must carry exactly `deadline`: the locks pass their caller's through.
  explicit ScriptedApiClient(MonoTime deadline) : exact_deadline_(deadline) {}
  // Every request's deadline must lie in (now, now + max_timeout] on `clock` when it is sent.
  ScriptedApiClient(const Clock& clock, Duration max_timeout)
      : clock_(&clock), max_timeout_(max_timeout) {}
  ~ScriptedApiClient() override { VerifyDone(); }

  void Expect(Call call) {
    std::lock_guard<std::mutex> l(mu_);
    script_.push_back(std::move(call));
  }
  void Expect(std::vector<Call> calls) {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& c : calls) script_.push_back(std::move(c));
  }

  Result<kube::Response> Do(const kube::Request& request, MonoTime deadline) override {
    const std::string what = request.method + " " + request.path;
    Call call;
    {
      std::lock_guard<std::mutex> l(mu_);
      sent_.push_back(what);
      deadlines_.push_back(deadline);
      if (script_.empty()) {
        FAIL_CHECK("unexpected request " << what << " (script is empty) " << request.body);
        return Status(Code::kUnavailable, "unexpected request");
      }
      call = std::move(script_.front());
      script_.pop_front();
    }
    if (request.method != call.method || request.path != call.path) {
      FAIL_CHECK("unexpected request " << what << "; expected " << call.method << " " << call.path);
      return Status(Code::kUnavailable, "unexpected request");
    }
    CHECK_MESSAGE(request.content_type == call.content_type,
                  what << ": content type " << request.content_type);
    if (clock_ == nullptr) {
      CHECK_MESSAGE(deadline == exact_deadline_, what << " did not get the caller's deadline");
    } else {
      const MonoTime now = clock_->MonotonicNow();
      CHECK_MESSAGE(deadline > now, what << ": deadline passed");
      CHECK_MESSAGE(deadline <= now + max_timeout_, what << ": deadline too far");
    }
    if (call.body) {
      call.body(request.body);
    } else {
      CHECK_MESSAGE(request.body.empty(), what << " has a body: " << request.body);
    }
    if (call.during) call.during();
    return call.reply;
  }

  // Fails for every scripted request not yet sent, then forgets them.
  void VerifyDone() {
    std::lock_guard<std::mutex> l(mu_);
    for (const Call& c : script_)
      FAIL_CHECK("expected request never sent: " << c.method << " " << c.path);
    script_.clear();
  }

  // Every request seen so far, as "METHOD path".
  std::vector<std::string> sent() const {
    std::lock_guard<std::mutex> l(mu_);
    return sent_;
  }
  // Each request's deadline, in order.
  std::vector<MonoTime> deadlines() const {
    std::lock_guard<std::mutex> l(mu_);
    return deadlines_;
  }
  // Scripted requests not sent yet.
  size_t pending() const {
    std::lock_guard<std::mutex> l(mu_);
    return script_.size();
  }

 private:
  // Exactly one rule: clock_ set (a window from now) or not (exact_deadline_).
  const MonoTime exact_deadline_{};
  const Clock* const clock_ = nullptr;
  const Duration max_timeout_{};
  mutable std::mutex mu_;
  std::deque<Call> script_;
  std::vector<std::string> sent_;
  std::vector<MonoTime> deadlines_;
};

}  // namespace leasehold::testing
