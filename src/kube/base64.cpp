#include "kube/base64.h"

#include <cstdint>

namespace leasehold::kube {
namespace {

// -1: not in the alphabet.
int Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

Result<std::string> DecodeBase64(std::string_view in) {
  std::string out;
  out.reserve(in.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;        // bits buffered in acc
  int sextets = 0;     // alphabet characters seen, to check the padding
  size_t padding = 0;  // '=' seen so far; only trailing ones are allowed
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (IsSpace(c)) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    const int v = Value(c);
    if (v < 0 || padding > 0) {
      return Status(Code::kMalformed,
                    "invalid base64: unexpected character at offset " + std::to_string(i));
    }
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    ++sextets;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // A group of 4 characters carries 3 bytes; 1 leftover character cannot encode a byte, and the
  // leftover bits of 2 or 3 characters must be zero (canonical encoding).
  const int rem = sextets % 4;
  if (rem == 1) return Status(Code::kMalformed, "invalid base64: truncated input");
  if (padding > 0 && (rem == 0 || static_cast<int>(padding) != 4 - rem)) {
    return Status(Code::kMalformed, "invalid base64: wrong padding");
  }
  if (bits > 0 && (acc & ((1u << bits) - 1)) != 0) {
    return Status(Code::kMalformed, "invalid base64: non-zero trailing bits");
  }
  return out;
}

}  // namespace leasehold::kube
