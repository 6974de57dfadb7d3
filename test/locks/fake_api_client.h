// A strict scripted kube::ApiClient: each test lists the exact requests it expects, in order,
// with the answer to give. Any other request, a wrong deadline, or a scripted request left unsent
// fails the test.
#pragma once

#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <deque>
#include <functional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "kube/api_client.h"

namespace leasehold::locks::testing {

// Checks a request body; reports mismatches through doctest.
using BodyCheck = std::function<void(const std::string& body)>;

struct Call {
  std::string method;
  std::string path;
  Result<kube::Response> reply;
  // Unset: the body must be empty (GET).
  BodyCheck body;
};

inline Call GET(std::string path, Result<kube::Response> reply) {
  return Call{"GET", std::move(path), std::move(reply), nullptr};
}
inline Call POST(std::string path, BodyCheck body, Result<kube::Response> reply) {
  return Call{"POST", std::move(path), std::move(reply), std::move(body)};
}
inline Call PUT(std::string path, BodyCheck body, Result<kube::Response> reply) {
  return Call{"PUT", std::move(path), std::move(reply), std::move(body)};
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
    REQUIRE_MESSAGE(!want.HasParseError(), "bad expected JSON in test: " << expected);
    got.Parse(body.c_str());
    REQUIRE_MESSAGE(!got.HasParseError(), "request body is not JSON: " << body);
    CHECK_MESSAGE(want == got, "request body\n  got:  " << body << "\n  want: " << expected);
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

class FakeApiClient final : public kube::ApiClient {
 public:
  // Every request must carry exactly `deadline`: the locks pass the caller's through.
  explicit FakeApiClient(MonoTime deadline) : deadline_(deadline) {}
  ~FakeApiClient() override { VerifyDone(); }

  void Expect(Call call) { script_.push_back(std::move(call)); }
  void Expect(std::vector<Call> calls) {
    for (auto& c : calls) script_.push_back(std::move(c));
  }

  Result<kube::Response> Do(const kube::Request& request, MonoTime deadline) override {
    sent_.push_back(request.method + " " + request.path);
    if (script_.empty()) {
      FAIL_CHECK("unexpected request " << request.method << " " << request.path
                                       << " (script is empty)");
      return Status(Code::kUnavailable, "unexpected request");
    }
    Call call = std::move(script_.front());
    script_.pop_front();
    if (request.method != call.method || request.path != call.path) {
      FAIL_CHECK("unexpected request " << request.method << " " << request.path << "; expected "
                                       << call.method << " " << call.path);
      return Status(Code::kUnavailable, "unexpected request");
    }
    CHECK_MESSAGE(deadline == deadline_,
                  request.method << " " << request.path << " did not get the caller's deadline");
    CHECK(request.content_type == "application/json");
    if (call.body) {
      call.body(request.body);
    } else {
      CHECK_MESSAGE(request.body.empty(),
                    request.method << " " << request.path << " has a body: " << request.body);
    }
    return call.reply;
  }

  // Fails for every scripted request not yet sent, then forgets them.
  void VerifyDone() {
    for (const Call& c : script_)
      FAIL_CHECK("expected request never sent: " << c.method << " " << c.path);
    script_.clear();
  }

  // Every request seen so far, as "METHOD path".
  const std::vector<std::string>& sent() const { return sent_; }

 private:
  const MonoTime deadline_;
  std::deque<Call> script_;
  std::vector<std::string> sent_;
};

}  // namespace leasehold::locks::testing
