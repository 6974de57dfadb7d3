#include "kube/watch.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>

#include "kube/status_error.h"

namespace leasehold::kube {

Request WatchRequest(const ObjectRef& object, const std::string& resource_version,
                     std::chrono::seconds timeout) {
  std::string path = object.CollectionPath() +
                     "?watch=1&fieldSelector=" + PercentEncode("metadata.name=" + object.name);
  if (!resource_version.empty()) path += "&resourceVersion=" + PercentEncode(resource_version);
  path += "&timeoutSeconds=" + std::to_string(timeout.count()) + "&allowWatchBookmarks=true";
  return Request{"GET", std::move(path), "", "application/json", object};
}

namespace {

// Nesting depth of JSON arrays and objects in `text`, outside strings. Lock objects are shallow
// (managedFields, the deepest part, stays below 15); re-serialising a deeper one recursively
// could exhaust the stack.
int MaxNestingDepth(std::string_view text) {
  int depth = 0, max_depth = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      max_depth = std::max(max_depth, ++depth);
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return max_depth;
}

constexpr int kMaxWatchEventDepth = 64;

}  // namespace

Result<WatchEvent> ParseWatchEvent(std::string_view line) {
  if (MaxNestingDepth(line) > kMaxWatchEventDepth) {
    return Status(Code::kMalformed, "watch event nested too deeply");
  }
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseIterativeFlag>(line.data(), line.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return Status(Code::kMalformed, "watch event is not a JSON object");
  }
  const auto type = doc.FindMember("type");
  const auto object = doc.FindMember("object");
  if (type == doc.MemberEnd() || !type->value.IsString() || object == doc.MemberEnd() ||
      !object->value.IsObject()) {
    return Status(Code::kMalformed, "watch event lacks a string \"type\" or an object \"object\"");
  }
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  // Accept fails on numbers JSON cannot write back (e.g. 1e400 read as infinity), leaving a
  // truncated object behind.
  if (!object->value.Accept(writer)) {
    return Status(Code::kMalformed, "watch event object cannot be re-serialised");
  }
  const std::string object_json(buffer.GetString(), buffer.GetSize());

  WatchEvent event;
  event.type.assign(type->value.GetString(), type->value.GetStringLength());
  if (event.type == "ERROR") {
    long code = 500;
    const auto c = object->value.FindMember("code");
    if (c != object->value.MemberEnd() && c->value.IsInt()) code = c->value.GetInt();
    return StatusFromResponse(code, object_json);
  }
  event.object = object_json;
  const auto meta = object->value.FindMember("metadata");
  if (meta != object->value.MemberEnd() && meta->value.IsObject()) {
    const auto rv = meta->value.FindMember("resourceVersion");
    if (rv != meta->value.MemberEnd() && rv->value.IsString()) {
      event.resource_version.assign(rv->value.GetString(), rv->value.GetStringLength());
    }
  }
  return event;
}

}  // namespace leasehold::kube
