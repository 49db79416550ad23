#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Collect the raw figures of scripts/bench-plot.sh into one JSON file and
draw bandwidth and latency against message size, iWARP vs RoCEv2 vs kernel
TCP.

usage: bench_plot.py RAW-DIR OUT-DIR
  RAW-DIR  machine.txt, rnic-TEST-TRANSPORT-SIZE.json (rnic-perf --json),
           iperf3-SIZE.json (iperf3 --json), sockperf-SIZE-M.txt
  OUT-DIR  gets bench.json, bw.png and lat.png
"""
import glob
import json
import os
import re
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STACKS = [("iwarp", "rnic iWARP", "tab:blue", "o"),
          ("roce", "rnic RoCEv2", "tab:orange", "s"),
          ("tcp", "kernel TCP", "tab:gray", "^")]


def machine(raw):
    m = {}
    with open(os.path.join(raw, "machine.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            m[k] = v
    m["nproc"] = int(m.get("nproc", "0") or 0)
    return m


def rnic_runs(raw):
    """rnic-perf's objects, keyed (test, transport, size)."""
    out = {}
    for p in glob.glob(os.path.join(raw, "rnic-*.json")):
        with open(p) as f:
            o = json.loads(f.read())
        out[(o["test"], o["transport"], o["size"])] = o
    return out


def iperf3_runs(raw):
    """size -> receiver Gbit/s."""
    out = {}
    for p in glob.glob(os.path.join(raw, "iperf3-*.json")):
        size = int(re.search(r"iperf3-(\d+)\.json$", p).group(1))
        try:
            with open(p) as f:
                o = json.load(f)
            out[size] = o["end"]["sum_received"]["bits_per_second"] / 1e9
        except (ValueError, KeyError):
            pass   # a failed run: its file holds the error
    return out


def sockperf_runs(raw):
    """size -> {m, avg, p50, p99} in microseconds (one-way)."""
    out = {}
    num = r"([0-9.]+)"
    for p in glob.glob(os.path.join(raw, "sockperf-*.txt")):
        size, m = map(int, re.search(r"sockperf-(\d+)-(\d+)\.txt$", p).groups())
        with open(p, errors="replace") as f:
            t = f.read()
        avg = re.search(r"avg-latency=" + num, t)
        p50 = re.search(r"percentile 50\.000 =\s*" + num, t)
        p99 = re.search(r"percentile 99\.000 =\s*" + num, t)
        if avg and p50 and p99:
            out[size] = {"m": m, "avg": float(avg.group(1)), "p50": float(p50.group(1)),
                         "p99": float(p99.group(1))}
    return out


def failures(raw):
    """rnic-perf runs without a JSON object: their stderr's last line."""
    out = []
    for p in sorted(glob.glob(os.path.join(raw, "rnic-*.err"))):
        if os.path.exists(p[:-4] + ".json"):
            continue
        test, tr, size = re.search(r"rnic-(\w+)-(\w+)-(\d+)\.err$", p).groups()
        with open(p, errors="replace") as f:
            lines = [ln for ln in f.read().splitlines() if ln.startswith("rnic-perf:")]
        out.append({"test": test, "stack": tr, "size": int(size),
                    "error": lines[0] if lines else "no output"})
    return out


def collect(raw):
    rn, ip, sp = rnic_runs(raw), iperf3_runs(raw), sockperf_runs(raw)
    bw, lat = [], []
    for (test, tr, size), o in sorted(rn.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
        if test == "write_bw":
            bw.append({"stack": tr, "size": size, "gbps": o["gbps"], "mops": o["mops"],
                       "iters": o["iters"], "seconds": o["seconds"]})
        elif test == "write_lat" and o.get("lat_us"):
            lat.append({"stack": tr, "size": size, **o["lat_us"], "iters": o["iters"]})
    for size, g in sorted(ip.items()):
        bw.append({"stack": "tcp", "size": size, "gbps": g, "tool": "iperf3 -l SIZE -t 2"})
    for size, s in sorted(sp.items()):
        lat.append({"stack": "tcp", "size": size, "sockperf_size": s["m"], "avg": s["avg"],
                    "p50": s["p50"], "p99": s["p99"], "tool": "sockperf pp --tcp -t 2"})
    return bw, lat


def label_size(n):
    return f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K" if n >= 1 << 10 else str(n)


def caption(m):
    miss = f"; {m['failed']} run(s) failed: missing points" if m.get("failed") else ""
    return (f"{m['date'].replace('T', ' ')}, {m['nproc']} CPUs ({m['cpu']}), "
            f"Linux {m['kernel']}, load average {m['load_start']} -> {m['load_end']}{miss}")


def plot(points, key, ylabel, title, m, path, logy):
    fig, ax = plt.subplots(figsize=(7.5, 4.6), dpi=80)
    sizes = sorted({p["size"] for p in points})
    for stack, name, colour, marker in STACKS:
        pts = sorted((p for p in points if p["stack"] == stack), key=lambda p: p["size"])
        if not pts:
            continue
        ax.plot([p["size"] for p in pts], [p[key] for p in pts], marker=marker,
                color=colour, label=name)
        if key == "p50":   # the p99 as a dashed line of the same colour
            ax.plot([p["size"] for p in pts], [p["p99"] for p in pts], linestyle="--",
                    color=colour, alpha=0.5, label=name + " p99")
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([label_size(s) for s in sizes])
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=11)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8)
    fig.text(0.01, 0.01, caption(m), fontsize=7)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path)
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    raw, out = sys.argv[1], sys.argv[2]
    m = machine(raw)
    bw, lat = collect(raw)
    if not bw or not lat:
        sys.exit("bench_plot.py: no figures in " + raw)
    failed = failures(raw)
    with open(os.path.join(out, "bench.json"), "w") as f:
        json.dump({"machine": m, "write_bw": bw, "write_lat": lat, "failed": failed}, f,
                  indent=1)
    m["failed"] = len(failed)
    plot(bw, "gbps", "Gbit/s",
         "Bandwidth: rnic-perf write_bw --loopback vs iperf3 over loopback",
         m, os.path.join(out, "bw.png"), logy=True)
    plot(lat, "p50", "one-way latency, µs (p50; dashed: p99)",
         "Latency: rnic-perf write_lat --loopback vs sockperf over loopback",
         m, os.path.join(out, "lat.png"), logy=True)


if __name__ == "__main__":
    main()
