#!/usr/bin/env python3
"""The metrics' share of the controller's CPU (#39), measured in the heartbeat benchmark.

Runs `cargo bench --bench controller -- ... --metrics-cost --metrics-cost-pairs N`: each pair
is two fresh ferrokraft controllers, metrics listener off and on, each heartbeated by its own
fleet of 10,000 brokers, measured side by side in one window. While each window runs, `perf
record` (software cpu-clock: this VM has no hardware counters) samples both controllers. The
on-controller's samples are then split by symbol:

  metrics  samples in code that runs only for the metrics: the request-metrics entry point
           (`network::stats`), the Yammer histograms, the exposition (scrapes); plus the
           samples the "on" controller takes beyond the "off" one (scaled by the heartbeats
           each answered, so the two compare) in the clock reads, the error counts, the raft
           thread's `update_metrics`, the connection task's body (where the request-time
           stamps inline) and the kernel's listing of /proc/self/fd
  total    every sample of the process

and the share is metrics / total. The metrics' functions are never inlined, so their own
samples are theirs.

usage: profile.py [--pairs N] [--secs S] [--scrape-secs S] [--out DIR] [--analyse-only]
(`--analyse-only` splits the samples a former run left in DIR again.)
"""

import argparse
import os
import re
import subprocess
import sys
import time

# Symbols whose samples are the metrics' own (a prefix or substring of the demangled name).
METRICS_ONLY = [
    "ferrokraft::network::stats::",
    "ferrokraft::common::yammer::",
    "ferrokraft::server::exposition::",
    "ferrokraft::server::metrics::",
    "ferrokraft::server::controller_metrics::",
    "prometheus_client::",
]
# Symbols both variants run, whose excess in the "on" controller is the metrics'.
EXCESS = [
    "__vdso_clock_gettime",
    "clock_gettime@@",
    "read_tsc",
    "<std::time::Instant>::now",
    "<std::time::Instant>::saturating_duration_since",
    "<std::time::Instant>::elapsed",
    "quanta::",
    # The connection task's body, where the request-time stamps and their arithmetic inline.
    "ferrokraft::network::listener::serve::",
    "ferrokraft::codec::error_counts::",
    # Its first half (the quorum status) runs in both variants.
    "update_metrics",
    # The kernel listing /proc/self/fd for process_open_fds at each scrape (10,000 sockets).
    "__d_lookup",
    "fget_task_next",
    "proc_readfd",
    "proc_fill_cache",
    "filldir64",
]

# Student's t 0.975 quantiles for 1..30 degrees of freedom.
T_975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042]

MARK = re.compile(r"metrics cost: measuring (\d+) s: off pid (\d+), on pid (\d+)")


def samples_by_symbol(data):
    out = subprocess.run(
        ["perf", "report", "-i", data, "--stdio", "-n", "--sort", "sym", "--no-children"],
        capture_output=True, text=True, check=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+\[[.k]\]\s+(.*\S)", line)
        if m:
            rows[m.group(2)] = rows.get(m.group(2), 0) + int(m.group(1))
    return rows


def matching(rows, patterns):
    return sum(n for sym, n in rows.items() if any(p in sym for p in patterns))


def heartbeats_of(report):
    """(off, on) heartbeats answered per pair, from the bench's 6b table."""
    pairs = []
    runs = re.findall(r"^\| \d+ \| (off|on) \| (\d+) \|", report, re.M)
    for i in range(0, len(runs) - 1, 2):
        d = dict((k, int(v)) for k, v in runs[i:i + 2])
        pairs.append((d["off"], d["on"]))
    return pairs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--secs", type=int, default=60)
    ap.add_argument("--scrape-secs", type=int, default=15)
    ap.add_argument("--out", default="/tmp/ferrokraft-metrics-cost")
    ap.add_argument("--analyse-only", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    report = os.path.join(a.out, "report.md")
    if a.analyse_only:
        pairs = len([f for f in os.listdir(a.out) if re.match(r"pair\d+-on\.data$", f)])
        analyse(a.out, report, pairs)
        return
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    bench = subprocess.Popen(
        ["cargo", "bench", "--bench", "controller", "--", "--sizes", "none",
         "--heartbeat-brokers", "10000", "--heartbeat-secs", str(a.secs), "--only-ferrokraft",
         "--metrics-cost", "--metrics-cost-pairs", str(a.pairs),
         "--scrape-secs", str(a.scrape_secs), "--out", report],
        cwd=repo, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    perfs, pair = [], 0
    for line in bench.stderr:
        sys.stderr.write(line)
        m = MARK.search(line)
        if not m:
            continue
        secs, off, on = (int(g) for g in m.groups())
        # Leave the window's first and last seconds out of the profile.
        for name, pid in (("off", off), ("on", on)):
            perfs.append(subprocess.Popen(
                ["perf", "record", "-q", "-e", "cpu-clock", "-F", "2999", "-p", str(pid),
                 "-o", os.path.join(a.out, f"pair{pair}-{name}.data"), "--", "sleep",
                 str(max(1, secs - 4))],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        pair += 1
    if bench.wait() != 0:
        sys.exit(f"the benchmark failed (see {a.out})")
    for p in perfs:
        p.wait()
    analyse(a.out, report, pair)


def analyse(out, report, pair):
    """Prints the split of each pair's samples left in `out`."""
    hb = heartbeats_of(open(report).read())
    print("| Pair | heartbeats off / on | samples off / on | metrics' own (on) | "
          "on beyond off (clock, connection body, …) | metrics' share of the on-controller's CPU |")
    print("|---|---|---|---|---|---|")
    shares = []
    for i in range(pair):
        off = samples_by_symbol(os.path.join(out, f"pair{i}-off.data"))
        on = samples_by_symbol(os.path.join(out, f"pair{i}-on.data"))
        hb_off, hb_on = hb[i] if i < len(hb) else (1, 1)
        own = matching(on, METRICS_ONLY)
        excess = max(0.0, matching(on, EXCESS) - matching(off, EXCESS) * hb_on / hb_off)
        total_on = sum(on.values())
        share = 100.0 * (own + excess) / total_on
        shares.append(share)
        print(f"| {i + 1} | {hb_off} / {hb_on} | {sum(off.values())} / {total_on} | {own} | "
              f"{excess:.0f} | {share:.2f} % |")
    n = len(shares)
    mean = sum(shares) / n
    line = f"\nmetrics' share over {n} pairs: mean {mean:.2f} %, max {max(shares):.2f} %"
    if n > 1:
        sd = (sum((x - mean) ** 2 for x in shares) / (n - 1)) ** 0.5
        half = T_975[min(n - 1, len(T_975)) - 1] * sd / n ** 0.5
        line += f", 95 % interval of the mean {mean - half:.2f} % to {mean + half:.2f} %"
    print(line)
    print(f"\n(the side-by-side CPU comparison is in {report}, section 6b)")


if __name__ == "__main__":
    main()
