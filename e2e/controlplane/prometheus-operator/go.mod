// The Prometheus Operator version whose CRDs (PodMonitor, PrometheusRule) the e2e installs on its
// apiserver to dry-run the shipped monitoring objects (e2e/scenarios/ship.py, monitoring_dry_run).
// Only the module's example/prometheus-operator-crd/*.yaml are used; nothing is built.
module leasehold.local/e2e/prometheus-operator

go 1.22

require github.com/prometheus-operator/prometheus-operator v0.80.1
