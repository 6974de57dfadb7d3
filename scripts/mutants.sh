#!/usr/bin/env bash
# mutants.sh [--list] [--check] [--skip-baseline] [NAME...]: mutation testing of src/election,
# src/locks and the local API's guards (listeners, peers, promises).
#
# Each mutant is a named text patch that removes or weakens one safety guard. It is applied, one
# at a time, to a COPY of the source tree (the working tree is never modified), built there
# incrementally, and run against the non-e2e tests (`ctest -LE e2e`, the most relevant binaries
# first, stopping at the first failure). A mutant no test kills is a guard no test pins.
#
#   scripts/mutants.sh                     every mutant (one build and test run each: long)
#   scripts/mutants.sh NAME...             only these
#   scripts/mutants.sh --list              names, file:line and what each breaks
#   scripts/mutants.sh --check             only check that every patch still applies
#
# A patch whose text no longer matches exactly once fails loudly before anything is built: update
# it with the code. The unmutated copy must build and pass first. Exit status: 0 all killed, 3 some
# survived, 1 error, 2 usage. One run at a time per work dir (a lock). On demand only, not in CI;
# about 10 minutes on 2 cores, plus the first full build. While others edit the tree, copy a
# stable snapshot instead (MUTANTS_SRC=DIR, e.g. `git archive HEAD | tar -x -C DIR`).
# Environment: MUTANTS_WORK (default /tmp/leasehold-mutants: src-copy/, build/, logs/),
# MUTANTS_SRC (the tree to copy; default this checkout), MUTANTS_TESTS (a ctest -R regex: only
# these tests), MUTANTS_JOBS (default 2), MUTANTS_NICE (default 10).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec python3 - "$root" "$@" <<'PY'
import fcntl, os, shutil, subprocess, sys, time

ROOT = sys.argv[1]
ARGS = sys.argv[2:]
SRC = os.environ.get("MUTANTS_SRC", ROOT)
WORK = os.environ.get("MUTANTS_WORK", "/tmp/leasehold-mutants")
JOBS = os.environ.get("MUTANTS_JOBS", "2")
NICE = ["nice", "-n", os.environ.get("MUTANTS_NICE", "10")]
COPY = os.path.join(WORK, "src-copy")
BUILD = os.path.join(WORK, "build")
LOGS = os.path.join(WORK, "logs")

E = "src/election/elector.cpp"
C = "src/election/config.cpp"
# The local API's guards (issue 21): which listener shows which route, who may release, and which
# answers are promises. Killed by localapi_test's routes test (test/localapi/routes_test.cpp).
H = "src/localapi/handler.cpp"
R = "src/localapi/router.cpp"
# Publication (issue 21 step 5 moved it beside the elector): promises, the answer judged when it
# is rendered, and a listener that never waits for a sink.
PUB = "src/election/publisher.cpp"

# (name, file, old text, new text, what the mutant breaks). `old` must occur exactly once.
MUTANTS = [
    # --- the answer: IsLeaderLocked, judged at the question's instant ---------------------------
    ("isleader-ignores-holder", E,
     "phase_ == Phase::kLeader &&\n      observed_record_.holder_identity == config_.identity()) {",
     "phase_ == Phase::kLeader) {",
     "the answer ignores the observed holder (a foreign write seen by watch or GET)"),
    ("isleader-ignores-claim-window", E,
     "return claim.has_value() && now < *claim;",
     "return claim.has_value() && now >= MonoTime{};",
     "the answer is state kept by the loop, not judged from the clock at question time"),
    ("claim-window-inclusive", E,
     "now < *claim;",
     "now <= *claim;",
     "still yes at the very instant sent + renew-deadline"),
    ("isleader-ignores-stop", E,
     "if (!stop_requested_ && !release_requested_ && phase_",
     "if (!release_requested_ && phase_",
     "still yes after SIGTERM"),
    ("isleader-ignores-release", E,
     "if (!stop_requested_ && !release_requested_ && phase_",
     "if (!stop_requested_ && phase_",
     "still yes after POST /release"),
    # --- the claim: send time + renew-deadline ------------------------------------------------
    ("claim-from-answer-fast", E,
     "re-observes.\n      WriteSucceededLocked(rec, observed_raw_, sent, after);\n",
     "re-observes.\n      WriteSucceededLocked(rec, observed_raw_, sent, after);\n"
     "      claim_until_ = after + config_.renew_deadline();\n",
     "fast-path renew's claim counted from its answer, not from when it was sent"),
    ("claim-from-answer-create", E,
     "WriteSucceededLocked(rec, \"\", sent, after);\n",
     "WriteSucceededLocked(rec, \"\", sent, after);\n"
     "    claim_until_ = after + config_.renew_deadline();\n",
     "create's claim counted from its answer"),
    ("create-conflict-is-success", E,
     "Status st = lock_.Create(rec, deadline);\n    std::lock_guard<std::mutex> l(mu_);\n"
     "    if (!st.ok()) {",
     "Status st = lock_.Create(rec, deadline);\n    std::lock_guard<std::mutex> l(mu_);\n"
     "    if (!st.ok() && st.code() != Code::kAlreadyExists) {",
     "a create that lost the race (AlreadyExists) counts as acquired"),
    ("claim-from-answer-slow", E,
     "\n  WriteSucceededLocked(rec, observed_raw_, sent, after);\n",
     "\n  WriteSucceededLocked(rec, observed_raw_, sent, after);\n"
     "  claim_until_ = after + config_.renew_deadline();\n",
     "slow-path write's claim counted from its answer"),
    ("claim-window-lease-duration", E,
     "claim_until_ = sent + config_.renew_deadline();",
     "claim_until_ = sent + config_.lease_duration();",
     "the yes lasts lease-duration instead of renew-deadline (every write's claim)"),
    ("renew-outlives-claim", E,
     "deadline = was_leader ? *claim_until_ : now + config_.renew_deadline();",
     "deadline = now + config_.renew_deadline();",
     "a renew call may run past the claim it extends"),
    ("no-step-down-at-claim-end", E,
     "if (phase_ == Phase::kLeader && (!claim_until_ || now >= *claim_until_)) {",
     "if (false) {",
     "a leader whose claim ran out keeps the leader phase"),
    ("no-step-down-on-foreign-holder", E,
     "if (was_leader && observed_record_.holder_identity != config_.identity()) {",
     "if (false) {",
     "a leader whose GET shows another holder stays in the leader phase"),
    ("config-retry-floor-unchecked", C,
     "if (t.retry_period < kMinRetryPeriod) {",
     "if (false) {",
     "--retry-period below 1s accepted: renews within one second look alike to rivals"),
    ("config-margin-unchecked", C,
     "if (t.lease_duration - t.renew_deadline < seconds(1)) {",
     "if (t.lease_duration - t.renew_deadline < Duration::zero()) {",
     "lease-duration - renew-deadline >= 1s no longer validated"),
    # --- the rival's side: observation and expiry ---------------------------------------------
    ("observed-time-at-start", E,
     "      SetObserved(obs, clock_.MonotonicNow());",
     "      SetObserved(obs, now);",
     "a record counts as observed when the attempt started, not when the read returned"),
    ("takeover-ignores-expiry", E,
     "if (foreign && LeaseValidLocked(now)) {",
     "if (foreign && false) {",
     "a held lock is taken over before it expired"),
    ("expiry-uses-own-duration", E,
     "  return recorded > 0 ? recorded : config_.lease_duration_seconds();",
     "  return config_.lease_duration_seconds();",
     "expiry (and the watching candidate's next attempt) ignores the record's "
     "leaseDurationSeconds"),
    ("expiry-from-wall-renew-time", E,
     "return observed_time_ + std::chrono::seconds(ObservedLeaseSecondsLocked()) > now;",
     "(void)now;\n  return observed_record_.renew_time.value_or(clock_.SystemNow()) +"
     " std::chrono::seconds(ObservedLeaseSecondsLocked()) > clock_.SystemNow();",
     "expiry judged from the record's wall-clock renewTime, not the local monotonic observation"),
    ("timer-restarts-on-every-read", E,
     "if (!observed_ || obs.raw != observed_raw_ ||\n        obs.record.holder_identity != observed_record_.holder_identity ||\n        obs.opaque != observed_opaque_) {",
     "if (true) {",
     "an unchanged record restarts the expiry timer (a dead leader is never replaced)"),
    ("observe-unchanged-restarts-timer", E,
     "    } else if (observed_ && observation.raw == observed_raw_ &&\n               observation.record.holder_identity == observed_record_.holder_identity &&\n               observation.opaque == observed_opaque_) {",
     "    } else if (false) {",
     "a watch event with an unchanged record restarts the expiry timer"),
    ("get-ignores-changed-holder", E,
     " ||\n        obs.record.holder_identity != observed_record_.holder_identity ||\n",
     " ||\n",
     "a Get whose raw matches a watch event's keeps the holder a late write answer left (finding 1)"),
    ("observe-ignores-changed-holder", E,
     " &&\n               observation.record.holder_identity == observed_record_.holder_identity &&\n",
     " &&\n",
     "a watch event whose raw matches is unchanged even when the observed holder differs"),
    ("candidate-takes-own-watch-event", E,
     "    } else if (observation.record.holder_identity == config_.identity()) {\n",
     "    } else if (false) {\n",
     "a candidate learns from a (stale) watch event that it holds the lock (finding 3)"),
    ("renew-stamped-at-start", E,
     "  rec.renew_time = stamp;\n",
     "",
     "the slow path stamps renewTime when the attempt began, not at the send (finding 2)"),
    ("observe-no-renew", E,
     "      check_now_ = true;\n",
     "",
     "a leader does not re-check at once when the watch shows a foreign write"),
    ("fast-path-ignores-expiry", E,
     "observed_record_.holder_identity == config_.identity() &&\n        LeaseValidLocked(now)) {",
     "observed_record_.holder_identity == config_.identity()) {",
     "a leader that was paused past its lease still renews blind from its cache"),
    ("takeover-keeps-term", E,
     "std::max(max_transitions_seen_, obs.record.leader_transitions) + 1;",
     "std::max(max_transitions_seen_, obs.record.leader_transitions);",
     "a takeover does not bump the term (fencing token)"),
    # --- the local API: listeners, peers and promises (issue 21) -------------------------------
    ("probe-serves-every-route", H,
     "  if (options.probe_only && !route.on_probe) return false;\n",
     "",
     "the probe listener (pod IP) serves /leader and /release"),
    ("probe-streams-watch", H,
     "{\"/leader/watch\", Methods::kGet, /*on_probe=*/false,",
     "{\"/leader/watch\", Methods::kGet, /*on_probe=*/true,",
     "the probe listener streams /leader/watch"),
    ("probe-takes-promise", R,
     "const bool promise = AnswersLeadership(q.path) && !options_.probe_only;",
     "const bool promise = AnswersLeadership(q.path);",
     "the probe listener's /is-leader records a promise: every kubelet probe delays a safe release"),
    ("release-from-any-peer", H,
     "if (!q.loopback_peer) {",
     "if (false) {",
     "POST /release is accepted from a peer off the loopback"),
    ("release-on-any-method", H,
     "  if (route->methods == Methods::kPost && q.method != \"POST\") return NotAllowed(q, kPostAllow);\n",
     "",
     "GET (or any method) on /release releases the lock"),
    ("is-leader-peeks", H,
     "{\"/is-leader\", Methods::kGet, /*on_probe=*/true, Promise::kAnswer,",
     "{\"/is-leader\", Methods::kGet, /*on_probe=*/true, Promise::kNone,",
     "a loopback /is-leader 'yes' is no promise: a safe release does not wait for it"),
    ("leader-peeks", H,
     "{\"/leader\", Methods::kGet, /*on_probe=*/false, Promise::kAnswer,",
     "{\"/leader\", Methods::kGet, /*on_probe=*/false, Promise::kNone,",
     "a loopback /leader 'yes' is no promise"),
    ("root-peeks", H,
     "{\"/\", Methods::kGet, /*on_probe=*/false, Promise::kAnswer,",
     "{\"/\", Methods::kGet, /*on_probe=*/false, Promise::kNone,",
     "a loopback / 'yes' is no promise"),
    ("watch-attach-peeks", PUB,
     "  PollLocked(/*force_promise=*/true);",
     "  PollLocked(/*force_promise=*/false);",
     "a watch stream's first event 'yes' is no promise"),
    ("render-ignores-valid-until", E,
     "return is_leader && now < valid_until;",
     "static_cast<void>(now);\n  return is_leader;",
     "a snapshot rendered after its claim ran out (a stalled sink, a late answer) still says yes"),
    ("listener-waits-for-sinks", PUB,
     "  wake_cv_.notify_one();\n",
     "  wake_cv_.notify_one();\n  Poll();\n",
     "the elector's listener publishes inline: a stalled sink holds up the renew"),
    # --- release ------------------------------------------------------------------------------
    ("release-if-not-holder", E,
     "    if (got->record.holder_identity != config_.identity()) {\n"
     "      std::lock_guard<std::mutex> l(mu_);",
     "    if (false) {\n      std::lock_guard<std::mutex> l(mu_);",
     "release blanks the lock even when the fresh GET shows another holder"),
    # --- metrics (issue 22): promise_overtaken_total counts exactly; scrapes take no lock ------
    ("overtaken-ignores-promise-end", E,
     "if (!other || !(now < promised_until_) || overtaken_counted_for_ == promised_until_) return;",
     "if (!other || overtaken_counted_for_ == promised_until_) return;",
     "promise_overtaken_total counts a takeover after every promise ended (a normal handover)"),
    ("overtaken-promise-end-inclusive", E,
     "if (!other || !(now < promised_until_) || overtaken_counted_for_ == promised_until_) return;",
     "if (!other || !(now <= promised_until_) || overtaken_counted_for_ == promised_until_) return;",
     "a takeover seen the very instant the promise ends counts"),
    ("overtaken-counts-twice", E,
     " || overtaken_counted_for_ == promised_until_) return;",
     ") return;",
     "one overtaken promise counted once per observation of the takeover"),
    ("overtaken-trusts-stale-watch", E,
     "                    o.record.leader_transitions <= written_term_)) {",
     "                    false)) {",
     "a stale watch event of the previous holder counts as a takeover"),
    ("overtaken-not-from-get", E,
     "    NotePromiseOvertakenLocked(obs, /*from_get=*/true, clock_.MonotonicNow());\n",
     "",
     "a takeover read by a Get (a leader's renew) is not counted"),
    ("overtaken-counts-own-release", E,
     "  if (promised_until_ <= released_promises_until_) return;  // given up by our own release\n",
     "",
     "a takeover after this replica released (promises given back) counts as overtaken"),
    ("overtaken-release-marked-late", E,
     "      released_promises_until_ = promised_until_;\n    }\n    Status st = lock_.Update(rec, deadline);\n    if (st.ok()) {\n      std::lock_guard<std::mutex> l(mu_);\n",
     "    }\n    Status st = lock_.Update(rec, deadline);\n    if (st.ok()) {\n      std::lock_guard<std::mutex> l(mu_);\n      released_promises_until_ = promised_until_;\n",
     "the release marks its promises given up only after the write returns: a rival's event during it counts"),
    ("gauges-leader-ignores-holder", E,
     "  const std::optional<MonoTime> claim = LeaderClaimLocked();\n"
     "  gauges_.leader_until_ns.store(claim ? ns(*claim) : 0);",
     "  gauges_.leader_until_ns.store(claim_until_ ? ns(*claim_until_) : 0);",
     "/metrics says leader from the claim alone, after a stop or a foreign holder"),
    ("metrics-scrape-takes-snapshot", H,
     "{\"/metrics\", Methods::kGet, /*on_probe=*/true, Promise::kNone, /*reads_snapshot=*/false,",
     "{\"/metrics\", Methods::kGet, /*on_probe=*/true, Promise::kNone, /*reads_snapshot=*/true,",
     "a /metrics scrape takes the elector's lock (a flood of scrapes can delay a renew)"),
    ("accept-burst-past-limit", "src/http/event_loop.cpp",
     "    if (i > 0 && ordinary_ >= options_.max_connections) return;\n",
     "",
     "an accept burst counts connections closed by their peers (unseen) and sheds a live one"),
    ("safe-release-ignores-promise", E,
     "if (mode == ReleaseMode::kSafe && !acked && now < promised) {",
     "if (mode == ReleaseMode::kSafe && !acked && now < promised && false) {",
     "safe mode releases before the last yes it handed out has run out"),
    ("take-records-no-promise", E,
     "if (promise) promised_until_ = std::max(promised_until_, *claim_until_);",
     "(void)promise;",
     "a yes handed out by Take() is not remembered as a promise"),
    ("stop-releases-unobserved", E,
     "if (ours && mode != ReleaseMode::kOff) {",
     "if ((ours || true) && mode != ReleaseMode::kOff) {",
     "stopping releases although this replica never held the lock"),
    # --- the locks: every write conditional ---------------------------------------------------
    # --- foreign records (issue 13): opaque holders, the fencing token, no unheld-looking write --
    ("opaque-is-free", E,
     "const bool foreign = obs.opaque || (!holder.empty() && holder != config_.identity());",
     "const bool foreign = !holder.empty() && holder != config_.identity();",
     "an unreadable record counts as free and is taken at once"),
    ("opaque-own-duration-only", E,
     "if (observed_opaque_) return std::max(recorded, config_.lease_duration_seconds());",
     "if (observed_opaque_) return config_.lease_duration_seconds();",
     "an opaque holder's longer readable duration is ignored"),
    ("opaque-due-now", E,
     "if (!observed_ || (holder.empty() && !observed_opaque_) || holder == config_.identity() ||",
     "if (!observed_ || holder.empty() || holder == config_.identity() ||",
     "a watching candidate retries an opaque holder at once instead of at its expiry"),
    ("term-from-record-only", E,
     "rec.leader_transitions = std::max(max_transitions_seen_, obs.record.leader_transitions) + 1;",
     "rec.leader_transitions = obs.record.leader_transitions + 1;",
     "a takeover after a foreign reset of the count repeats a term already seen"),
    ("term-watch-unchecked", E,
     "    CheckTermLocked(observation, term_from_watch_);\n",
     "",
     "a watching follower never learns that a foreign writer does not keep the count"),
    ("renew-copies-null-acquire", E,
     "rec.acquire_time = observed_record_.acquire_time.value_or(wall);",
     "rec.acquire_time = observed_record_.acquire_time;",
     "a fast-path renew writes a null acquireTime, which the Python elector takes at once"),
    ("slow-renew-copies-null-acquire", E,
     "if (takeover || !rec.acquire_time) rec.acquire_time = stamp;",
     "if (takeover) rec.acquire_time = stamp;",
     "a slow-path renew writes a null acquireTime"),
    ("annotation-garbage-is-error", "src/locks/annotation_lock.cpp",
     "if (!decoded.ok()) return internal::OpaqueObservation(object, observation.record, decoded);",
     "if (!decoded.ok()) return decoded;",
     "an unreadable annotation is an error again: the fleet is locked out for good"),
    ("lease-opaque-not-cached", "src/locks/lease_lock.cpp",
     "  LockObservation observation = internal::ObserveLease(object->doc);\n"
     "  cached_ = std::move(object);",
     "  LockObservation observation = internal::ObserveLease(object->doc);\n"
     "  if (!observation.opaque) cached_ = std::move(object);",
     "an opaque Lease is not cached, so the takeover cannot PUT on its version"),
    ("duration-string-unread", "src/locks/codec.cpp",
     "  } else if (v.IsString()) {\n    const std::string_view t(v.GetString(), v.GetStringLength());",
     "  } else if (false) {\n    const std::string_view t(v.GetString(), v.GetStringLength());",
     "the Python record's string duration makes it unreadable"),
    ("lease-put-unconditional", "src/locks/lease_lock.cpp",
     "  internal::SetMember(object, \"spec\", spec, object.GetAllocator());\n",
     "  internal::SetMember(object, \"spec\", spec, object.GetAllocator());\n"
     "  if (auto* md = internal::FindMember(object, \"metadata\")) "
     "md->RemoveMember(\"resourceVersion\");\n",
     "the Lease PUT carries no resourceVersion"),
    ("annotation-put-unconditional", "src/locks/annotation_lock.cpp",
     "  internal::SetMember(*annotations, kLeaderAnnotationKey, value, allocator);\n",
     "  internal::SetMember(*annotations, kLeaderAnnotationKey, value, allocator);\n"
     "  metadata->RemoveMember(\"resourceVersion\");\n",
     "the ConfigMap/Endpoints PUT carries no resourceVersion"),
    ("multilock-regets-lease", "src/locks/multi_lock.cpp",
     "  if (!s.ok()) return s;\n  return secondary_->has_cached_object()",
     "  if (!s.ok()) return s;\n  (void)secondary_->Get(deadline);\n"
     "  return secondary_->has_cached_object()",
     "multilock re-GETs the Lease before its PUT (client-go), not using the decision's version"),
    ("multilock-split-holder-hidden", "src/locks/multi_lock.cpp",
     "if (out.record.holder_identity != secondary->record.holder_identity) {",
     "if (false) {",
     "objects naming different holders report the primary's holder, not 'unknown'"),
    ("multilock-create-ignores-exists", "src/locks/multi_lock.cpp",
     "Status s = primary_->Create(record, deadline);\n  if (!s.ok()) return s;",
     "Status s = primary_->Create(record, deadline);\n"
     "  if (!s.ok() && s.code() != Code::kAlreadyExists) return s;",
     "multilock ignores the primary's AlreadyExists (client-go): an unconditional second write"),
    ("multilock-missing-lease-notfound", "src/locks/multi_lock.cpp",
     "if (secondary.code() == Code::kNotFound) return primary;",
     "if (secondary.code() == Code::kNotFound) return secondary.status();",
     "a missing Lease reads as NotFound although the primary exists (client-go)"),
    ("lease-raw-omits-renew-time", "src/locks/codec.cpp",
     "\",\\\"renewTime\\\":\" + QuotedTimeOrNull(r.renew_time, true) +\n"
     "         \",\\\"leaderTransitions\\\":\"",
     "\",\\\"leaderTransitions\\\":\"",
     "a renew does not change the Lease's raw record, so rivals see a renewing leader expire"),
    ("auto-update-skips-recheck", "src/locks/auto_lock.cpp",
     "if (effective_.load() == Effective::kLeases && RecheckDue(clock_.MonotonicNow())) {",
     "if (false) {",
     "a Lease-only leader never re-checks for a ConfigMap that old replicas created"),
    ("auto-recheck-forbidden-fails-open", "src/locks/auto_lock.cpp",
     "if (configmap.code() != Code::kNotFound) return configmap.status();  // fails closed",
     "if (configmap.code() != Code::kNotFound && configmap.code() != Code::kForbidden) "
     "return configmap.status();",
     "a 403 on the ConfigMap check lets the leader renew the Lease alone"),
    ("auto-get-recheck-fails-open", "src/locks/auto_lock.cpp",
     "if (configmap.code() == Code::kNotFound) return multi_.secondary().Get(deadline);\n"
     "  return configmap.status();",
     "return multi_.secondary().Get(deadline);",
     "a Get whose ConfigMap check failed (403, timeout) reads the Lease alone"),
]

# Most relevant first; each group stops at its first failing test. MUTANTS_TESTS=REGEX runs only
# the matching tests instead (e.g. to see whether a component test alone kills a mutant).
GROUPS = [
    ["-R", "^(election_test|locks_test)$"],
    ["-R", "^election_component_test$"],
    ["-LE", "e2e|node", "-E", "^(election_test|locks_test|election_component_test)$"],
]
if os.environ.get("MUTANTS_TESTS"):
    GROUPS = [["-LE", "e2e|node", "-R", os.environ["MUTANTS_TESTS"]]]
# Files whose mutants the listed tests kill first (tried before GROUPS; unless MUTANTS_TESTS).
FIRST = {H: "^localapi_test$", R: "^localapi_test$", PUB: "^election_test$",
         "src/http/event_loop.cpp": "^localapi_test$"}


def groups_for(path):
    if os.environ.get("MUTANTS_TESTS") or path not in FIRST:
        return GROUPS
    return [["-R", FIRST[path]]] + GROUPS


def line_of(tree, path, old):
    # The 1-based line where the patched text starts in `tree` (0 when it does not occur).
    try:
        text = open(os.path.join(tree, path)).read()
    except OSError:
        return 0
    at = text.find(old)
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def usage(code):
    print("usage: scripts/mutants.sh [--list] [--check] [--skip-baseline] [NAME...]",
          file=sys.stderr)
    sys.exit(code)


def run(cmd, log=None, cwd=None):
    with open(log, "a") if log else open(os.devnull, "w") as out:
        out.write("$ " + " ".join(cmd) + "\n") if log else None
        out.flush()
        return subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=cwd).returncode


def build(log):
    return run(NICE + ["cmake", "--build", BUILD, "-j", JOBS], log) == 0


def failed_detail(log):
    # The doctest case (and subcase) of the first failed assertion in the log, e.g.
    # "elector / [x] a case". doctest prints a "TEST CASE:" header before MESSAGEs too.
    lines = open(log, errors="replace").read().splitlines()
    current = ""
    for i, line in enumerate(lines):
        if line.startswith("TEST CASE:"):
            parts = [line[len("TEST CASE:"):].strip()]
            for nxt in lines[i + 1:i + 4]:
                if nxt.startswith("  ") and nxt.strip():
                    parts.append(nxt.strip())
                else:
                    break
            current = " / ".join(parts)
        elif ": ERROR: " in line or ": FATAL ERROR: " in line:
            return current
    return current


def run_tests(log, groups=None):
    # Returns (passed, failing test, detail).
    for group in groups or GROUPS:
        failed_log = os.path.join(BUILD, "Testing", "Temporary", "LastTestsFailed.log")
        if os.path.exists(failed_log):
            os.remove(failed_log)
        rc = run(NICE + ["ctest", "--test-dir", BUILD, "--output-on-failure", "--stop-on-failure",
                         "--timeout", "300"] + group, log)
        if rc != 0:
            name = "?"
            if os.path.exists(failed_log):
                first = open(failed_log).read().split()
                if first:
                    name = first[0].split(":", 1)[-1]
            return False, name, failed_detail(log)
    return True, "", ""


def sync_copy():
    # Makes COPY a copy of SRC (without build dirs and .git). Only files whose content differs are
    # written, and with the current time, so ninja rebuilds exactly those (also after an
    # interrupted run left a mutant in place); mtimes copied from SRC could be older than the
    # objects built from a mutant and hide it.
    def skip(rel, name):
        return (name == ".git" or name == "__pycache__" or (rel == "" and name.startswith("build"))
                or os.path.join(rel, name) == os.path.join("e2e", "out"))
    wanted = set()
    for dirpath, dirnames, filenames in os.walk(SRC):
        rel = os.path.relpath(dirpath, SRC)
        rel = "" if rel == "." else rel
        dirnames[:] = [d for d in dirnames if not skip(rel, d)]
        os.makedirs(os.path.join(COPY, rel), exist_ok=True)
        wanted.add(rel)
        for name in filenames:
            src = os.path.join(dirpath, name)
            dst = os.path.join(COPY, rel, name)
            wanted.add(os.path.join(rel, name))
            if os.path.islink(src):
                target = os.readlink(src)
                if not (os.path.islink(dst) and os.readlink(dst) == target):
                    if os.path.lexists(dst):
                        os.remove(dst)
                    os.symlink(target, dst)
                continue
            data = open(src, "rb").read()
            if os.path.islink(dst) or not os.path.isfile(dst) or open(dst, "rb").read() != data:
                if os.path.lexists(dst):
                    os.remove(dst)
                with open(dst, "wb") as out:
                    out.write(data)
                shutil.copymode(src, dst)
    for dirpath, dirnames, filenames in os.walk(COPY, topdown=False):
        rel = os.path.relpath(dirpath, COPY)
        rel = "" if rel == "." else rel
        for name in filenames:
            if os.path.join(rel, name) not in wanted:
                os.remove(os.path.join(dirpath, name))
        if rel and rel not in wanted and not os.listdir(dirpath):
            os.rmdir(dirpath)


def main():
    skip_baseline = check_only = False
    names = []
    for a in ARGS:
        if a == "--list":
            # name, file:line (where the patch applies in this checkout), what it breaks
            for n, f, old, _, why in MUTANTS:
                where = f"{f}:{line_of(SRC, f, old)}"
                print(f"{n:36} {where:36} {why}")
            return 0
        elif a == "--skip-baseline":
            skip_baseline = True
        elif a == "--check":
            check_only = True
        elif a in ("-h", "--help"):
            usage(0)
        elif a.startswith("-"):
            usage(2)
        else:
            names.append(a)
    known = {m[0] for m in MUTANTS}
    unknown = [n for n in names if n not in known]
    if unknown:
        print("unknown mutant(s): " + " ".join(unknown) + " (see --list)", file=sys.stderr)
        return 2
    chosen = [m for m in MUTANTS if not names or m[0] in names]

    def check(tree):
        texts = {}
        for n, f, old, new, _ in chosen:
            text = texts.setdefault(f, open(os.path.join(tree, f)).read())
            count = text.count(old)
            if count != 1:
                print(f"mutant {n}: its text occurs {count} times in {f}, not once; update the "
                      "patch", file=sys.stderr)
                return None
        return texts

    if check_only:  # reads SRC only: safe while a run is going
        if check(SRC) is None:
            return 1
        print(f"all {len(chosen)} patches apply")
        return 0
    os.makedirs(WORK, exist_ok=True)
    lock = open(os.path.join(WORK, "lock"), "w")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        print(f"another mutants.sh run uses {WORK}; set MUTANTS_WORK to run beside it",
              file=sys.stderr)
        return 1
    os.makedirs(LOGS, exist_ok=True)
    sync_copy()
    pristine = check(COPY)
    if pristine is None:
        return 1

    if not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")):
        gen = ["-G", "Ninja"] if subprocess.run(["which", "ninja"], stdout=subprocess.DEVNULL
                                               ).returncode == 0 else []
        subprocess.run(["cmake", "-S", COPY, "-B", BUILD] + gen +
                       ["-DCMAKE_BUILD_TYPE=RelWithDebInfo"], stdout=subprocess.DEVNULL,
                       check=True)
    log = os.path.join(LOGS, "baseline.log")
    open(log, "w").close()
    t0 = time.time()
    if not build(log):
        print(f"the unmutated copy does not build; see {log}", file=sys.stderr)
        return 1
    if not skip_baseline:
        ok, name, detail = run_tests(log)
        if not ok:
            print(f"the unmutated copy fails {name} ({detail}); see {log}", file=sys.stderr)
            return 1
        print(f"baseline: builds and passes ctest -LE e2e ({time.time() - t0:.0f}s)", flush=True)

    rows = []
    for n, f, old, new, why in chosen:
        path = os.path.join(COPY, f)
        log = os.path.join(LOGS, n + ".log")
        open(log, "w").close()
        start = time.time()
        with open(path, "w") as out:
            out.write(pristine[f].replace(old, new, 1))
        try:
            if not build(log):
                result, by = "BUILD-FAILED", "(fix the patch)"
            else:
                ok, name, detail = run_tests(log, groups_for(f))
                result = "survived" if ok else "killed"
                by = name + (f": {detail}" if detail else "")
        finally:
            with open(path, "w") as out:
                out.write(pristine[f])
        rows.append((n, f, result, by))
        print(f"{n:36} {result:9} {time.time() - start:5.0f}s  {by}", flush=True)
    build(os.path.join(LOGS, "restore.log"))

    print()
    print(f"| {'mutant':36} | {'file':28} | {'result':9} | killed by")
    print(f"|{'-' * 38}|{'-' * 30}|{'-' * 11}|{'-' * 40}")
    for n, f, result, by in rows:
        print(f"| {n:36} | {f:28} | {result:9} | {by[:110]}")
    killed = sum(1 for r in rows if r[2] == "killed")
    print(f"\n{killed} of {len(rows)} mutants killed; logs in {LOGS}")
    return 0 if all(r[2] == "killed" for r in rows) else 3


sys.exit(main())
PY
