"""The pinned Prometheus server for the e2e tier (e2e/scenarios/prometheus.py) with the shipped
rules (deploy/monitoring/rules.py, the one source of the alerts) rendered with scaled windows:
SCALE of every shipped window and `for:`, the e2e's FAST timings, SCRAPE's interval."""

import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from deploy.monitoring import rules
from e2e.lib.common import free_port, log, parse_rfc3339, terminate, text_of, wait_until
from e2e.lib.timings import FAST

PROMETHEUS = os.environ.get("LEASEHOLD_PROMETHEUS", "/usr/bin/prometheus")
SCALE = 0.02
SCRAPE = 1.0  # s, scrape and evaluation interval
STEP = 0.2  # s, the range queries' step
# What the rules assume, in seconds after scaling; rules.py applies SCALE on top of --set values.
E2E_PARAMS = {"lease_duration": FAST.lease, "renew_deadline": FAST.renew, "retry_period": FAST.retry,
              "scrape_interval": SCRAPE, "evaluation_interval": SCRAPE}
OVERRIDES = dict({k: v / SCALE for k, v in E2E_PARAMS.items()}, scale=SCALE)


def rule_groups(lock_ns, lock_name):
    """The plain rules file's group, and the per-lock LeaseholdAbsent of the chart/Kustomize."""
    plain = rules.groups(OVERRIDES)
    per_lock = rules.groups(OVERRIDES, (lock_ns, lock_name))
    absent = [r for r in per_lock[0]["rules"] if r["alert"] == "LeaseholdAbsent"]
    return plain + [{"name": "leasehold-lock", "interval": plain[0]["interval"],
                     "rules": absent}]


class Prometheus:
    """The server on 127.0.0.1:<free port>, a temporary TSDB, file_sd targets."""

    def __init__(self, lock_ns, lock_name):
        self.dir = Path(tempfile.mkdtemp(prefix="leasehold-prom-"))
        self.port = free_port()
        self.targets_path = self.dir / "targets.json"
        (self.dir / "rules.yaml").write_text(rules.dump({"groups": rule_groups(lock_ns,
                                                                                lock_name)}))
        (self.dir / "prometheus.yml").write_text(rules.dump({
            "global": {"scrape_interval": f"{int(SCRAPE)}s", "scrape_timeout": f"{int(SCRAPE)}s",
                       "evaluation_interval": f"{int(SCRAPE)}s"},
            "rule_files": [str(self.dir / "rules.yaml")],
            "scrape_configs": [{
                "job_name": "leasehold",  # the plain file's up{job=~".*leasehold.*"}
                "metrics_path": "/metrics",
                "file_sd_configs": [{"files": [str(self.targets_path)],
                                     "refresh_interval": "1s"}],
            }],
        }))
        self.proc = None
        self.started_wall = None

    def set_targets(self, agents):
        """The agents' probe listeners, labelled as the PodMonitor labels a pod."""
        groups = [{"targets": [f"127.0.0.1:{a.probe_port}"],
                   "labels": {"namespace": a.ns.name, "pod": a.name}} for a in agents]
        tmp = self.targets_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(groups))
        os.replace(tmp, self.targets_path)  # file_sd must never read half a file

    def start(self, agents):
        self.set_targets(agents)
        subprocess.run(["promtool", "check", "config", str(self.dir / "prometheus.yml")],
                       check=True, capture_output=True)
        self.logf = open(self.dir / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            [PROMETHEUS, f"--config.file={self.dir / 'prometheus.yml'}",
             f"--storage.tsdb.path={self.dir / 'tsdb'}",
             f"--web.listen-address=127.0.0.1:{self.port}",
             "--storage.tsdb.retention.time=1h", "--log.level=warn"],
            stdout=self.logf, stderr=subprocess.STDOUT, start_new_session=True)
        self.started_wall = time.time()

        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"prometheus exited {self.proc.returncode}: {self.log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as r:
                    return r.status == 200
            except OSError:
                return False
        wait_until(ready, 30, 0.1, what="prometheus to be ready")
        log(f"prometheus {self.version()} on 127.0.0.1:{self.port}, TSDB {self.dir / 'tsdb'}")
        return self

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def log(self):
        return text_of(self.dir / "prometheus.log")[-3000:]

    def api(self, path, **params):
        q = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{q}", timeout=10) as r:
            body = json.loads(r.read())
        assert body["status"] == "success", body
        return body["data"]

    def version(self):
        return self.api("status/buildinfo")["version"]

    def query(self, q, t=None):
        return self.api("query", query=q, **({"time": f"{t:.3f}"} if t else {}))["result"]

    def query_range(self, q, start, end, step=STEP):
        return self.api("query_range", query=q, start=f"{start:.3f}", end=f"{end:.3f}",
                        step=str(step))["result"]

    def wait_scraped(self, agents, timeout=15):
        """Until every agent's target is up and was scraped after this call."""
        since = time.time()
        want = {f"127.0.0.1:{a.probe_port}" for a in agents}

        def scraped():
            got = {}
            for t in self.api("targets", state="active")["activeTargets"]:
                last = t.get("lastScrape", "")
                ok = t["health"] == "up" and last and not last.startswith("0001")
                if ok and parse_rfc3339(last) > since:
                    got[t["labels"]["instance"]] = True
            return want <= set(got)
        wait_until(scraped, timeout, 0.2, what=f"prometheus to scrape {sorted(want)}")

    def firing(self, start, end):
        """{(alertname, labels...): [first, last] firing time} over [start, end], wall clock,
        as the range query sees it (STEP); each span of an alert that resolved and fired again
        is its own entry, keyed with the span's index."""
        # The steps run from `start`; one that falls after the last evaluation before `end`
        # is needed to see that evaluation's sample: query a scrape past `end`, evaluated too.
        def evaluated():
            groups = self.api("rules")["groups"]
            return groups and all(parse_rfc3339(g["lastEvaluation"]) >= end + 2 * SCRAPE
                                  for g in groups)
        wait_until(evaluated, 15, 0.2, what="the rules to be evaluated past the window")
        out = {}
        for series in self.query_range('ALERTS{alertstate="firing"}', start, end + SCRAPE):
            m = series["metric"]
            key = (m["alertname"],) + tuple(sorted(
                (k, v) for k, v in m.items() if k not in ("alertname", "alertstate", "__name__")))
            spans, cur = [], None
            for ts, _ in series["values"]:
                ts = float(ts)
                if cur and ts - cur[1] <= STEP * 1.5:
                    cur[1] = ts
                else:
                    cur = [ts, ts]
                    spans.append(cur)
            for i, sp in enumerate(spans):
                out[key + ((("span", str(i)),) if i else ())] = sp
        return out

    def stop(self):
        terminate(self.proc, 15, group=True)
        if getattr(self, "logf", None):
            self.logf.close()
        shutil.rmtree(self.dir, ignore_errors=True)

