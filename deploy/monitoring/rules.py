#!/usr/bin/env python3
"""The one source of leasehold's alerting rules, rendered three ways.

    rules.py plain [--scale F]         the plain Prometheus rules file (LeaseholdAbsent on `up`)
    rules.py lock NS NAME [--scale F]  a plain rules file for one lock (LeaseholdAbsent on
                                       absent(leasehold_lock_info{...}); NS "" = any namespace)
    rules.py write                     regenerates every checked-in rendering:
        deploy/monitoring/leasehold-rules.yaml                    (rules.py plain)
        deploy/components/monitoring/prometheusrule.yaml          (Kustomize component)
        deploy/helm/leasehold/templates/prometheusrule.yaml       (chart: monitoring.rules.enabled)
    rules.py check                     exits 1 when a checked-in rendering is not what `write`
                                       would write

--scale F multiplies every duration (windows, `for:`, the assumed scrape interval and the
timings), for an end-to-end test on a real Prometheus that cannot wait minutes; promtool tests
the shipped values (F = 1). --set KEY=VALUE (repeatable) overrides one of DEFAULTS, e.g. the
e2e's own timings: --set lease_duration=4 --set renew_deadline=3 --set retry_period=1
--set scrape_interval=2 --set evaluation_interval=1 (numbers are seconds; --scale then applies
on top). docs/runbooks.md explains each alert; its bounds assume the
parameters in DEFAULTS (a 30 s scrape interval, the default timings).
"""
import os
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

DEFAULTS = {
    # What the windows assume. Scrape leasehold at this interval or faster.
    "scrape_interval": 30,  # seconds
    "evaluation_interval": 30,
    # The sidecar's --lease-duration and --renew-deadline (the chart's and the base's defaults).
    "lease_duration": 15,
    "renew_deadline": 10,
    "retry_period": 2,
    # Changes of leader in `flapping_window` at or above which LeaseholdFlapping fires. Must sit
    # above the worst case of one rolling update: one change per replaced replica (a leader
    # handed to an old pod that is replaced next), plus one for a restart.
    "flapping_changes": 5,
    "flapping_window": 900,
    # The `up` selector of the plain file's LeaseholdAbsent.
    "up_selector": 'job=~".*leasehold.*"',
    "runbook_base": "https://github.com/leasehold/leasehold/blob/main/docs/runbooks.md",
    "scale": 1.0,
}

# The renew-duration histogram's bucket bounds (src/localapi/metrics.h, Metrics::kBuckets).
BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

LOCK = ["lock_namespace", "lock_name"]
# The scrape target's labels (PodMonitor and the documented job add namespace and pod).
TARGET = ["job", "instance", "namespace", "pod"]


def dur(seconds):
    """A Prometheus duration: whole seconds, written in the largest exact units ("1m15s")."""
    s = int(round(seconds))
    if s <= 0:
        raise ValueError(f"duration {seconds} rounds to 0")
    out = ""
    for unit, n in (("h", 3600), ("m", 60), ("s", 1)):
        if s >= n:
            out += f"{s // n}{unit}"
            s %= n
    return out


def dur_or_s(seconds):
    return ("%g" % seconds) + "s"


def fmt_bucket(b):
    return ("%g" % b)


def by(labels):
    return "by (" + ", ".join(labels) + ")"


def pod_ref():
    # Prometheus alert templates: the pod, or the instance where a scrape config has no pod label.
    return "{{ with $labels.pod }}{{ . }}{{ else }}{{ $labels.instance }}{{ end }}"


LOCK_REF = "{{ $labels.lock_namespace }}/{{ $labels.lock_name }}"


def slow_bound(p):
    """The renew-duration bucket above which LeaseholdRenewSlowOrFailing calls a renewal slow:
    the largest bucket bound below the slowest renewal a leader survives. A renew starts a
    retry-period after the previous one was answered and must be answered within renew-deadline
    of the previous one's send, so two renewals of L seconds in a row fit only while
    2 L + retry-period <= renew-deadline: L_max = (renew-deadline - retry-period) / 2 (4 s with
    the defaults, 1 s with the e2e's 3 s / 1 s). A bound at half the renew-deadline (5 s, the
    first version) could never fire while the pod still led: the e2e on a real Prometheus
    (e2e/scenarios/prometheus.py, slow_renewals_fire_renew_slow) lost the lease with 1.1 s
    renewals at renew-deadline 3 s, and the request timeout (renew-deadline / 2) cuts any
    single write at half the renew-deadline."""
    k = float(p["scale"])
    survivable = (p["renew_deadline"] - p["retry_period"]) * k / 2
    below = [b for b in BUCKETS if b < survivable]
    if not below:
        raise ValueError("renew_deadline - retry_period too small for the histogram's buckets")
    return below[-1]


def params_of(overrides):
    p = dict(DEFAULTS)
    p.update({k: v for k, v in overrides.items() if v is not None})
    return p


def groups(overrides=None, lock=None):
    """The rule groups. `lock`: None for the plain file (up-based absence), else (ns, name); ns
    may be "" (any namespace), or a placeholder string the Helm rendering substitutes."""
    p = params_of(overrides or {})
    k = float(p["scale"])
    si = p["scrape_interval"] * k
    ld = p["lease_duration"] * k
    rd = p["renew_deadline"] * k
    base = p["runbook_base"]
    # No leader: a window that covers a failover's gap between the last "1" of the old leader
    # and the first "1" of the new one. The gap is at most lease-duration + 2.2 retry-periods
    # (client-go's jitter) in the cluster, plus up to one scrape interval on each side.
    no_leader_window = ld + 2 * si
    no_leader_for = 2 * si
    slow = slow_bound(p)

    def url(anchor):
        return f"{base}#{anchor}"

    lock_by = by(LOCK)
    pod_by = by(LOCK + TARGET)
    rules = []

    rules.append({
        "alert": "LeaseholdNoLeader",
        "expr": f"max {lock_by} (max_over_time(leasehold_is_leader[{dur(no_leader_window)}])) == 0",
        "for": dur(no_leader_for),
        "labels": {"severity": "critical"},
        "annotations": {
            "summary": f"No replica leads lock {LOCK_REF}.",
            "description": (
                f"No pod scraped for lock {LOCK_REF} has said it leads for "
                f"{dur(no_leader_window)} plus {dur(no_leader_for)}. Leader-only work (a K8up "
                "backup schedule) is not running anywhere. Check every pod's /readyz (kubectl "
                "commands in the runbook)."),
            "runbook_url": url("leaseholdnoleader"),
        },
    })

    if lock is None:
        absent_expr = (f"max({'up{' + p['up_selector'] + '}'}) == 0 "
                       f"or absent({'up{' + p['up_selector'] + '}'})")
        absent_desc = ("No leasehold target is up (selector " + p["up_selector"].replace('"', "'")
                       + "): nobody reports on any lock. Check the pods and the scrape "
                       "configuration.")
        absent_summary = "No leasehold target is up."
        absent_labels = {"severity": "critical"}
    else:
        ns, name = lock
        sel = (f'lock_namespace="{ns}",' if ns else "") + f'lock_name="{name}"'
        absent_expr = f"absent(leasehold_lock_info{{{sel}}})"
        where = f"{ns}/{name}" if ns else name
        absent_summary = f"No pod reports on lock {where}."
        absent_desc = (f"No scraped pod has reported leasehold_lock_info for lock {where}: the "
                       "pods are gone, crash-looping, or no longer scraped. Nobody can lead it.")
        absent_labels = {"severity": "critical", "lock_name": name}
        if ns:
            absent_labels["lock_namespace"] = ns
    rules.append({
        "alert": "LeaseholdAbsent",
        "expr": absent_expr,
        # Longer than a rolling update's window in which old targets went stale and new ones
        # have not been scraped yet (a pod's start plus one scrape interval).
        "for": dur(5 * 60 * k),
        "labels": absent_labels,
        "annotations": {
            "summary": absent_summary,
            "description": absent_desc,
            "runbook_url": url("leaseholdabsent"),
        },
    })

    w = dur(15 * 60 * k)
    rules.append({
        "alert": "LeaseholdPromiseOvertaken",
        # A counter that first appears above 0 (it moved before the pod's first scrape) has no
        # increase: the second branch catches it.
        "expr": (f"increase(leasehold_promise_overtaken_total[{w}]) > 0 or "
                 f"(leasehold_promise_overtaken_total > 0 unless "
                 f"leasehold_promise_overtaken_total offset {w})"),
        "labels": {"severity": "critical"},
        "annotations": {
            "summary": f"Two pods were told they lead lock {LOCK_REF} at once.",
            "description": (
                f"Pod {pod_ref()} saw another holder take lock {LOCK_REF} while a \"you lead\" "
                "it had handed out was still running: two pods led at once. A foreign elector "
                "that ignores promises, clock-rate drift beyond the margin, or a bug."),
            "runbook_url": url("leaseholdpromiseovertaken"),
        },
    })

    fw = dur(p["flapping_window"] * k)
    rules.append({
        "alert": "LeaseholdFlapping",
        # The lock's term (its transition count), as the replicas that see it furthest report
        # it, now and one window ago: one step per change of leader, whoever was replaced.
        "expr": (f"max {lock_by} (leasehold_term) - max {lock_by} (leasehold_term offset {fw}) "
                 f">= {p['flapping_changes']}"),
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": f"The leader of lock {LOCK_REF} changes too often.",
            "description": (
                f"Lock {LOCK_REF} changed leader at least {p['flapping_changes']} times in "
                f"{fw}, more than a rolling update would. Renewals fail or pods restart."),
            "runbook_url": url("leaseholdflapping"),
        },
    })

    rw = dur(5 * 60 * k)
    # Failures: at least one in each such window, for the whole `for:` -- one transient failure
    # (an API server restart) keeps the window non-zero for less than `for:`.
    fw_fail = dur(4 * si)
    rules.append({
        "alert": "LeaseholdRenewSlowOrFailing",
        "expr": (
            f"(1 - sum {pod_by} (rate(leasehold_renew_duration_seconds_bucket"
            f"{{le=\"{fmt_bucket(slow)}\"}}[{rw}])) / "
            f"sum {pod_by} (rate(leasehold_renew_duration_seconds_count[{rw}]))) > 0.5 or "
            f"sum {pod_by} (increase(leasehold_renew_failures_total[{fw_fail}])) > 0"),
        "for": dur(5 * 60 * k),
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": f"Renewals of lock {LOCK_REF} by {pod_ref()} are slow or failing.",
            "description": (
                f"Pod {pod_ref()} leads lock {LOCK_REF}, but most of its renewals took longer "
                f"than {fmt_bucket(slow)}s (near the slowest renewal it survives: "
                f"(renew-deadline - retry-period) / 2 = {dur_or_s((rd - p['retry_period'] * k) / 2)}), "
                f"or renewals failed in "
                f"every {fw_fail}, for {dur(5 * 60 * k)}. A few more and it loses the lock."),
            "runbook_url": url("leaseholdrenewsloworfailing"),
        },
    })

    rules.append({
        "alert": "LeaseholdNotReady",
        "expr": "leasehold_ready == 0",
        "for": dur(5 * 60 * k),
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": f"{pod_ref()} cannot take part in the election of {LOCK_REF}.",
            "description": (
                f"Pod {pod_ref()} is not ready for lock {LOCK_REF}: the API server refuses its "
                "credentials (401) or its RBAC (403), rejects the record, or was never reached. "
                "Its /readyz says which."),
            "runbook_url": url("leaseholdnotready"),
        },
    })

    rules.append({
        "alert": "LeaseholdForeignWriter",
        "expr": ("leasehold_term_reliable == 0 or "
                 "(leasehold_lock_held == 1 and leasehold_holder_hash == 0)"),
        # No `for:`: neither state passes by itself in a healthy fleet (the term's
        # unreliability is sticky, an opaque record stays until someone overwrites it).
        "labels": {"severity": "warning"},
        "annotations": {
            "summary": f"A foreign writer voids the fencing token of lock {LOCK_REF}.",
            "description": (
                f"Pod {pod_ref()} saw a writer on lock {LOCK_REF} that does not keep the "
                "transition count, or a record it cannot read: the term is no fencing token."),
            "runbook_url": url("leaseholdforeignwriter"),
        },
    })
    return [{"name": "leasehold", "interval": dur(p["evaluation_interval"] * k), "rules": rules}]


def dump(obj):
    return yaml.safe_dump(obj, sort_keys=False, width=10000, default_flow_style=False)


HEADER = ("# Generated by deploy/monitoring/rules.py from its one source; do not edit. "
          "Runbooks: docs/runbooks.md.\n")


def plain(overrides=None, lock=None):
    return HEADER + dump({"groups": groups(overrides, lock)})


def prometheus_rule(name, groups_):
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "leasehold"}},
        "spec": {"groups": groups_},
    }


# The Helm rendering: placeholders for what only the chart knows, substituted in the template.
HELM_NS = "@@LOCK_NAMESPACE@@"
HELM_NAME = "@@LOCK_NAME@@"
HELM_BASE = "@@RUNBOOK_BASE@@"


def helm_template():
    g = groups({"runbook_base": HELM_BASE}, (HELM_NS, HELM_NAME))
    body = dump({"groups": g})
    # Prometheus' own {{ }} must reach the output as they are.
    body = body.replace("{{", "{{`{{").replace("}}", "}}`}}")
    body = body.replace("{{`{{", "{{ `{{").replace("}}`}}", "}}` }}")
    body = body.replace(HELM_NS, "{{ include \"leasehold.lockNamespace\" . }}")
    body = body.replace(HELM_NAME, "{{ include \"leasehold.lockName\" . }}")
    body = body.replace(HELM_BASE, "{{ .Values.monitoring.rules.runbookBase }}")
    spec = "\n".join("  " + line if line else line for line in body.rstrip("\n").split("\n"))
    return (
        "{{/* Generated by deploy/monitoring/rules.py from its one source; do not edit. */}}\n"
        "{{- if .Values.monitoring.rules.enabled }}\n"
        "apiVersion: monitoring.coreos.com/v1\n"
        "kind: PrometheusRule\n"
        "metadata:\n"
        "  name: {{ include \"leasehold.fullname\" . }}\n"
        "  labels:\n"
        "    {{- include \"leasehold.labels\" . | nindent 4 }}\n"
        "    {{- with .Values.monitoring.rules.labels }}\n"
        "    {{- toYaml . | nindent 4 }}\n"
        "    {{- end }}\n"
        "spec:\n" + spec + "\n{{- end }}\n")


# The Kustomize component's lock: deploy/base's LEASEHOLD_LOCK_NAME, any namespace (the base
# does not fix one; an overlay that does may patch the selector).
KUSTOMIZE_LOCK = ("", "leasehold-lock")


def renderings():
    kust = ("# Generated by deploy/monitoring/rules.py from its one source; do not edit.\n"
            + dump(prometheus_rule("leasehold", groups({}, KUSTOMIZE_LOCK))))
    return {
        "deploy/monitoring/leasehold-rules.yaml": plain(),
        "deploy/components/monitoring/prometheusrule.yaml": kust,
        "deploy/helm/leasehold/templates/prometheusrule.yaml": helm_template(),
    }


def main(argv):
    args = list(argv)
    overrides = {}
    if "--scale" in args:
        i = args.index("--scale")
        overrides["scale"] = float(args[i + 1])
        del args[i:i + 2]
    while "--set" in args:
        i = args.index("--set")
        key, _, value = args[i + 1].partition("=")
        if key not in DEFAULTS:
            print(f"--set: unknown parameter {key!r} (one of {', '.join(DEFAULTS)})",
                  file=sys.stderr)
            return 2
        overrides[key] = type(DEFAULTS[key])(value) if not isinstance(DEFAULTS[key], int) \
            else float(value)
        del args[i:i + 2]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    cmd = args[0]
    if cmd == "plain":
        sys.stdout.write(plain(overrides))
    elif cmd == "lock" and len(args) == 3:
        sys.stdout.write(plain(overrides, (args[1], args[2])))
    elif cmd == "write":
        for path, text in renderings().items():
            with open(os.path.join(ROOT, path), "w") as f:
                f.write(text)
    elif cmd == "check":
        stale = [p for p, t in renderings().items()
                 if not os.path.exists(os.path.join(ROOT, p))
                 or open(os.path.join(ROOT, p)).read() != t]
        for p in stale:
            print(f"{p} is not what deploy/monitoring/rules.py writes: run it with `write`",
                  file=sys.stderr)
        return 1 if stale else 0
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
