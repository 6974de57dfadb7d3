#include "kube/status_error.h"

#include <rapidjson/document.h>

#include <string>
#include <utility>

namespace leasehold::kube {
namespace {

// How much of a non-Status body goes into the message: enough to recognise a proxy's error page.
constexpr size_t kMaxBodySnippet = 200;
// Longer Retry-After delays are not believed (a misconfigured proxy, not a real back-off hint).
constexpr int64_t kMaxRetryAfterSeconds = int64_t{24} * 60 * 60;

// The start of `body`, one line, printable ASCII only, so a hostile body cannot forge log lines.
std::string Snippet(std::string_view body) {
  std::string out;
  for (char c : body) {
    if (out.size() >= kMaxBodySnippet) {
      out += "...";
      break;
    }
    const auto u = static_cast<unsigned char>(c);
    out.push_back(u >= 0x20 && u < 0x7F ? c : ' ');
  }
  // Trim the ends; bodies often end in a newline.
  const size_t b = out.find_first_not_of(' ');
  if (b == std::string::npos) return "";
  return out.substr(b, out.find_last_not_of(' ') - b + 1);
}

struct ParsedStatus {
  std::string reason;
  std::string message;
  std::optional<int64_t> retry_after_seconds;  // details.retryAfterSeconds
};

// Only a JSON object with kind "Status" counts; other JSON (a proxy's, say) is treated as text.
std::optional<ParsedStatus> ParseStatusBody(std::string_view body) {
  if (body.empty()) return std::nullopt;
  rapidjson::Document doc;
  // Iterative: a body may be up to 16 MiB, and "[[[[..." would otherwise recurse once per bracket
  // and overflow the stack.
  doc.Parse<rapidjson::kParseIterativeFlag>(body.data(), body.size());
  if (doc.HasParseError() || !doc.IsObject()) return std::nullopt;
  const auto kind = doc.FindMember("kind");
  if (kind == doc.MemberEnd() || !kind->value.IsString() ||
      std::string_view(kind->value.GetString(), kind->value.GetStringLength()) != "Status") {
    return std::nullopt;
  }
  ParsedStatus out;
  const auto str = [&doc](const char* name) -> std::string {
    const auto it = doc.FindMember(name);
    if (it == doc.MemberEnd() || !it->value.IsString()) return "";
    return std::string(it->value.GetString(), it->value.GetStringLength());
  };
  out.reason = str("reason");
  out.message = str("message");
  const auto details = doc.FindMember("details");
  if (details != doc.MemberEnd() && details->value.IsObject()) {
    const auto ra = details->value.FindMember("retryAfterSeconds");
    if (ra != details->value.MemberEnd() && ra->value.IsInt64()) {
      out.retry_after_seconds = ra->value.GetInt64();
    }
  }
  return out;
}

}  // namespace

std::optional<Code> CodeFromReason(std::string_view reason) {
  // metav1.StatusReason values (apimachinery/pkg/apis/meta/v1/types.go).
  static constexpr std::pair<std::string_view, Code> kTable[] = {
      {"NotFound", Code::kNotFound},
      {"AlreadyExists", Code::kAlreadyExists},
      {"Conflict", Code::kConflict},
      {"Invalid", Code::kInvalid},
      {"BadRequest", Code::kBadRequest},
      {"MethodNotAllowed", Code::kBadRequest},
      {"Unauthorized", Code::kUnauthorized},
      {"Forbidden", Code::kForbidden},
      {"Gone", Code::kGone},
      {"Expired", Code::kGone},
      {"TooManyRequests", Code::kTooManyRequests},
      {"ServiceUnavailable", Code::kUnavailable},
      {"InternalError", Code::kUnavailable},
      {"ServerTimeout", Code::kUnavailable},
      {"Timeout", Code::kDeadlineExceeded},
  };
  for (const auto& [name, code] : kTable) {
    if (name == reason) return code;
  }
  return std::nullopt;
}

Code CodeFromHttpStatus(long http_status) {
  switch (http_status) {
    case 400:
      return Code::kBadRequest;
    case 401:
      return Code::kUnauthorized;
    case 403:
      return Code::kForbidden;
    case 404:
      return Code::kNotFound;
    case 405:
      return Code::kBadRequest;
    case 409:
      return Code::kConflict;
    case 410:
      return Code::kGone;
    case 422:
      return Code::kInvalid;
    case 429:
      return Code::kTooManyRequests;
    case 504:
      return Code::kDeadlineExceeded;
    default:
      break;
  }
  if (http_status >= 400 && http_status < 500) return Code::kBadRequest;
  return Code::kUnavailable;  // other 5xx, and codes that should never reach here
}

std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value) {
  const size_t b = value.find_first_not_of(" \t");
  if (b == std::string_view::npos) return std::nullopt;
  value = value.substr(b, value.find_last_not_of(" \t") - b + 1);
  int64_t n = 0;
  for (char c : value) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + (c - '0');
    if (n > kMaxRetryAfterSeconds) return std::nullopt;
  }
  return std::chrono::seconds(n);
}

Status StatusFromResponse(long http_status, std::string_view body, std::string_view retry_after) {
  const std::optional<ParsedStatus> parsed = ParseStatusBody(body);
  std::optional<Code> code;
  if (parsed) code = CodeFromReason(parsed->reason);
  if (!code) code = CodeFromHttpStatus(http_status);

  std::string message;
  if (parsed && !parsed->message.empty()) {
    message = parsed->message;
  } else {
    message = "HTTP " + std::to_string(http_status);
    if (parsed && !parsed->reason.empty()) {
      message += " " + Snippet(parsed->reason);
    } else if (const std::string s = Snippet(body); !parsed && !s.empty()) {
      message += ": " + s;
    }
  }
  // An apiserver answers a missing object with a NotFound Status; a path it does not serve at
  // all (an API group or version it lacks: coordination.k8s.io before Kubernetes 1.14) gets its
  // mux's plain-text "404 page not found". Say which, or "not found" reads like a missing lock.
  if (http_status == 404 && !parsed) message += kNotServedSuffix;

  // A 401 is about who we are, not what we may do: RBAC answers 403. Say so before the server's
  // words (usually just "Unauthorized"), so nobody goes looking in the Role.
  if (*code == Code::kUnauthorized) message = std::string(kUnauthorizedPrefix) + message;

  Status status(*code, std::move(message));
  if (*code == Code::kTooManyRequests || *code == Code::kUnavailable) {
    std::optional<std::chrono::seconds> delay = ParseRetryAfter(retry_after);
    if (!delay && parsed && parsed->retry_after_seconds && *parsed->retry_after_seconds >= 0 &&
        *parsed->retry_after_seconds <= kMaxRetryAfterSeconds) {
      delay = std::chrono::seconds(*parsed->retry_after_seconds);
    }
    if (delay) status.set_retry_after(*delay);
  }
  return status;
}

std::string RbacNeed(const Request& request, bool watch) {
  if (!request.object) return {};
  const ObjectRef& object = *request.object;
  const std::string_view method = request.method;
  std::string_view verb;
  if (watch) {
    verb = "watch";
  } else if (method == "GET") {
    verb = object.name.empty() ? "list" : "get";
  } else if (method == "POST") {
    verb = "create";
  } else if (method == "PUT") {
    verb = "update";
  } else if (method == "PATCH") {
    verb = "patch";
  } else if (method == "DELETE") {
    verb = "delete";
  } else {
    return {};
  }
  if (object.resource.empty()) return {};
  std::string out = "verb \"" + std::string(verb) + "\" on " + object.resource;
  // A create names no object yet, and a watch selects one by field: RBAC cannot name either.
  if (!object.name.empty() && verb != "create" && verb != "watch") {
    out += " \"" + object.name + "\"";
  }
  return out;
}

}  // namespace leasehold::kube
