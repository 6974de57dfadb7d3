// Standard base64 (RFC 4648 §4) decoding, for the kubeconfig's *-data fields.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace leasehold::kube {

// Decodes standard-alphabet base64. Padding is optional, since hand-edited kubeconfigs sometimes
// lack it; ASCII whitespace, including line breaks, is skipped. Anything else (the URL-safe
// alphabet, stray '=', leftover bits) is kMalformed with a message naming the offset.
Result<std::string> DecodeBase64(std::string_view in);

}  // namespace leasehold::kube
