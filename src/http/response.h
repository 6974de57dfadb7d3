// The answer side of the listener's HTTP/1.x, as pure functions: an Answer as the bytes
// the listener writes, and the framing of a watch stream. No sockets; the listener
// (event_loop.cpp) decides when, the router (router.cpp) decides what.
#pragma once

#include <string>

#include "http/route.h"

namespace leasehold::http {

// The status line ("HTTP/1.1 <status> <reason>") and headers of `a` (its Content-Type, its own
// headers, Cache-Control: no-store, Content-Length), then its body unless `head_only`. Without
// `keep_alive` it says "Connection: close"; with it, an HTTP/1.0 client (`minor_version` 0) is
// told "Connection: keep-alive", since keeping the connection is not its default.
std::string SerializeAnswer(const Answer& a, bool head_only, bool keep_alive, int minor_version);

// {"error":"<message>"} as application/json. `message` must be our own words with no '"' or
// '\' (it is not escaped), e.g. HeadParse::reason.
Answer JsonError(int status, const std::string& message);

// The status line and headers that open a watch stream (text/event-stream, no-store): with
// `chunked` (HTTP/1.1) "Transfer-Encoding: chunked", else "Connection: close" (an HTTP/1.0
// client cannot read chunks: its stream ends when the connection does).
std::string StreamHead(bool chunked);

// `data` as one chunk of a chunked body: its size in hex, CRLF, the data, CRLF.
std::string Chunk(const std::string& data);

// The last chunk, which ends a chunked body.
inline constexpr const char* kLastChunk = "0\r\n\r\n";

}  // namespace leasehold::http
