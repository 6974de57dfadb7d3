// The listener's request-head parser (http/request.h), the first code that sees any byte
// a peer sends to the probe listener or the local API. Beyond "no crash, no UB": the documented
// bounds hold for every input. A complete head took no more than max_head_bytes and at most
// max_headers fields, its body is within max_body_bytes, its method is a short token, its target
// starts with '/' and holds no control bytes; an error is one of the statuses the listener can
// answer, and a prefix of a complete head is never itself an error.
#include <cstdint>
#include <string>

#include "fuzz_util.h"
#include "http/request.h"

namespace leasehold::http {
namespace {

void Fuzz(const uint8_t* data, size_t size) {
  // Small limits, so that the fuzzer reaches them with short inputs.
  HeadLimits limits;
  limits.max_head_bytes = 512;
  limits.max_headers = 8;
  limits.max_body_bytes = 64;
  const std::string_view in = fuzz::AsText(data, size);
  const HeadParse p = ParseRequestHead(in, limits);
  switch (p.state) {
    case HeadParse::State::kComplete: {
      const RequestHead& h = p.head;
      FUZZ_CHECK(h.head_bytes <= limits.max_head_bytes && h.head_bytes <= in.size());
      FUZZ_CHECK(h.body_bytes <= limits.max_body_bytes);
      FUZZ_CHECK(!h.method.empty() && h.method.size() <= 32);
      FUZZ_CHECK(!h.target.empty() && h.target[0] == '/');
      for (const char c : h.target) FUZZ_CHECK(static_cast<unsigned char>(c) > 0x20);
      FUZZ_CHECK(h.minor_version == 0 || h.minor_version == 1);
      // The same head, with anything after it, parses the same: pipelining cannot change it.
      const std::string more = std::string(in.substr(0, h.head_bytes)) + "GET / HTTP/1.1\r\n";
      const HeadParse again = ParseRequestHead(more, limits);
      FUZZ_CHECK(again.state == HeadParse::State::kComplete);
      FUZZ_CHECK(again.head.head_bytes == h.head_bytes && again.head.target == h.target);
      // Every proper prefix of a complete head is just incomplete.
      const HeadParse part = ParseRequestHead(in.substr(0, h.head_bytes - 1), limits);
      FUZZ_CHECK(part.state == HeadParse::State::kIncomplete);
      const DecodedTarget t = DecodeTarget(h.target);
      FUZZ_CHECK(t.path.size() <= h.target.size());
      break;
    }
    case HeadParse::State::kError:
      FUZZ_CHECK(p.status == 400 || p.status == 413 || p.status == 431 || p.status == 501 ||
                 p.status == 505);
      FUZZ_CHECK(!p.reason.empty());
      break;
    case HeadParse::State::kIncomplete:
      FUZZ_CHECK(in.size() < limits.max_head_bytes);
      break;
  }
}

}  // namespace
}  // namespace leasehold::http

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  leasehold::http::Fuzz(data, size);
  return 0;
}
