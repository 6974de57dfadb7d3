// The request side of the local API's HTTP/1.x, as a pure function over the bytes received so
// far: no sockets, so every limit is tested over tables and fuzzed (fuzz/http_head_fuzzer.cpp).
//
// Every input is hostile (the probe listener is on the pod IP), so the parser is strict and
// bounded: the request line plus headers may take at most HeadLimits::max_head_bytes and
// max_headers; a body is accepted only with a Content-Length of at most max_body_bytes (it is
// read and discarded by the listener, never parsed as a request); chunked request bodies, line
// folding, bytes that no HTTP grammar allows and conflicting lengths are errors, and every error
// closes the connection after its answer, so that the listener never has to guess where the next
// request starts.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace leasehold::http {

struct HeadLimits {
  // Request line + headers + the blank line, in bytes. A browser's request head is under 2 KiB,
  // and this bounds what one connection can make the agent hold.
  size_t max_head_bytes = size_t{16} * 1024;
  // Header lines.
  size_t max_headers = 64;
  // The largest request body read (and discarded). Small: no endpoint takes a body.
  size_t max_body_bytes = 1024;
};

struct RequestHead {
  std::string method;     // token, as received ("GET", "POST", ...)
  std::string target;     // origin-form: starts with '/'
  int minor_version = 1;  // HTTP/1.<minor_version>: 0 or 1
  // After this request's answer the connection stays open: HTTP/1.1 unless "Connection: close",
  // HTTP/1.0 only with "Connection: keep-alive".
  bool keep_alive = true;
  size_t body_bytes = 0;  // Content-Length (0 without one), at most max_body_bytes
  size_t head_bytes = 0;  // how many bytes of the input the head took, the blank line included
};

struct HeadParse {
  enum class State {
    kIncomplete,  // no end of head yet, and within the limits: read more
    kComplete,    // `head` is filled
    kError,       // answer `status` with `reason`, then close the connection
  };
  State state = State::kIncomplete;
  RequestHead head;
  int status = 0;      // kError: 400, 413, 431, 501 or 505
  std::string reason;  // kError: our words, safe to echo (no request bytes in it)
};

// Parses the head at the start of `data` (bytes received on a connection, possibly more than
// one request when the client pipelines). Bare LF line ends are accepted as CRLF; a leading
// empty line (some clients send CRLF after a POST body) is not.
HeadParse ParseRequestHead(std::string_view data, const HeadLimits& limits);

// The target split into its percent-decoded path and query parameters ('+' is a space in the
// query only). Malformed escapes stay as they are.
struct DecodedTarget {
  std::string path;
  std::multimap<std::string, std::string> params;
};
DecodedTarget DecodeTarget(std::string_view target);

}  // namespace leasehold::http
