#include "locks/go_json.h"

#include "base/text.h"

namespace leasehold::locks {

std::string GoJsonQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      switch (b) {
        case '"':
        case '\\':
          out.push_back('\\');
          out.push_back(static_cast<char>(b));
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (b < 0x20 || b == '<' || b == '>' || b == '&') {
            out += "\\u00";
            out.push_back(kHex[b >> 4]);
            out.push_back(kHex[b & 0xF]);
          } else {
            out.push_back(static_cast<char>(b));
          }
      }
      ++i;
      continue;
    }
    // Multi-byte: an invalid lead or continuation consumes exactly one byte, as in Go.
    const size_t n = Utf8SequenceLength(s, i);
    const bool valid = n != 0;
    if (!valid) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8/A9) break JavaScript string literals; Go escapes them.
    if (n == 3 && b == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(s[i + 2]) & 0xFE) == 0xA8) {
      out += (static_cast<unsigned char>(s[i + 2]) == 0xA8) ? "\\u2028" : "\\u2029";
    } else {
      out.append(s.substr(i, n));
    }
    i += n;
  }
  out.push_back('"');
  return out;
}

}  // namespace leasehold::locks
