#!/usr/bin/env python3
"""Paired summary of device-run.sh output: for each workload and thread
count, base and new medians and the median of new - base within a round
(with the quartiles of those differences). Usage: summarize.py FILE"""
import collections, statistics, sys
rows = collections.defaultdict(lambda: {'base': [], 'new': []})
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 9 and p[2] in ('base', 'new'):
        rows[(p[0], int(p[1]))][p[2]].append([float(x) for x in p[3:]])
cols = [(0, 'ns/call'), (1, 'M calls/s'), (4, 'merge ns/call')]
for (w, t), v in sorted(rows.items()):
    n = min(len(v['base']), len(v['new']))
    for c, name in cols:
        k = 1e6 if c == 1 else 1
        b = [r[c] / k for r in v['base'][:n]]
        a = [r[c] / k for r in v['new'][:n]]
        d = sorted(y - x for x, y in zip(b, a))
        q = lambda f: d[min(len(d) - 1, int(f * len(d)))]
        print(f"{w:15} {t}  {name:14} base {statistics.median(b):8.2f}  new {statistics.median(a):8.2f}"
              f"  new-base {statistics.median(d):+8.2f} ({q(0.25):+.2f} / {q(0.75):+.2f}), {n} rounds")
