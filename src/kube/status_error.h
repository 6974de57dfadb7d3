// Turning a non-2xx API answer into a Status. Kept apart from the transport so it can be unit
// tested and fuzzed on its own: it must accept any bytes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "kube/api_client.h"

namespace leasehold::kube {

// The code for a Kubernetes Status `reason` (metav1.StatusReason), or nullopt when the reason is
// empty or not one we know, so the caller falls back to the HTTP code.
std::optional<Code> CodeFromReason(std::string_view reason);

// The code for an HTTP status when the body names no known reason. Never kOk: a 2xx here (which
// callers should not pass) or a 1xx/3xx is kUnavailable, as is anything unexpected.
Code CodeFromHttpStatus(long http_status);

// The error for a non-2xx answer. `body` may be a Kubernetes Status object
// ({"kind":"Status","status":"Failure","message":..,"reason":..,"code":..}), other JSON, text or
// nothing. The code comes from the body's reason, else from `http_status`; the message is the
// server's, else "HTTP <code>" with the start of the body. `retry_after` is the raw Retry-After
// header value ("" when absent): a whole number of seconds is kept (Status::retry_after) when the
// code is kTooManyRequests or kUnavailable; failing that, the Status body's
// details.retryAfterSeconds is used, as client-go's SuggestsClientDelay does.
// A kUnauthorized message starts with kUnauthorizedPrefix: a 401 means the credentials were not
// accepted (token expired, revoked or invalid; client certificate not trusted), never a missing
// RBAC permission, which is a 403.
Status StatusFromResponse(long http_status, std::string_view body,
                          std::string_view retry_after = {});

// Added to a 404 whose body is not a Status: the server does not serve that API (the code stays
// kNotFound, which the locks and the elector already treat as "no such object").
inline constexpr const char* kNotServedSuffix =
    " (not a Kubernetes Status: the API server does not serve this API, e.g. Leases before "
    "Kubernetes 1.14, where --lock-type auto uses the ConfigMap lock)";

inline constexpr const char* kUnauthorizedPrefix =
    "authentication failed (the token is expired, revoked or invalid, or the client certificate "
    "is not accepted): ";

// For a 403: which RBAC permission the request needed, e.g. `verb "update" on leases "lock"`,
// read from the request's ObjectRef (`watch` is true for a watch). An operator fixes the Role
// from this line without decoding the URL. Empty for a request about no object (discovery) or
// with a method RBAC has no verb for.
std::string RbacNeed(const Request& request, bool watch);

// Parses a Retry-After header holding delay-seconds (RFC 9110 §10.2.3). HTTP dates, negative
// numbers and anything absurd (more than a day) give nullopt.
std::optional<std::chrono::seconds> ParseRetryAfter(std::string_view value);

}  // namespace leasehold::kube
