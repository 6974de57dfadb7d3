// A deterministic mutation smoke test: the decoders must turn any input into a value or an
// Invalid status, never crash or read out of bounds (run it under ASan).
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "locks/codec.h"
#include "locks/go_json.h"

namespace leasehold::locks {
namespace {

std::string Mutate(std::string s, std::mt19937_64& rng) {
  static const std::string kAlphabet =
      std::string("{}[]\":,.0123456789+-TZeE\\u null true x\xff\xc3\x80") + '\0';
  const int edits = 1 + static_cast<int>(rng() % 4);
  for (int i = 0; i < edits; ++i) {
    const size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
    switch (rng() % 4) {
      case 0:  // insert
        s.insert(pos, 1, kAlphabet[rng() % kAlphabet.size()]);
        break;
      case 1:  // delete
        if (pos < s.size()) s.erase(pos, 1);
        break;
      case 2:  // replace
        if (pos < s.size()) s[pos] = kAlphabet[rng() % kAlphabet.size()];
        break;
      default:  // truncate
        s.resize(pos);
    }
  }
  return s;
}

TEST_CASE("decoders survive mutated input") {
  const std::vector<std::string> seeds = {
      R"({"metadata":{"resourceVersion":"1"},"spec":{"holderIdentity":"a",)"
      R"("leaseDurationSeconds":15,)"
      R"("acquireTime":"2026-01-02T03:04:05.123456Z","renewTime":"2026-01-02T03:04:15.654321Z",)"
      R"("leaseTransitions":2,"strategy":"s","preferredHolder":"p"}})",
      R"({"holderIdentity":"rancher-7dbd7875f7-qbj5k","leaseDurationSeconds":45,)"
      R"("acquireTime":"2019-04-04T11:53:12Z","renewTime":"2019-04-04T12:24:08+02:00",)"
      R"("leaderTransitions":0})",
      "2026-01-02T03:04:05.123456789-05:30",
  };
  std::mt19937_64 rng(20260102);
  int decoded = 0;
  for (int i = 0; i < 30000; ++i) {
    const std::string input = Mutate(seeds[static_cast<size_t>(i) % seeds.size()], rng);
    auto lease = DecodeLeaseObject(input);
    CHECK((lease.ok() || lease.code() == Code::kMalformed));
    auto record = DecodeAnnotationRecord(input);
    CHECK((record.ok() || record.code() == Code::kMalformed));
    auto time = ParseRfc3339Micros(input);
    CHECK((time.ok() || time.code() == Code::kMalformed));
    // Invalid UTF-8 in the holder re-encodes as U+FFFD, as in Go, so only valid text round-trips.
    if (record.ok() && GoJsonQuote(record->holder_identity).find("\\ufffd") == std::string::npos) {
      // Whatever decodes must re-encode to something that decodes to the same record.
      auto again = DecodeAnnotationRecord(EncodeAnnotationRecord(*record));
      REQUIRE(again.ok());
      auto trunc = [](election::LeaderElectionRecord r) {
        if (r.acquire_time)
          r.acquire_time = std::chrono::floor<std::chrono::seconds>(*r.acquire_time);
        if (r.renew_time) r.renew_time = std::chrono::floor<std::chrono::seconds>(*r.renew_time);
        return r;
      };
      CHECK_MESSAGE(*again == trunc(*record), "input: " << input);
      ++decoded;
    }
    CHECK(GoJsonQuote(input).size() >= 2);
  }
  CHECK(decoded > 0);
}

}  // namespace
}  // namespace leasehold::locks
