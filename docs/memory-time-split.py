#!/usr/bin/env python3
"""Where a memory phase's probe time goes, read from run files (run.json, gzipped or not): the
probe-seconds (the phase's wall time times its probes), what the scenarios measured in batches
and those measured in a process of their own took (each record's `wall_ms`), and, per threading
model, the mean time between two calls' samples against the call's own latency (`samples`): the
rest is the work around each call, the memory reading among it. A one-off reading of the run
files, not a figure of the tool's pages.
Usage: docs/memory-time-split.py RUN.json[.gz]..."""
import collections
import gzip
import json
import statistics
import sys


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


for path in sys.argv[1:]:
    run = load(path)
    phase = next(p["wall_s"] for p in run["phases"] if p["phase"] == "memory")
    jobs = run["jobs"]["jobs"]
    memory = run["memory"]
    print(f"{path}: {len(memory)} scenarios, memory phase {phase:.1f} s x {jobs} probes = "
          f"{phase * jobs:.0f} probe-s, {len(memory) / phase:.1f} a second, readings "
          f"{run['jobs'].get('memory_readings', 'own')}")
    timed = [r for r in memory if r.get("batch") and r.get("wall_ms")]
    lone = [r for r in timed if r["batch"]["size"] == 1]
    batched = [r for r in timed if r["batch"]["size"] > 1]
    processes = {r["batch"]["process"] for r in memory if r.get("batch")}
    print(f"  processes {len(processes)}; in batches {len(batched)} scenarios, "
          f"{sum(r['wall_ms'] for r in batched) / 1e3:.1f} s; alone {len(lone)}, "
          f"{sum(r['wall_ms'] for r in lone) / 1e3:.1f} s (median {statistics.median(r['wall_ms'] for r in lone):.0f} ms)")
    gaps = collections.defaultdict(lambda: ([], []))
    for r in memory:
        s = (r.get("result") or {}).get("samples")
        if not s:
            continue
        g, lat = gaps[r["scenario"]["threading"]]
        e = s["elapsed_ms"]
        for i in range(1, len(e)):
            g.append(e[i] - e[i - 1])
            lat.append(s["latency_us"][i] / 1e3)
    print("  threading                     samples  between (ms)  call (ms)  rest (ms)")
    for t, (g, lat) in sorted(gaps.items(), key=lambda kv: -len(kv[1][0])):
        print(f"  {t:<28} {len(g):>8} {statistics.mean(g):>13.2f} {statistics.mean(lat):>10.2f} "
              f"{statistics.mean(g) - statistics.mean(lat):>10.2f}")
