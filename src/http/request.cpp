#include "http/request.h"

#include <algorithm>
#include <cctype>

namespace leasehold::http {
namespace {

// RFC 9110 tchar.
bool IsTokenChar(unsigned char c) {
  if (std::isalnum(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!IsTokenChar(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// field-value: visible ASCII, space, tab and obs-text; never CR, LF, NUL or another control.
bool IsFieldValue(std::string_view s) {
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

HeadParse Fail(int status, std::string reason) {
  HeadParse p;
  p.state = HeadParse::State::kError;
  p.status = status;
  p.reason = std::move(reason);
  return p;
}

// "METHOD SP origin-form SP HTTP/1.x"; fills method, target, minor_version.
HeadParse ParseRequestLine(std::string_view line, RequestHead& head) {
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Fail(400, "malformed request line");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method) || method.size() > 32) return Fail(400, "malformed method");
  if (target.empty() || target.front() != '/') {
    return Fail(400, "the request target must be a path starting with /");
  }
  for (const char ch : target) {
    const auto c = static_cast<unsigned char>(ch);
    if (c <= 0x20 || c >= 0x7f) return Fail(400, "malformed request target");
  }
  if (version == "HTTP/1.1") {
    head.minor_version = 1;
  } else if (version == "HTTP/1.0") {
    head.minor_version = 0;
  } else if (version.size() == 8 && version.substr(0, 5) == "HTTP/" &&
             std::isdigit(static_cast<unsigned char>(version[5])) && version[6] == '.' &&
             std::isdigit(static_cast<unsigned char>(version[7]))) {
    return Fail(505, "only HTTP/1.0 and HTTP/1.1 are served");
  } else {
    return Fail(400, "malformed HTTP version");
  }
  head.method = std::string(method);
  head.target = std::string(target);
  head.keep_alive = head.minor_version == 1;
  return {};
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      const int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += plus_is_space && s[i] == '+' ? ' ' : s[i];
  }
  return out;
}

}  // namespace

HeadParse ParseRequestHead(std::string_view data, const HeadLimits& limits) {
  RequestHead head;
  bool have_length = false;
  size_t headers = 0;
  size_t pos = 0;
  while (true) {
    const size_t nl = data.find('\n', pos);
    // Without a line end in `data` the head needs more than data.size() bytes.
    const size_t at_least = nl == std::string_view::npos ? data.size() + 1 : nl + 1;
    if (at_least > limits.max_head_bytes) {
      return Fail(431,
                  "the request head exceeds " + std::to_string(limits.max_head_bytes) + " bytes");
    }
    if (nl == std::string_view::npos) return {};
    std::string_view line = data.substr(pos, nl - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const bool first = pos == 0;
    pos = nl + 1;
    if (first) {
      if (line.empty()) return Fail(400, "empty request line");
      HeadParse p = ParseRequestLine(line, head);
      if (p.state == HeadParse::State::kError) return p;
      continue;
    }
    if (line.empty()) break;
    if (++headers > limits.max_headers) {
      return Fail(431, "more than " + std::to_string(limits.max_headers) + " header fields");
    }
    if (line.front() == ' ' || line.front() == '\t') return Fail(400, "folded header line");
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || !IsToken(line.substr(0, colon))) {
      return Fail(400, "malformed header field");
    }
    const std::string_view name = line.substr(0, colon);
    const std::string_view value = Trim(line.substr(colon + 1));
    if (!IsFieldValue(value)) return Fail(400, "control character in a header field");
    if (EqualsIgnoreCase(name, "Content-Length")) {
      if (value.empty() || value.size() > 18) return Fail(400, "malformed Content-Length");
      size_t n = 0;
      for (const char c : value) {
        if (!std::isdigit(static_cast<unsigned char>(c))) {
          return Fail(400, "malformed Content-Length");
        }
        n = n * 10 + static_cast<size_t>(c - '0');
      }
      if (have_length && n != head.body_bytes) return Fail(400, "conflicting Content-Length");
      have_length = true;
      head.body_bytes = n;
    } else if (EqualsIgnoreCase(name, "Transfer-Encoding")) {
      return Fail(501, "request bodies with a Transfer-Encoding are not accepted");
    } else if (EqualsIgnoreCase(name, "Connection")) {
      size_t start = 0;
      while (start <= value.size()) {
        size_t comma = value.find(',', start);
        if (comma == std::string_view::npos) comma = value.size();
        const std::string_view option = Trim(value.substr(start, comma - start));
        if (EqualsIgnoreCase(option, "close")) head.keep_alive = false;
        if (EqualsIgnoreCase(option, "keep-alive") && head.minor_version == 0) {
          head.keep_alive = true;
        }
        start = comma + 1;
      }
    }
  }
  if (head.body_bytes > limits.max_body_bytes) {
    return Fail(
        413, "request bodies are limited to " + std::to_string(limits.max_body_bytes) + " bytes");
  }
  head.head_bytes = pos;
  HeadParse p;
  p.state = HeadParse::State::kComplete;
  p.head = std::move(head);
  return p;
}

DecodedTarget DecodeTarget(std::string_view target) {
  DecodedTarget out;
  const size_t q = target.find('?');
  out.path = PercentDecode(target.substr(0, q), false);
  if (q == std::string_view::npos) return out;
  std::string_view query = target.substr(q + 1);
  const size_t hash = query.find('#');
  if (hash != std::string_view::npos) query = query.substr(0, hash);
  size_t start = 0;
  while (start < query.size()) {
    size_t amp = query.find('&', start);
    if (amp == std::string_view::npos) amp = query.size();
    const std::string_view pair = query.substr(start, amp - start);
    if (!pair.empty()) {
      const size_t eq = pair.find('=');
      out.params.emplace(
          PercentDecode(pair.substr(0, eq), true),
          eq == std::string_view::npos ? std::string() : PercentDecode(pair.substr(eq + 1), true));
    }
    start = amp + 1;
  }
  return out;
}

}  // namespace leasehold::http
