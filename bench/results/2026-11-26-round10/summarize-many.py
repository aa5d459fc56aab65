#!/usr/bin/env python3
"""Summarizes real-many.sh's output: per program, the median plain run,
the median of the per-round differences (recorded - plain) with a 95 %
bootstrap confidence interval (5000 resamples of the rounds), and the
ratio those make."""
import random, statistics, sys
# argv: FILE [WAY ...]: each way against plain (default: new)
from collections import defaultdict
runs = defaultdict(dict)
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 4 and f[3].isdigit():
        runs[f[0]].setdefault(int(f[1]), {})[f[2]] = int(f[3]) / 1000.0
random.seed(1)
ways = sys.argv[2:] or ["new"]
for (prog, rounds), way in ((pr, w) for pr in runs.items() for w in ways):
    pairs = [(v["plain"], v[way]) for v in rounds.values() if "plain" in v and way in v]
    if not pairs:
        continue
    plain = statistics.median(p for p, _ in pairs)
    diffs = [n - p for p, n in pairs]
    med = statistics.median(diffs)
    boot = sorted(statistics.median(random.choices(diffs, k=len(diffs))) for _ in range(5000))
    lo, hi = boot[125], boot[4874]
    print("%-16s %-6s rounds %3d  plain %8.2f ms  recorded - plain: median %+7.2f ms "
          "(95%% CI %+7.2f .. %+7.2f)  ratio %.4f (CI %.4f .. %.4f)"
          % (prog, way, len(pairs), plain, med, lo, hi, 1 + med / plain, 1 + lo / plain, 1 + hi / plain))
