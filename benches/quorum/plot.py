#!/usr/bin/env python3
"""Plots of a quorum benchmark run (benches/quorum, `--json FILE`): PNGs for docs/benchmarks.md.

    python3 benches/quorum/plot.py RESULTS.json OUT_DIR

failover.png  distribution (empirical CDF) of failover and handover times per timer set
latency.png   commit latency p50/p75/p99/p99.9 per rate and linger, log scale
transfer.png  catch-up and snapshot-transfer MB/s per trial
sweep.png     rate sweep: committed against offered records/s, and commit p99, per step
Needs matplotlib (pip install matplotlib); not part of the test run.
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"ferrokraft": "#c0392b", "Kafka controller": "#2c3e50", "Kafka TestRaftServer": "#2c3e50"}


def cdf(ax, values, **kw):
    v = sorted(values)
    if not v:
        return
    ys = [(i + 1) / len(v) for i in range(len(v))]
    ax.step(v, ys, where="post", **kw)


def failover(data, out):
    series = data["failover"]
    panels = sorted({(s["timers"], s["stop"]) for s in series})
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    for ax, (timers, stop) in zip(axes[0], panels):
        for s in series:
            if (s["timers"], s["stop"]) == (timers, stop):
                cdf(ax, s["ms"], label=f'{s["kind"]} (n={len(s["ms"])})', color=COLORS.get(s["kind"]))
        ax.set_title(f"{stop}, {timers} timers", fontsize=10)
        ax.set_xlabel("new leader with a moving high watermark (ms)")
        ax.set_ylabel("fraction of trials")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "failover.png"), dpi=110)


def latency(data, out):
    runs = data["latency"]
    if not runs:
        return
    settings = sorted({(r["rate"], r["linger_ms"]) for r in runs})
    kinds = sorted({r["kind"] for r in runs}, key=lambda k: k != "ferrokraft")
    fig, axes = plt.subplots(1, len(settings), figsize=(3.2 * len(settings), 3.6), squeeze=False, sharey=True)
    for ax, (rate, linger) in zip(axes[0], settings):
        for i, kind in enumerate(kinds):
            run = next((r for r in runs if (r["rate"], r["linger_ms"], r["kind"]) == (rate, linger, kind)), None)
            if run is None:
                continue
            ps = [("p50", run["p50_ms"]), ("p75", run["p75_ms"]), ("p99", run["p99_ms"]), ("p99.9", run["p999_ms"])]
            xs = [j + 0.38 * i for j in range(len(ps))]
            ax.bar(xs, [v if v is not None else 0 for _, v in ps], width=0.36, label=kind, color=COLORS.get(kind))
        ax.set_xticks([j + 0.19 for j in range(4)], ["p50", "p75", "p99", "p99.9"])
        ax.set_yscale("log")
        rate_label = "max" if rate >= 1_000_000 else f"{rate}/s"
        ax.set_title(f"{rate_label}, linger {linger} ms", fontsize=10)
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel("commit latency (ms)")
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "latency.png"), dpi=110)


def transfer(data, out):
    fig, axes = plt.subplots(1, 2, figsize=(8.4, 3.4), squeeze=False)
    for ax, key, title in zip(axes[0], ["catchup", "snapshot"], ["log catch-up", "snapshot transfer"]):
        for i, s in enumerate(data.get(key, [])):
            xs = [i + 0.1 * j for j in range(len(s["mb_per_sec"]))]
            ax.scatter(xs, s["mb_per_sec"], label=s["kind"], color=COLORS.get(s["kind"]))
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("MB/s per trial")
        ax.set_ylim(bottom=0)
        ax.set_xticks([])
        ax.grid(alpha=0.3, axis="y")
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "transfer.png"), dpi=110)


def sweep(data, out):
    sweeps = data.get("sweep", [])
    if not sweeps:
        return
    fig, axes = plt.subplots(1, 2, figsize=(8.8, 3.6), squeeze=False)
    rate_ax, p99_ax = axes[0]
    top = max(x["rate"] for s in sweeps for x in s["steps"])
    rate_ax.plot([1, top], [1, top], color="#999999", linestyle=":", label="committed = offered")
    for s in sweeps:
        steps = [x for x in s["steps"] if x["committed_per_sec"] is not None]
        color = COLORS.get(s["kind"])
        label = f'{s["kind"]} (sustained {s["highest_sustained_rate"] or 0:,}/s)'
        rate_ax.plot([x["rate"] for x in steps], [x["committed_per_sec"] for x in steps],
                     marker="o", color=color, label=label)
        lat = [x for x in s["steps"] if x["p99_ms"] is not None]
        p99_ax.plot([x["rate"] for x in lat], [x["p99_ms"] for x in lat], marker="o", color=color,
                    label=s["kind"])
        for ax, xs in ((rate_ax, steps), (p99_ax, lat)):
            bad = [x for x in xs if not x["sustained"]]
            ys = [x["committed_per_sec"] if ax is rate_ax else x["p99_ms"] for x in bad]
            ax.scatter([x["rate"] for x in bad], ys, marker="x", s=60, color=color)
    p99_ax.axhline(1000, color="#999999", linestyle=":", label="p99 bound (1 s)")
    for ax in (rate_ax, p99_ax):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("offered records/s (256 B)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    rate_ax.set_ylabel("committed records/s")
    p99_ax.set_ylabel("commit p99 (ms)")
    linger = sweeps[0]["linger_ms"]
    fig.suptitle(f"rate sweep, linger {linger} ms (x: step not sustained)", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "sweep.png"), dpi=110)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        data = json.load(f)
    os.makedirs(sys.argv[2], exist_ok=True)
    failover(data, sys.argv[2])
    latency(data, sys.argv[2])
    transfer(data, sys.argv[2])
    sweep(data, sys.argv[2])


if __name__ == "__main__":
    main()
