#include "http/response.h"

#include <cstdio>

namespace leasehold::http {
namespace {

const char* ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 202:
      return "Accepted";
    case 400:
      return "Bad Request";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Content Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Unknown";
  }
}

}  // namespace

std::string SerializeAnswer(const Answer& a, bool head_only, bool keep_alive, int minor_version) {
  std::string out;
  out.reserve(160 + a.body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(a.status);
  out += ' ';
  out += ReasonPhrase(a.status);
  out += "\r\n";
  if (!a.content_type.empty()) out += "Content-Type: " + a.content_type + "\r\n";
  for (const auto& [name, value] : a.headers) {
    out.append(name).append(": ").append(value).append("\r\n");
  }
  out += "Cache-Control: no-store\r\nContent-Length: ";
  out += std::to_string(a.body.size());
  out += "\r\n";
  if (!keep_alive) {
    out += "Connection: close\r\n";
  } else if (minor_version == 0) {
    out += "Connection: keep-alive\r\n";
  }
  out += "\r\n";
  if (!head_only) out += a.body;
  return out;
}

Answer JsonError(int status, const std::string& message) {
  Answer a;
  a.status = status;
  a.content_type = "application/json";
  // Our own words only (see HeadParse::reason): nothing to escape but the quotes we never use.
  a.body = "{\"error\":\"" + message + "\"}\n";
  return a;
}

std::string StreamHead(bool chunked) {
  return std::string(
             "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
             "Cache-Control: no-store\r\n") +
         (chunked ? "Transfer-Encoding: chunked\r\n" : "Connection: close\r\n") + "\r\n";
}

std::string Chunk(const std::string& data) {
  char size[24];
  std::snprintf(size, sizeof size, "%zx\r\n", data.size());
  return size + data + "\r\n";
}

}  // namespace leasehold::http
