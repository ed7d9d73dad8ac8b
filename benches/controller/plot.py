#!/usr/bin/env python3
"""Plots of a controller benchmark run (benches/controller, `--out REPORT.md`) for docs/.

    python3 benches/controller/plot.py REPORT.md OUT.png

One panel per size (10k, 100k, 1M partitions): for each measurement the ratio
ferrokraft / Kafka on a log scale (below 1 = ferrokraft faster or smaller; CreateTopics is
a rate, so it is drawn as Kafka / ferrokraft to read the same way), with the issue's goals
(1/10) as a line. Reads the report's tables, so any report the benchmark wrote can be drawn.
Needs matplotlib (pip install matplotlib); not part of the test run.
"""
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# (row label prefix in the report, label on the plot, whether higher is better)
ROWS = [
    ("1. CreateTopics, committed", "1 CreateTopics\n(time per partition)", True),
    ("2. broker dies: expiry to last leader move", "2 broker dies", False),
    ("3. controlled shutdown: request to shouldShutDown", "3 controlled\nshutdown", False),
    ("SIGKILL to a CreateTopics answered", "4 failover", False),
    ("5. cold start on a snapshot", "5 cold start\n(snapshot)", False),
    ("7. propagation: CreateTopics answer to 3 observers saw it", "7 propagation", False),
    ("RSS at the end", "RSS", False),
]


def tables(path):
    """{section heading: {row label: (ferrokraft, kafka)}}"""
    out, section = {}, None
    for line in open(path, encoding="utf-8"):
        if line.startswith("## "):
            section = line[3:].strip()
            out[section] = {}
        elif section and line.startswith("| ") and not line.startswith("| Measurement"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) >= 3:
                try:
                    fk, kafka = float(cells[1]), float(cells[2])
                except ValueError:
                    continue
                # The ratio column is computed from unrounded figures; "–" where it is not
                # defined (a figure of 0 or below).
                try:
                    ratio = float(cells[3]) if len(cells) > 3 else None
                except ValueError:
                    ratio = None
                out[section][cells[0]] = (fk, kafka, ratio)
    return out


def size_of(section):
    m = re.match(r"(?:4\. Active-controller failover: 3 voters, )?(\d+) partitions", section)
    return int(m.group(1)) if m else None


def main(report, out_png):
    t = tables(report)
    sizes = sorted({size_of(s) for s in t if size_of(s)})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5 * len(sizes), 4.5), sharey=True)
    if len(sizes) == 1:
        axes = [axes]
    for ax, size in zip(axes, sizes):
        labels, ratios = [], []
        for prefix, label, higher_better in ROWS:
            for section, rows in t.items():
                if size_of(section) != size:
                    continue
                for name, (fk, kafka, ratio) in rows.items():
                    if name.startswith(prefix) and kafka > 0:
                        if ratio is None or ratio <= 0:
                            # The report's resolution is 0.1: a 0.0 (or a negative time,
                            # the record there before the answer) is drawn at half of it.
                            fk = fk if fk > 0 else 0.05
                            ratio = fk / kafka
                        labels.append(label)
                        ratios.append(1 / ratio if higher_better else ratio)
                        break
                else:
                    continue
                break
        colors = ["#c0392b" if r <= 0.1 else "#e67e22" if r < 1 else "#2c3e50" for r in ratios]
        ax.bar(range(len(ratios)), ratios, color=colors)
        ax.set_yscale("log")
        ax.axhline(1, color="black", linewidth=0.8)
        ax.axhline(0.1, color="#c0392b", linewidth=0.8, linestyle="--", label="goal: 1/10")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels, rotation=60, ha="right", fontsize=8)
        ax.set_title(f"{size:,} partitions")
        for i, r in enumerate(ratios):
            ax.text(i, r, f"{r:.2f}", ha="center", va="bottom", fontsize=7)
    axes[0].set_ylabel("ferrokraft / Kafka 4.1.2 (log; lower is better)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_png, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
