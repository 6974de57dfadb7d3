// A strict scripted kube::ApiClient for the announcer: each test lists the exact requests it
// expects, in order, with the answer to give. Any other request, a wrong content type, a
// deadline outside the expected one, or a scripted request left unsent fails the test.
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

namespace leasehold::app::testing {

struct Expected {
  std::string method;
  std::string path;
  std::string content_type;
  // The body must parse to JSON equal to this (member order ignored); "" = any body.
  std::string json;
  Result<kube::Response> reply = kube::Response{200, "{}"};
  // Called while the request is "in flight", e.g. to advance a FakeClock.
  std::function<void()> during;
};

inline bool JsonEqual(const std::string& a, const std::string& b) {
  rapidjson::Document da, db;
  da.Parse(a.c_str());
  db.Parse(b.c_str());
  return !da.HasParseError() && !db.HasParseError() && da == db;
}

class StrictApiClient final : public kube::ApiClient {
 public:
  // Every request's deadline must be at most `max_timeout` after the clock's now.
  StrictApiClient(const Clock& clock, Duration max_timeout)
      : clock_(clock), max_timeout_(max_timeout) {}
  ~StrictApiClient() override { VerifyDone(); }

  void Expect(Expected e) {
    std::lock_guard<std::mutex> l(mu_);
    script_.push_back(std::move(e));
  }

  Result<kube::Response> Do(const kube::Request& request, MonoTime deadline) override {
    Expected e;
    {
      std::lock_guard<std::mutex> l(mu_);
      sent_.push_back(request.method + " " + request.path);
      deadlines_.push_back(deadline);
      if (script_.empty()) {
        FAIL_CHECK("unexpected request " << request.method << " " << request.path << " "
                                         << request.body);
        return Status(Code::kUnavailable, "unexpected request");
      }
      e = std::move(script_.front());
      script_.pop_front();
    }
    if (request.method != e.method || request.path != e.path) {
      FAIL_CHECK("unexpected request " << request.method << " " << request.path << "; expected "
                                       << e.method << " " << e.path);
      return Status(Code::kUnavailable, "unexpected request");
    }
    CHECK(request.content_type == e.content_type);
    const MonoTime now = clock_.MonotonicNow();
    CHECK_MESSAGE(deadline > now, request.method << " " << request.path << ": deadline passed");
    CHECK_MESSAGE(deadline <= now + max_timeout_,
                  request.method << " " << request.path << ": deadline too far");
    if (!e.json.empty()) {
      CHECK_MESSAGE(JsonEqual(request.body, e.json),
                    "request body\n  got:  " << request.body << "\n  want: " << e.json);
    }
    if (e.during) e.during();
    return e.reply;
  }

  void VerifyDone() {
    std::lock_guard<std::mutex> l(mu_);
    for (const Expected& e : script_) {
      FAIL_CHECK("expected request never sent: " << e.method << " " << e.path);
    }
    script_.clear();
  }

  std::vector<std::string> sent() const {
    std::lock_guard<std::mutex> l(mu_);
    return sent_;
  }
  // Each request's deadline, in order.
  std::vector<MonoTime> deadlines() const {
    std::lock_guard<std::mutex> l(mu_);
    return deadlines_;
  }
  size_t pending() const {
    std::lock_guard<std::mutex> l(mu_);
    return script_.size();
  }

 private:
  const Clock& clock_;
  const Duration max_timeout_;
  mutable std::mutex mu_;
  std::deque<Expected> script_;
  std::vector<std::string> sent_;
  std::vector<MonoTime> deadlines_;
};

}  // namespace leasehold::app::testing
