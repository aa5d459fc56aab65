# summarize-rounds.py FILE [A B]: per way, the median wall time and its
# difference from the first way within each round (median and quartiles),
# from lines "round way wall-us"; with A B, B - A within each round.
import sys, statistics as st
d={}; ways=[]
for l in open(sys.argv[1]):
    p=l.split()
    if len(p)!=3: continue
    r,w,t=p; d.setdefault(int(r),{})[w]=int(t)
    if w not in ways: ways.append(w)
base=ways[0]
for w in ways:
    v=[x[w] for x in d.values() if w in x and base in x]
    diffs=sorted(x[w]-x[base] for x in d.values() if w in x and base in x)
    n=len(diffs)
    print(f"{w:8s} med {st.median(v)/1000:8.2f} ms  minus {base}: med {st.median(diffs)/1000:+7.2f} ms q1 {diffs[n//4]/1000:+7.2f} q3 {diffs[3*n//4]/1000:+7.2f}  ratio {st.median(sorted(x[w]/x[base] for x in d.values() if w in x and base in x)):.3f}")
if len(sys.argv)>2:
    a,b=sys.argv[2],sys.argv[3]
    diffs=sorted(x[b]-x[a] for x in d.values() if a in x and b in x); n=len(diffs)
    print(f"{b} - {a}: med {st.median(diffs)/1000:+.2f} ms q1 {diffs[n//4]/1000:+.2f} q3 {diffs[3*n//4]/1000:+.2f} (n={n})")
