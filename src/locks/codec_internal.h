// Internal to src/locks: the codecs' entry points on already-parsed RapidJSON values, for the locks
// that keep the parsed object as their cache (a second parse of the same bytes would be waste).
#pragma once

#include <rapidjson/document.h>

#include "base/status.h"
#include "locks/codec.h"

namespace leasehold::locks::internal {

// DecodeLeaseObject on an already-parsed Lease object.
Result<LeaseSpec> DecodeLeaseSpecIn(const rapidjson::Value& lease);

}  // namespace leasehold::locks::internal
