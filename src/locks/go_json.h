// Go's encoding/json string escaping, so that an annotation leasehold writes is byte for byte what
// client-go would write for the same record (observers compare the raw bytes).
#pragma once

#include <string>
#include <string_view>

namespace leasehold::locks {

// A JSON string literal (with quotes) escaped as Go's encoding/json does: \" \\ \n \r \t;
// other bytes below 0x20 and < > & as \u00XX (lowercase hex; \b and \f too, as before Go 1.22);
// U+2028/U+2029 as \u2028/\u2029; each byte of invalid UTF-8 as \ufffd; everything else as is.
std::string GoJsonQuote(std::string_view s);

}  // namespace leasehold::locks
