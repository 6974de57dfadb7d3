// Internal to src/locks: RapidJSON plumbing shared by the codecs and the locks. Not part of the
// library's interface (it exposes RapidJSON types).
#pragma once

#include <rapidjson/document.h>

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace leasehold::locks::internal {

// Parses `text` into `doc`; kMalformed (naming `what`) unless it is one JSON object. Iterative
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

// A cached API object: the whole body of the last successful read or write, so a PUT sends back
// every field (labels, annotations, ownerReferences, resourceVersion, uid) as the server had it.
struct CachedObject {
  rapidjson::Document doc;
};

// After a write the server accepted: caches its answer (`body`, an object of kind `what`) as the
// object the next PUT sends back, with its new resourceVersion. An answer that cannot be parsed
// drops the cache instead, with a warning naming `lock` (e.g. "lease ns/name") and `done`
// ("created", "updated"): the old cache's resourceVersion is stale, and without a cache the next
// Update fails and the elector falls back to Get. The write happened either way.
void CacheWriteAnswer(std::string_view body, const char* what, std::string_view lock,
                      const char* done, std::unique_ptr<CachedObject>& cache);

}  // namespace leasehold::locks::internal
