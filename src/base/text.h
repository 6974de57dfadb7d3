// Text from outside the process (API answers, files, flags, request paths) made safe to print.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace leasehold {

// The length of the UTF-8 sequence that starts at s[i] (i < s.size()), or 0 if it is not valid
// as Go's utf8.DecodeRuneInString judges it: no overlong forms, no surrogates, nothing above
// U+10FFFF.
size_t Utf8SequenceLength(std::string_view s, size_t i);

// s with every byte that could forge, split or hide part of a log line written as `\xNN`
// (two lowercase hex digits): C0 controls (0x00–0x1f, so \n \r \t and ESC), DEL (0x7f), the
// backslash itself (so the escaping is unambiguous and reversible), each byte that is not part of
// a valid UTF-8 sequence, and each byte of the code points that terminals or viewers treat as
// controls or line breaks: C1 controls U+0080–U+009F (U+009B is CSI), U+2028/U+2029, and the
// bidirectional embeddings, overrides and isolates U+202A–U+202E, U+2066–U+2069. Everything else
// (printable ASCII, other valid UTF-8) is kept as is, so the result is printable, valid UTF-8 and
// one line.
std::string EscapeForLog(std::string_view s);

// Double-quotes `s` for a one-line message: `"` and `\` are escaped and control bytes (C0, DEL)
// become \xNN, so a value holding a newline cannot split the message. For flag values and file
// contents named in start-up errors; log lines of external text use EscapeForLog.
std::string Quote(std::string_view s);

// `s` with control bytes (C0, DEL) as \xNN and nothing else changed, so a message stays on one
// line whatever the user typed.
std::string OneLine(std::string_view s);

// The first `max` bytes of `s`, with "..." when cut: enough of a long bad value to recognise it.
std::string Excerpt(std::string_view s, size_t max = 64);

}  // namespace leasehold
