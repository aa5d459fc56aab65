#!/usr/bin/python3
"""Pairs of one A/B device run (adjacent lines of one workload and thread
count, "on" = the second way named in argv[2], e.g. demote=1): medians,
minima and maxima of on - off within each pair, for calls/s stored and the
merge thread's ns per call. Usage: summarize-ab.py FILE ON_TAG"""
import statistics as st, sys
from collections import defaultdict
rows = [l.split() for l in open(sys.argv[1]) if l.startswith('null-')]
pairs = defaultdict(list)
i = 0
while i + 1 < len(rows):
    a, b = rows[i], rows[i + 1]
    if a[:2] == b[:2] and a[2] != b[2]:
        on, off = (a, b) if a[2] == sys.argv[2] else (b, a)
        pairs[(a[0], a[1])].append((float(on[4]) - float(off[4]), float(on[7]) - float(off[7]),
                                    float(off[4]), float(on[4])))
        i += 2
    else:
        i += 1
for k, v in pairs.items():
    d = [x[0] / 1e6 for x in v]; m = [x[1] for x in v]
    print("%s %s threads, %d pairs: calls/s on-off %+.2f M (%+.2f..%+.2f), medians off %.2f M on %.2f M;"
          " merge ns/call on-off %+.1f (%+.1f..%+.1f)" % (k[0], k[1], len(v), st.median(d), min(d), max(d),
          st.median([x[2] for x in v]) / 1e6, st.median([x[3] for x in v]) / 1e6, st.median(m), min(m), max(m)))
