// The user-facing messages that more than one room or command states, each in one home, so the
// transport's error, the elector's log line and /readyz cannot drift apart (the elector and
// /readyz once named different RBAC verbs), nor the commands' usage errors.
// Pinned by test/base/messages_test.cpp and by the /readyz golden files.
#pragma once

namespace leasehold {

// A 401: the API server did not accept who this agent says it is; never a missing RBAC
// permission, which is a 403. The elector's log line and /readyz's reason say it; the likely
// cause (the token, the client certificate) has its one home in the message itself, which
// kube/status_error.h's kUnauthorizedPrefix starts, so it is not said twice in one line.
inline constexpr const char kCredentialsRefused[] =
    "the API server does not accept this agent's credentials";

// A 403 on the lock. The verbs are every one the agent calls on the lock object, whatever its
// type (Lease, ConfigMap, Endpoints; `auto` reads the Lease and the ConfigMap of its name): get
// (each attempt), create (only when the lock is missing), update (acquire, renew, release) and
// watch (followers watch the lock instead of polling). deploy/rbac/role.yaml grants exactly these.
inline constexpr const char kLockRbacRefused[] =
    "the API server refuses this agent (its ServiceAccount needs get, create, update and watch "
    "on the lock; the Role in deploy/rbac grants them)";

// The argument scanner's rejections (app/options.h, ScanArguments), in the same words for every
// command. Each "{}" takes the next of: the flag or the argument (quoted when it is the user's
// text), then the command ("leasehold gate"); UsageError appends " (see COMMAND --help)".
inline constexpr const char kUnknownFlag[] = "unknown flag {}";
inline constexpr const char kFlagNeedsValue[] = "{}: needs a value";
inline constexpr const char kSwitchTakesNoValue[] = "{}: takes no value";
inline constexpr const char kUnexpectedArgument[] = "unexpected argument {}: {} takes flags only";
inline constexpr const char kNoCommand[] = "no command: {} [flags] -- CMD [ARGS...]";

}  // namespace leasehold
