#!/usr/bin/env python3
"""The memory reading's time against how many other nppbench probes were on the GPU: for each
answered scenario of a run.json.gz, the mean of its readings after the warm-up
(`samples.reading_us[1:]`), grouped by `concurrent_probes`; prints per group the scenarios and the
median and mean of those means, ms. Usage: siblings.py RUN.json.gz"""
import gzip
import json
import statistics
import sys
from collections import defaultdict

by = defaultdict(list)
for m in json.load(gzip.open(sys.argv[1]))["memory"]:
    r = m.get("result")
    if r and r["samples"].get("reading_us", [])[1:]:
        by[r.get("concurrent_probes")].append(statistics.mean(r["samples"]["reading_us"][1:]) / 1e3)
for k in sorted(by, key=lambda k: (k is None, k)):
    v = by[k]
    print(f"{k} other probes: {len(v)} scenarios, reading median {statistics.median(v):.2f} ms, mean {statistics.mean(v):.2f} ms")
