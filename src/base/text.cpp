#include "base/text.h"

namespace leasehold {

size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = static_cast<unsigned char>(s[i]);
  if (b < 0x80) return 1;
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF) {
    n = 2;
  } else if (b >= 0xE0 && b <= 0xEF) {
    n = 3;
    if (b == 0xE0) lo = 0xA0;
    if (b == 0xED) hi = 0x9F;
  } else if (b >= 0xF0 && b <= 0xF4) {
    n = 4;
    if (b == 0xF0) lo = 0x90;
    if (b == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (c < lo || c > hi) : (c < 0x80 || c > 0xBF)) return 0;
  }
  return n;
}

namespace {

// The code point of a valid sequence of n bytes at p.
char32_t Decode(const unsigned char* p, size_t n) {
  switch (n) {
    case 1:
      return p[0];
    case 2:
      return (char32_t{p[0] & 0x1Fu} << 6) | (p[1] & 0x3Fu);
    case 3:
      return (char32_t{p[0] & 0x0Fu} << 12) | (char32_t{p[1] & 0x3Fu} << 6) | (p[2] & 0x3Fu);
    default:
      return (char32_t{p[0] & 0x07u} << 18) | (char32_t{p[1] & 0x3Fu} << 12) |
             (char32_t{p[2] & 0x3Fu} << 6) | (p[3] & 0x3Fu);
  }
}

bool IsHiddenCodePoint(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || c == 0x2028 || c == 0x2029 || (c >= 0x202A && c <= 0x202E) ||
         (c >= 0x2066 && c <= 0x2069);
}

bool IsControl(unsigned char c) { return c < 0x20 || c == 0x7f; }

void AppendEscaped(std::string* out, unsigned char b) {
  static constexpr char kHex[] = "0123456789abcdef";
  out->push_back('\\');
  out->push_back('x');
  out->push_back(kHex[b >> 4]);
  out->push_back(kHex[b & 0xF]);
}

}  // namespace

std::string EscapeForLog(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      if (b < 0x20 || b == 0x7F || b == '\\') {
        AppendEscaped(&out, b);
      } else {
        out.push_back(static_cast<char>(b));
      }
      ++i;
      continue;
    }
    const size_t n = Utf8SequenceLength(s, i);
    if (n == 0) {
      // An invalid lead or continuation consumes exactly one byte, as in Go.
      AppendEscaped(&out, b);
      ++i;
      continue;
    }
    const auto* p = reinterpret_cast<const unsigned char*>(s.data() + i);
    if (IsHiddenCodePoint(Decode(p, n))) {
      for (size_t k = 0; k < n; ++k) AppendEscaped(&out, p[k]);
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  return out;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (IsControl(c)) {
      AppendEscaped(&out, c);
    } else {
      out += ch;
    }
  }
  out += '"';
  return out;
}

std::string OneLine(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (IsControl(c)) {
      AppendEscaped(&out, c);
    } else {
      out += ch;
    }
  }
  return out;
}

std::string Excerpt(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "...";
}

}  // namespace leasehold
