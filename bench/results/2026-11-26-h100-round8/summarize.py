#!/usr/bin/python3
# Summary of an ab-vadd.sh output: per way, medians and quartiles of wall
# and CPU (task-clock) ms; each recorded way minus plain (and new minus
# base) within a round. usage: summarize.py FILE
import collections, statistics as st, sys
rows = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4:
        rows[p[0]][p[1]] = (int(p[2]) / 1000, float(p[3]))
ways = list(dict.fromkeys(w for r in rows.values() for w in r))
def q(v):
    v = sorted(v)
    return "median %.1f (quartiles %.1f / %.1f)" % (st.median(v), v[len(v) // 4], v[3 * len(v) // 4])
print("%s: %d rounds" % (sys.argv[1], len(rows)))
for w in ways:
    print("%-10s wall ms %s; cpu ms %s" % (w, q(r[w][0] for r in rows.values()), q(r[w][1] for r in rows.values())))
pairs = [(a, "plain") for a in ways if a != "plain" and "plain" in ways]
pairs += [("new" + a[4:], a) for a in ways if a.startswith("base") and "new" + a[4:] in ways]
for a, b in pairs:
    print("%s - %s within a round: wall ms %s; cpu ms %s" % (a, b, q(r[a][0] - r[b][0] for r in rows.values()),
                                                          q(r[a][1] - r[b][1] for r in rows.values())))
