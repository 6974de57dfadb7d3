// Internal to src/locks: RapidJSON plumbing shared by the codecs and the locks. Not part of the
// library's interface (it exposes RapidJSON types).
#pragma once

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "base/status.h"
#include "locks/codec.h"

namespace leasehold::locks::internal {

// Parses `text` into `doc`; Invalid (naming `what`) unless it is one JSON object. Iterative
// parsing, so hostile nesting cannot exhaust the stack.
Status ParseObject(std::string_view text, const char* what, rapidjson::Document& doc);

std::string Serialize(const rapidjson::Value& value);

// Sets object[name] = value, replacing an existing member of that name. `object` must be an
// object; `name` is copied.
void SetMember(rapidjson::Value& object, std::string_view name, rapidjson::Value& value,
               rapidjson::Document::AllocatorType& allocator);

// Returns object[name], or nullptr when `object` is not an object or lacks it.
const rapidjson::Value* FindMember(const rapidjson::Value& object, std::string_view name);
rapidjson::Value* FindMember(rapidjson::Value& object, std::string_view name);

// DecodeLeaseObject on an already-parsed Lease object.
Result<LeaseSpec> DecodeLeaseSpecIn(const rapidjson::Value& lease);

// A cached API object: the whole body of the last successful read or write, so a PUT sends back
// every field (labels, annotations, ownerReferences, resourceVersion, uid) as the server had it.
struct CachedObject {
  rapidjson::Document doc;
};

}  // namespace leasehold::locks::internal
