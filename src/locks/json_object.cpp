#include "locks/json_object.h"

#include <rapidjson/error/en.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <spdlog/spdlog.h>

#include <utility>

#include "base/text.h"

namespace leasehold::locks::internal {

Status ParseObject(std::string_view text, const char* what, rapidjson::Document& doc) {
  doc.Parse<rapidjson::kParseIterativeFlag>(text.data(), text.size());
  if (doc.HasParseError()) {
    return Status(Code::kMalformed, std::string(what) + " is not valid JSON: " +
                                        rapidjson::GetParseError_En(doc.GetParseError()) +
                                        " at offset " + std::to_string(doc.GetErrorOffset()));
  }
  if (!doc.IsObject()) return Status(Code::kMalformed, std::string(what) + " is not a JSON object");
  return Status::Ok();
}

std::string Serialize(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

void SetMember(rapidjson::Value& object, std::string_view name, rapidjson::Value& value,
               rapidjson::Document::AllocatorType& allocator) {
  if (rapidjson::Value* existing = FindMember(object, name)) {
    *existing = value;  // RapidJSON assignment moves
    return;
  }
  rapidjson::Value key(name.data(), static_cast<rapidjson::SizeType>(name.size()), allocator);
  object.AddMember(key, value, allocator);
}

const rapidjson::Value* FindMember(const rapidjson::Value& object, std::string_view name) {
  if (!object.IsObject()) return nullptr;
  rapidjson::Value key(rapidjson::StringRef(name.data(), name.size()));
  auto it = object.FindMember(key);
  return it == object.MemberEnd() ? nullptr : &it->value;
}

rapidjson::Value* FindMember(rapidjson::Value& object, std::string_view name) {
  return const_cast<rapidjson::Value*>(
      FindMember(static_cast<const rapidjson::Value&>(object), name));
}

void CacheWriteAnswer(std::string_view body, const char* what, std::string_view lock,
                      const char* done, std::unique_ptr<CachedObject>& cache) {
  auto fresh = std::make_unique<CachedObject>();
  const Status parsed = ParseObject(body, what, fresh->doc);
  if (!parsed.ok()) {
    spdlog::warn("{}: {}, but cannot cache the answer: {}", EscapeForLog(lock), done,
                 EscapeForLog(parsed.ToString()));
    cache.reset();
    return;
  }
  cache = std::move(fresh);
}

}  // namespace leasehold::locks::internal
