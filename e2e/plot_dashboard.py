#!/usr/bin/env python3
"""Plots the dashboard's queries as the e2e evaluated them (not a Grafana screenshot: there is no
Grafana here) into docs/dashboard-queries.png.

    LEASEHOLD_PROM_OUT=DIR python3 -m e2e.scenarios.prometheus dashboard_queries_return_data
    python3 e2e/plot_dashboard.py DIR/dashboard-queries.json [docs/dashboard-queries.png]

Needs matplotlib (Debian: python3-matplotlib; run with /usr/bin/python3). Not part of any test.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def label(legend, metric):
    out = legend
    for k, v in metric.items():
        out = out.replace("{{" + k + "}}", v)
    return out


def main(src, dst="docs/dashboard-queries.png"):
    data = json.load(open(src))
    t0 = data["start"]
    panels = []
    for q in data["queries"]:
        if not panels or panels[-1][0] != q["panel"]:
            panels.append((q["panel"], []))
        panels[-1][1].append(q)
    fig, axes = plt.subplots(4, 2, figsize=(12, 11), sharex=True)
    for ax, (title, qs) in zip(axes.flat, panels):
        for q in qs:
            for series in q["range"]:
                xs = [float(ts) - t0 for ts, _ in series["values"]]
                ys = [float(v) for _, v in series["values"]]
                ax.plot(xs, ys, drawstyle="steps-post", label=label(q["legend"], series["metric"]))
        ax.axvline(data["failover"] - t0, color="grey", linestyle=":", linewidth=1)
        ax.set_title(title, fontsize=10)
        ax.legend(fontsize=6, loc="best")
        ax.grid(alpha=0.3)
    for ax in axes[-1]:
        ax.set_xlabel("seconds since the e2e Prometheus started (dotted: SIGTERM of the leader)")
    fig.suptitle("Plot of the leasehold dashboard's queries, evaluated by the e2e's real "
                 "Prometheus 2.42 around a failover\n(not a Grafana screenshot; "
                 "e2e/scenarios/prometheus.py dashboard_queries_return_data)", fontsize=10)
    fig.tight_layout()
    fig.savefig(dst, dpi=80)
    print(dst)


if __name__ == "__main__":
    main(*sys.argv[1:])
