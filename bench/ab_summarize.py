#!/usr/bin/env python3
"""ab_summarize.py OUT: bench/ab.sh's runs side by side.

For each workload, thread count and way, the median over the runs of each
build of: paced added ns, flooding added ns, calls/s until stored and
bytes a call (bench_record's own medians over its rounds: the middle of
its "min / median / max"), the base build (OUT/LABEL-K.txt, LABEL as
ab.sh was given it) then now (OUT/now-K.txt).
"""
import glob, os, re, statistics, sys

COLS = ["paced added ns", "flooding added ns", "calls/s until stored", "bytes/call"]


def parse(path):
    rows, head, workload = {}, None, None
    for line in open(path, errors="replace"):
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "workload":
            head = cells
            continue
        if not head:
            continue
        r = dict(zip(head, cells))
        workload = r["workload"] or workload
        rows[(workload, int(r["threads"]), r["way"])] = r
    return rows


def number(text):
    parts = (text or "").split(" / ")  # min / median / max over bench_record's rounds
    text = parts[len(parts) // 2]
    m = re.match(r"^([+-]?[0-9.]+)\s*(M|µs|us)?$", text or "")
    if not m:
        return None
    v = float(m.group(1))
    return v * 1000 if m.group(2) in ("µs", "us") else v


def show(v, col):
    if v is None:
        return "-"
    if col == "calls/s until stored":
        return "%.2f M" % v
    if col == "bytes/call":
        return "%.1f" % v
    return "%+.0f" % v


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ab_summarize.py OUT")
    out = sys.argv[1]
    labels = {m.group(1) for p in glob.glob(os.path.join(out, "*-*.txt"))
              for m in [re.match(r"^(.+)-[0-9]+\.txt$", os.path.basename(p))] if m}
    others = sorted(labels - {"now"})
    if "now" not in labels or len(others) != 1:
        sys.exit("ab_summarize.py: %s holds no LABEL-K.txt and now-K.txt runs of one "
                 "ab.sh (labels: %s)" % (out, ", ".join(sorted(labels)) or "none"))
    base = others[0]
    runs = {b: [parse(p) for p in sorted(glob.glob(os.path.join(out, b + "-*.txt")))]
            for b in (base, "now")}
    keys = sorted({k for b in runs for r in runs[b] for k in r if k[2] != "direct"},
                  key=lambda k: (k[0], k[2], k[1]))
    print("runs: %s %d, now %d (medians over runs)" % (base, len(runs[base]), len(runs["now"])))
    print()
    print("| workload | way | threads | " + " | ".join("%s %s | now" % (c, base) for c in COLS) +
          " |")
    print("|---|---|---|" + "---|---|" * len(COLS))
    for k in keys:
        cells = []
        for c in COLS:
            for b in (base, "now"):
                vals = [number(r[k].get(c)) for r in runs[b] if k in r]
                vals = [v for v in vals if v is not None]
                cells.append(show(statistics.median(vals) if vals else None, c))
        print("| %s | %s | %d | %s |" % (k[0], k[2], k[1], " | ".join(cells)))


main()
