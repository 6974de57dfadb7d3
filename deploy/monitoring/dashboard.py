#!/usr/bin/env python3
"""leasehold's Grafana dashboard, from one source: the panels and their PromQL below.

    dashboard.py write    regenerates deploy/monitoring/leasehold-dashboard.json and the chart's
                          copy deploy/helm/leasehold/dashboards/leasehold.json (shipped as a
                          ConfigMap for the Grafana sidecar: monitoring.dashboard.enabled)
    dashboard.py check    exits 1 when a checked-in copy is not what `write` would write
    dashboard.py queries  prints every panel's queries, one a line

Written by hand (Grafana's dashboard JSON, schemaVersion 39), not with the Grafana Foundation
SDK: the SDK is a Go (or TypeScript/Python/...) module that would add a toolchain step and a
pinned dependency to render eight time-series panels, and the e2e needs the queries in Python
anyway (e2e/scenarios/prometheus.py, dashboard_queries_return_data, imports QUERIES and
evaluates every one against a real Prometheus after a failover). The JSON is plain enough to
review; Grafana migrates it forward on import.

Template variables: $datasource, $namespace (the pods' namespace, the target label), $lock (the
lock's name); panels use $__rate_interval and $__range, which Grafana fills in.
"""
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUTPUTS = ["deploy/monitoring/leasehold-dashboard.json",
           "deploy/helm/leasehold/dashboards/leasehold.json"]

SEL = 'namespace=~"$namespace",lock_name=~"$lock"'
LOCK = "lock_namespace, lock_name"

# (title, unit, [(legend, expr)], description)
PANELS = [
    ("Leader per lock", "none", [
        ("{{lock_namespace}}/{{lock_name}} {{pod}}",
         f"max by ({LOCK}, pod) (leasehold_is_leader{{{SEL}}})"),
    ], "1 while the pod leads the lock. Exactly one pod per lock should be at 1, except for a "
       "handover's gap (at most lease-duration)."),
    ("Term", "none", [
        ("{{lock_namespace}}/{{lock_name}}", f"max by ({LOCK}) (leasehold_term{{{SEL}}})"),
    ], "The lock's transition count as the replica that sees furthest reports it (the fencing "
       "token, while leasehold_term_reliable is 1)."),
    ("Changes of leader", "none", [
        ("{{lock_namespace}}/{{lock_name}}",
         f"max by ({LOCK}) (max_over_time(leasehold_term{{{SEL}}}[$__range])) - "
         f"max by ({LOCK}) (min_over_time(leasehold_term{{{SEL}}}[$__range]))"),
    ], "Rise of the term over the dashboard's range: one per change of leader "
       "(LeaseholdFlapping fires at 5 in 15 minutes)."),
    ("Renew latency (p99) and failures", "s", [
        ("p99 {{pod}}",
         f"histogram_quantile(0.99, sum by ({LOCK}, pod, le) "
         f"(rate(leasehold_renew_duration_seconds_bucket{{{SEL}}}[$__rate_interval])))"),
        ("failures/s {{pod}}",
         f"sum by ({LOCK}, pod) (rate(leasehold_renew_failures_total{{{SEL}}}"
         f"[$__rate_interval]))"),
    ], "Successful acquire/renew writes (p99, seconds) and failed attempts per second. A leader "
       "survives renewals up to (renew-deadline - retry-period) / 2."),
    ("Time left on the promise", "s", [
        ("{{pod}}",
         f"clamp_min(max by ({LOCK}, pod) "
         f"(leasehold_promise_end_timestamp_seconds{{{SEL}}}) - time(), 0)"),
    ], "Seconds until the latest \"you lead\" the pod handed out expires (0: none runs)."),
    ("API requests by code", "reqps", [
        ("{{verb}} {{code}}",
         f"sum by (verb, code) (rate(leasehold_api_requests_total{{{SEL}}}"
         f"[$__rate_interval])) > 0"),
    ], "Kubernetes API requests per second by verb and HTTP status (error: no answer)."),
    ("Watchers", "none", [
        ("{{pod}}", f"sum by (pod) (leasehold_watchers{{{SEL}}})"),
    ], "Open GET /leader/watch streams per pod."),
    ("Promises overtaken", "none", [
        ("{{pod}}",
         f"sum by ({LOCK}, pod) (increase(leasehold_promise_overtaken_total{{{SEL}}}"
         f"[$__range]))"),
    ], "Must stay 0: two pods were told \"you lead\" at once (LeaseholdPromiseOvertaken)."),
]

# Every panel's queries, for the e2e: [(panel title, legend, expr)].
QUERIES = [(title, legend, expr) for title, _, targets, _ in PANELS for legend, expr in targets]


def panel(i, title, unit, targets, description):
    return {
        "id": i + 1,
        "type": "timeseries",
        "title": title,
        "description": description,
        "datasource": {"type": "prometheus", "uid": "${datasource}"},
        "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i // 2)},
        "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
        "options": {"legend": {"displayMode": "list", "placement": "bottom"},
                    "tooltip": {"mode": "multi"}},
        "targets": [{"refId": chr(ord("A") + j), "expr": expr, "legendFormat": legend,
                     "datasource": {"type": "prometheus", "uid": "${datasource}"}}
                    for j, (legend, expr) in enumerate(targets)],
    }


def dashboard():
    var_ds = {"type": "datasource", "name": "datasource", "label": "Data source",
              "query": "prometheus", "current": {}, "hide": 0}
    var_ns = {"type": "query", "name": "namespace", "label": "Namespace",
              "datasource": {"type": "prometheus", "uid": "${datasource}"},
              "query": {"query": "label_values(leasehold_lock_info, namespace)",
                        "refId": "namespace"},
              "definition": "label_values(leasehold_lock_info, namespace)",
              "includeAll": True, "multi": True, "refresh": 2, "current": {}}
    var_lock = {"type": "query", "name": "lock", "label": "Lock",
                "datasource": {"type": "prometheus", "uid": "${datasource}"},
                "query": {"query": 'label_values(leasehold_lock_info{namespace=~"$namespace"}, '
                                   'lock_name)', "refId": "lock"},
                "definition": 'label_values(leasehold_lock_info{namespace=~"$namespace"}, '
                              'lock_name)',
                "includeAll": True, "multi": True, "refresh": 2, "current": {}}
    return {
        "title": "leasehold",
        "uid": "leasehold",
        "description": "leasehold's leader election per lock (deploy/monitoring/dashboard.py).",
        "tags": ["leasehold", "leader-election"],
        "schemaVersion": 39,
        "editable": True,
        "refresh": "30s",
        "time": {"from": "now-3h", "to": "now"},
        "templating": {"list": [var_ds, var_ns, var_lock]},
        "panels": [panel(i, *p) for i, p in enumerate(PANELS)],
    }


def text():
    return json.dumps(dashboard(), indent=2, sort_keys=False) + "\n"


def main(argv):
    if argv == ["write"]:
        for p in OUTPUTS:
            os.makedirs(os.path.dirname(os.path.join(ROOT, p)), exist_ok=True)
            with open(os.path.join(ROOT, p), "w") as f:
                f.write(text())
        return 0
    if argv == ["check"]:
        stale = [p for p in OUTPUTS if not os.path.exists(os.path.join(ROOT, p))
                 or open(os.path.join(ROOT, p)).read() != text()]
        for p in stale:
            print(f"{p} is not what deploy/monitoring/dashboard.py writes: run it with `write`",
                  file=sys.stderr)
        return 1 if stale else 0
    if argv == ["queries"]:
        for title, legend, expr in QUERIES:
            print(f"{title} [{legend}]: {expr}")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
