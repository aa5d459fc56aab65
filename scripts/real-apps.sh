#!/bin/sh
# real-apps.sh: the long runs of the real OpenCL applications, for the
# README's figures (the CI tests, tests/apps/app_test.sh, keep them short).
#
#   scripts/real-apps.sh [--rounds N]
#                        [--apps "clpeak pyopencl clblast vadd pipeline ffmpeg opencv"]
#                        [--icd FILE] [--ways "direct rec-none ..."] [--keep] [BUILD]
#
# --ways runs only the ways named (direct among them; default all), so that
# more rounds of the ratio that matters fit in the same time: the median
# ratio over 10 rounds or more comes with its 95 % interval.
# BUILD is the build directory (default build/). --icd names the vendor file
# of the OpenCL implementation to run on (default PoCL's,
# /etc/OpenCL/vendors/pocl.icd; NVIDIA's on a GPU host: scripts/gpu-check.sh
# finds it). Each application runs on that implementation in several ways, side by side in one run, round by round (the order
# of the ways rotates from round to round, so that the machine's drift and
# warm caches hit every way alike):
#   direct     OCL_ICD_VENDORS=FILE APP
#   pitrace    routed through the front end, not recorded:
#              OCL_ICD_VENDORS=BUILD/etc/OpenCL/vendors/pitrace.icd
#              PITRACE_OCL_ICD_VENDORS=FILE SYCL_DEVICE_FILTER=opencl APP
#   rec-none   routed and recorded, SYCL_PI_RECORD_DATA=none
#   rec-all    routed and recorded, SYCL_PI_RECORD_DATA=all (not clpeak:
#              its buffers are hundreds of MB per test)
#   traced     routed, not recorded, SYCL_PI_TRACE=2 into a file
#              (SYCL_PI_TRACE_FILE): every PI call formatted and written
# vadd and pipeline (the examples, pitrace applications themselves, built in
# BUILD/bin) have no "pitrace" way: "direct" is their plain run
# (SYCL_DEVICE_FILTER=opencl, on FILE's implementation), the other ways add
# the recording or the trace to it.
# The applications:
#   clpeak     clpeak -p 0 -d 0, all its tests (minutes on PoCL; $CLPEAK_TESTS,
#              e.g. "--kernel-latency", runs only those)
#   pyopencl   tests/apps/pyopencl_check.py $PYOPENCL_N (default 4000000)
#   clblast    BUILD/bin/clblast_client $CLBLAST_MNK (default 512 512 512)
#   vadd       BUILD/bin/vadd $VADD_N (default 4194304)
#   pipeline   BUILD/bin/pipeline $PIPELINE_N (default 1048576)
#   ffmpeg     ffmpeg: $FFMPEG_FRAMES (default 30) frames of a 640x480 test
#              pattern through avgblur_opencl, unsharp_opencl and
#              sobel_opencl, as raw video (each run's bytes must equal the
#              first run's)
#   opencv     tests/apps/opencv_check.py $OPENCV_WH (default 1920 1080):
#              OpenCV's transparent API on the CPU OpenCL device, checked
#              against OpenCV's CPU code (no program cache, as pyopencl)
# Every run's result is checked (pyopencl, CLBlast, vadd and pipeline verify
# theirs on the host; clpeak must print the same figures as directly). It prints, as
# Markdown: wall time through pitrace as a ratio to direct (min / median /
# max over the rounds; the ratio is taken within a round), and each of
# clpeak's figures through pitrace as a ratio to the direct figure of the
# same round, with the spread of the direct figure itself over the rounds
# (a figure whose direct runs differ by more than the ratio's distance
# from 1 is noise-dominated on this machine). Exit 0 when every run
# succeeded and verified, 1 otherwise, 2 when something needed is missing.
set -u
me=real-apps.sh
src=$(cd "$(dirname "$0")/.." && pwd)
build=build rounds=3 keep=0 apps="clpeak pyopencl clblast" POCL=/etc/OpenCL/vendors/pocl.icd
only_ways="direct pitrace rec-none rec-all traced"
while [ $# -gt 0 ]; do
  case $1 in
  --rounds) [ $# -ge 2 ] || { echo "$me: --rounds needs a number" >&2; exit 2; }
            rounds=$2; shift 2 ;;
  --apps)   [ $# -ge 2 ] || { echo "$me: --apps needs a list" >&2; exit 2; }
            apps=$2; shift 2 ;;
  --icd)    [ $# -ge 2 ] || { echo "$me: --icd needs a vendor file" >&2; exit 2; }
            POCL=$2; shift 2 ;;
  --ways)   [ $# -ge 2 ] || { echo "$me: --ways needs a list" >&2; exit 2; }
            only_ways=$2; shift 2 ;;
  --keep)   keep=1; shift ;;
  -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
  -*)       echo "$me: unknown option '$1' (see --help)" >&2; exit 2 ;;
  *)        build=$1; shift ;;
  esac
done
case $rounds in ''|*[!0-9]*|0) echo "$me: --rounds must be a positive number" >&2; exit 2 ;; esac
for w in $only_ways; do
  case $w in direct|pitrace|rec-none|rec-all|traced) ;;
  *) echo "$me: unknown way '$w' (direct, pitrace, rec-none, rec-all, traced)" >&2; exit 2 ;;
  esac
done
case " $only_ways " in *" direct "*) ;;
*) echo "$me: --ways must include direct (the ratios are to it)" >&2; exit 2 ;;
esac
for a in $apps; do
  case $a in clpeak|pyopencl|clblast|vadd|pipeline|ffmpeg|opencv) ;;
  *) echo "$me: unknown application '$a' (clpeak, pyopencl, clblast, vadd, pipeline, ffmpeg, opencv)" >&2
     exit 2 ;;
  esac
done
[ -d "$build" ] ||
  { echo "$me: no build directory '$build' (give the build directory; default build/)" >&2; exit 2; }
build=$(cd "$build" && pwd)

ICD=$build/etc/OpenCL/vendors/pitrace.icd
PY=${PYTHON:-/usr/bin/python3}
PYOPENCL_N=${PYOPENCL_N:-4000000}
CLBLAST_MNK=${CLBLAST_MNK:-512 512 512}
VADD_N=${VADD_N:-4194304}
PIPELINE_N=${PIPELINE_N:-1048576}
export FFMPEG_FRAMES=${FFMPEG_FRAMES:-30} OPENCV_WH=${OPENCV_WH:-1920 1080}

need() { # need WHAT HOW: refuse, in one line, when WHAT is missing
  echo "$me: missing $1 ($2)" >&2
  exit 2
}
[ -r "$POCL" ] || need "$POCL" "install pocl-opencl-icd, or name a vendor file with --icd"
[ -x $PY ] || need "$PY" "install python3"
for lib in libpitrace_opencl.so libpi_opencl.so libpi_shim.so libpirt.so; do
  [ -f "$build/lib/$lib" ] ||
    need "$build/lib/$lib" "cmake --build $build --target pitrace_opencl pi_opencl pi_shim"
done
for a in $apps; do
  case $a in
  clpeak)   command -v clpeak >/dev/null 2>&1 || need clpeak "apt-get install clpeak" ;;
  pyopencl) $PY -c 'import pyopencl, numpy' 2>/dev/null ||
              need "pyopencl for $PY" "apt-get install python3-pyopencl python3-numpy" ;;
  clblast)  [ -x "$build/bin/clblast_client" ] ||
              need "$build/bin/clblast_client" "apt-get install libclblast-dev; cmake --build $build --target clblast_client" ;;
  vadd|pipeline) [ -x "$build/bin/$a" ] || need "$build/bin/$a" "cmake --build $build --target $a" ;;
  ffmpeg)   command -v ffmpeg >/dev/null 2>&1 || need ffmpeg "apt-get install ffmpeg" ;;
  opencv)   $PY -c 'import cv2, numpy' 2>/dev/null ||
              need "OpenCV for $PY" "apt-get install python3-opencv" ;;
  esac
done

work=$(mktemp -d "${TMPDIR:-/tmp}/real-apps.XXXXXX")
[ $keep = 1 ] || trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
# The front end's vendor file; a packed build (scripts/gpu-pack.sh) has none.
if [ ! -r "$ICD" ]; then
  ICD=$work/pitrace.icd
  echo "$build/lib/libpitrace_opencl.so" >"$ICD"
fi

# No compiler cache: every run of the script builds its programs, as the
# other ways do (PoCL's own kernel cache is shared by all ways alike).
export PYOPENCL_NO_CACHE=1 OPENCV_OPENCL_CACHE_ENABLE=0 OPENCV_OPENCL_DEVICE=:CPU:
unset SYCL_PI_TRACE SYCL_PI_RECORD SYCL_PI_RECORD_DATA SYCL_PI_CONFIG SYCL_DEVICE_FILTER \
  PITRACE_OCL_ICD_VENDORS PYOPENCL_CTX 2>/dev/null

cmd_of() {
  case $1 in
  clpeak)   echo "clpeak -p 0 -d 0 ${CLPEAK_TESTS:-}" ;;
  pyopencl) echo "$PY $src/tests/apps/pyopencl_check.py $PYOPENCL_N" ;;
  clblast)  echo "$build/bin/clblast_client $CLBLAST_MNK" ;;
  vadd)     echo "$build/bin/vadd $VADD_N" ;;
  pipeline) echo "$build/bin/pipeline $PIPELINE_N" ;;
  ffmpeg)   echo "ffmpeg -hide_banner -loglevel error -nostdin -init_hw_device opencl=ocl
                  -filter_hw_device ocl -f lavfi -i testsrc=size=640x480:rate=25
                  -vf format=yuv420p,hwupload,avgblur_opencl=sizeX=3,unsharp_opencl=lx=5:ly=5:la=1.0,sobel_opencl,hwdownload,format=yuv420p
                  -frames:v $FFMPEG_FRAMES -f rawvideo -y $work/ffmpeg.yuv" ;;
  opencv)   echo "$PY $src/tests/apps/opencv_check.py $OPENCV_WH" ;;
  esac
}
ways_of() {
  for w in $(all_ways_of "$1"); do
    case " $only_ways " in *" $w "*) echo "$w" ;; esac
  done
}
all_ways_of() {
  case $1 in
  clpeak) echo "direct pitrace rec-none traced" ;;
  vadd|pipeline) echo "direct rec-none rec-all traced" ;;
  *)      echo "direct pitrace rec-none rec-all traced" ;;
  esac
}
# routed APP [VAR=VALUE...]: runs $cmd as the ways other than direct do, with
# the settings given: pitrace applications (the examples) on the runtime
# directly, OpenCL applications through the front end.
routed() {
  routed_app=$1
  shift
  case $routed_app in
  vadd|pipeline) env OCL_ICD_VENDORS="$POCL" SYCL_DEVICE_FILTER=opencl "$@" $cmd ;;
  *)             env OCL_ICD_VENDORS="$ICD" PITRACE_OCL_ICD_VENDORS="$POCL" SYCL_DEVICE_FILTER=opencl \
                   "$@" $cmd ;;
  esac
}
now() { date +%s%N; }

# run_one APP WAY TAG: one run; output in $work/APP.WAY.TAG.out, and for a
# timed run (TAG a round number) a line in $work/times:
#   app way round seconds exit verified calls-recorded db-bytes
run_one() {
  app=$1 way=$2 tag=$3 out=$work/$1.$2.$3.out db=$work/$1.$2.$3.db
  cmd=$(cmd_of "$app")
  trace=$work/$1.$2.$3.trace
  rm -f "$db" "$db-wal" "$db-shm" "$db-journal" "$trace"
  t0=$(now)
  case $way in
  direct)   case $app in
            vadd|pipeline) routed "$app" >"$out" 2>&1 ;;
            *)             env OCL_ICD_VENDORS="$POCL" $cmd >"$out" 2>&1 ;;
            esac ;;
  pitrace)  routed "$app" >"$out" 2>&1 ;;
  rec-none) routed "$app" SYCL_PI_RECORD="$db" SYCL_PI_RECORD_DATA=none >"$out" 2>&1 ;;
  rec-all)  routed "$app" SYCL_PI_RECORD="$db" SYCL_PI_RECORD_DATA=all >"$out" 2>&1 ;;
  traced)   routed "$app" SYCL_PI_TRACE=2 SYCL_PI_TRACE_FILE="$trace" >"$out" 2>&1 ;;
  esac
  rc=$?
  t1=$(now)
  case $app in
  clpeak) figures "$out" >"$out.fig"
          if [ -s "$out.fig" ] && { [ ! -f "$work/clpeak.want" ] || cmp -s "$work/clpeak.want" "$out.fig"; }
          then ok=1; else ok=0; fi
          [ -f "$work/clpeak.want" ] || [ $ok = 0 ] || cp "$out.fig" "$work/clpeak.want" ;;
  vadd|pipeline) if grep -q "result verified" "$out"; then ok=1; else ok=0; fi ;;
  ffmpeg) if [ $rc = 0 ] && [ -s "$work/ffmpeg.yuv" ] &&
             { [ ! -f "$work/ffmpeg.want" ] || cmp -s "$work/ffmpeg.want" "$work/ffmpeg.yuv"; }
          then ok=1; else ok=0; fi
          [ -f "$work/ffmpeg.want" ] || [ $ok = 0 ] || cp "$work/ffmpeg.yuv" "$work/ffmpeg.want"
          rm -f "$work/ffmpeg.yuv" ;;
  *)      if grep -q "all verified" "$out"; then ok=1; else ok=0; fi ;;
  esac
  calls=- bytes=-
  if [ -f "$db" ]; then
    calls=$($PY -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select sum(calls) from sessions").fetchone()[0])' "$db" 2>/dev/null || echo "?")
    bytes=$(stat -c %s "$db")
    rm -f "$db" "$db-wal" "$db-shm" "$db-journal"
  elif [ "${way#rec}" != "$way" ]; then
    calls=0 ok=0 # recorded nothing
  fi
  if [ $way = traced ]; then
    calls=$(grep -c '^---> pi' "$trace" 2>/dev/null) || { calls=0 ok=0; } # traced nothing
    bytes=$(stat -c %s "$trace" 2>/dev/null || echo 0)
    rm -f "$trace"
  fi
  secs=$(echo "$t0 $t1" | awk '{ printf "%.3f", ($2 - $1) / 1e9 }')
  case $tag in
  warm) ;;
  *) echo "$app $way $tag $secs $rc $ok $calls $bytes" >>"$work/times" ;;
  esac
  st=ok; [ $rc = 0 ] && [ $ok = 1 ] || st="FAILED (exit $rc, verified $ok; $out)"
  printf '%-9s %-9s %-5s %8ss  %s\n' "$app" "$way" "$tag" "$secs" "$st" >&2
}

# The names of the figures clpeak printed (section / name), for the check.
figures() {
  awk '/^    [^ ].*:/ && !/Driver version|Compute units|Clock frequency/ { sub(/ *:.*/, ""); print; next }
       /^    [^ ]/ { sec = $0 } /^      / && /: *[0-9]/ { n = $0; sub(/ *:.*/, "", n); print sec " / " n }' "$1" |
    sed 's/  */ /g'
}

impl=$(head -n 1 "$POCL")
echo "$me: $apps on $impl ($POCL), $rounds rounds, build $build; logs in $work$([ $keep = 1 ] || echo ' (removed at the end; --keep keeps them)')" >&2
# One untimed run of each way of the short applications first: the first
# run builds PoCL's kernel cache, which would otherwise favour later ways.
for app in $apps; do
  [ $app = clpeak ] && continue
  for way in $(ways_of $app); do run_one $app $way warm; done
done
r=1
while [ $r -le $rounds ]; do
  for app in $apps; do
    set -- $(ways_of $app)
    i=1
    while [ $i -lt $r ]; do w=$1; shift; set -- "$@" "$w"; i=$((i + 1)); done
    for way in "$@"; do run_one $app $way $r; done
  done
  r=$((r + 1))
done

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
case $impl in
*pocl*) impl="PoCL $(dpkg-query -W -f '${Version}' libpocl2 2>/dev/null || echo "?")" ;;
*nvidia*) impl="NVIDIA OpenCL on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1 || echo "?")" ;;
esac
commit=$(git -C "$src" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
[ "$commit" = unknown ] || [ -z "$(git -C "$src" status --porcelain --untracked-files=no 2>/dev/null)" ] ||
  commit="$commit with uncommitted changes"
$PY - "$work" "$rounds" "$apps" "$(nproc) x $cpu, $impl, $(date +%Y-%m-%d), load average $(cut -d' ' -f1 /proc/loadavg) at the end" \
  "$PYOPENCL_N" "$CLBLAST_MNK" "$commit" "$VADD_N" "$PIPELINE_N" <<'EOF'
import os, re, statistics, sys
work, rounds, apps, machine, pyn, mnk, commit, vaddn, pipen = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7], sys.argv[8], sys.argv[9]
runs = {}   # (app, way, round) -> (secs, ok, calls, bytes)
for line in open(os.path.join(work, "times")):
    app, way, r, secs, rc, ok, calls, nbytes = line.split()
    runs[(app, way, int(r))] = (float(secs), rc == "0" and ok == "1", calls, nbytes)
WAYS = ["direct", "pitrace", "rec-none", "rec-all", "traced"]
HEAD = {"pitrace": "through pitrace", "rec-none": "recorded, data=none",
        "rec-all": "recorded, data=all", "traced": "SYCL_PI_TRACE=2 to a file"}
LABEL = {"clpeak": "clpeak -p 0 -d 0 " + (os.environ.get("CLPEAK_TESTS") or "(all tests)"),
         "pyopencl": "pyopencl_check.py %s" % pyn,
         "clblast": "clblast_client %s" % mnk,
         "vadd": "vadd %s" % vaddn, "pipeline": "pipeline %s" % pipen,
         "ffmpeg": "ffmpeg, %s frames through 3 OpenCL filters" % os.environ.get("FFMPEG_FRAMES", "30"),
         "opencv": "opencv_check.py %s" % os.environ.get("OPENCV_WH", "1920 1080")}

def mmm(v, fmt):
    v = sorted(v)
    if not v:
        return "-"
    if len(v) == 1:
        return fmt % v[0]
    out = (fmt + " / " + fmt + " / " + fmt) % (v[0], statistics.median(v), v[-1])
    # With 10 rounds or more, the median's 95 % interval from the order
    # statistics (no assumption about the noise's shape): ranks
    # n/2 -+ 0.98 sqrt(n).
    n = len(v)
    if n >= 10:
        lo = max(0, int(n / 2 - 0.98 * n ** 0.5))
        hi = min(n - 1, int(n / 2 + 0.98 * n ** 0.5 + 0.5))
        out += (" (median in " + fmt + ".." + fmt + ")") % (v[lo], v[hi])
    return out

def size(b):
    b = float(b)
    for unit in ("B", "KB", "MB", "GB"):
        if b < 1000 or unit == "GB":
            return ("%.0f %s" if unit == "B" else "%.1f %s") % (b, unit)
        b /= 1000

bad = [k for k, v in runs.items() if not v[1]]
print("Real applications, %s; commit %s; %d round(s), ways interleaved within each round." % (machine, commit, rounds))
print()
print("Wall time as a ratio to the direct run of the same round, min / median / max over the rounds")
print("(vadd and pipeline are pitrace applications: direct is their plain run, there is no 'through pitrace'):")
print()
print("| application | direct (s, median) | " + " | ".join(HEAD[w] for w in WAYS[1:]) + " | recorded calls; session sizes and trace file |")
print("|---|---|---|---|---|---|---|")
for app in apps:
    rs = sorted({r for (a, w, r) in runs if a == app})
    direct = [runs[(app, "direct", r)][0] for r in rs if (app, "direct", r) in runs]
    cells = []
    for w in WAYS[1:]:
        ratios = [runs[(app, w, r)][0] / runs[(app, "direct", r)][0] for r in rs
                  if (app, w, r) in runs and (app, "direct", r) in runs]
        cells.append(mmm(ratios, "%.2fx") if ratios else "-")
    rec = []
    calls = "-"
    for w, tag in (("rec-none", "none"), ("rec-all", "all"), ("traced", "trace")):
        got = [runs[(app, w, r)] for r in rs if (app, w, r) in runs]
        if got and calls == "-" and w != "traced":
            calls = got[0][2]
        known = [float(g[3]) for g in got if g[3] not in "-?"]
        if got:
            rec.append("%s %s" % (tag, size(statistics.median(known)) if known else "?"))
    print("| %s | %.2f | %s | %s; %s |" % (LABEL[app], statistics.median(direct) if direct else float("nan"),
          " | ".join(cells), calls, ", ".join(rec) if rec else "-"))
print()

if "clpeak" in apps:
    def parse(path):
        figs, sec = {}, None
        for line in open(path, errors="replace"):
            m = re.match(r"^( +)(\S.*?)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*(\S*)", line)
            if m and len(m.group(1)) >= 4:
                name, val, unit = m.group(2), float(m.group(3)), m.group(4)
                if name in ("Driver version", "Compute units", "Clock frequency"):
                    continue
                key = (sec, name) if len(m.group(1)) > 4 and sec else (name + (" (%s)" % unit if unit else ""), "")
                figs[key] = val
            elif re.match(r"^    \S", line):
                sec = line.strip()
        return figs
    rs = sorted({r for (a, w, r) in runs if a == "clpeak"})
    figs = {(w, r): parse(os.path.join(work, "clpeak.%s.%d.out" % (w, r)))
            for w in WAYS[:3] for r in rs if (("clpeak", w, r) in runs)}
    keys = []
    for r in rs:
        for k in figs.get(("direct", r), {}):
            if k not in keys:
                keys.append(k)
    print("clpeak's figures through pitrace (and recorded, data=none) as a ratio to the direct figure of")
    print("the same round, min / median / max over the rounds; direct spread = (max - min) / median of the")
    print("direct figure over the rounds. Kernel launch latency is a time: above 1 is slower. **noise**: the")
    print("direct runs differ among themselves by more than 2 %, so the ratio cannot resolve the 2 % target.")
    print()
    print("| clpeak test | figure | direct (median) | through pitrace / direct | recorded / direct | direct spread |")
    print("|---|---|---|---|---|---|")
    sec_prev = None
    for k in keys:
        sec, name = k
        d = [figs[("direct", r)][k] for r in rs if k in figs.get(("direct", r), {})]
        cells = []
        for w in ("pitrace", "rec-none"):
            v = [figs[(w, r)][k] / figs[("direct", r)][k] for r in rs
                 if k in figs.get((w, r), {}) and k in figs.get(("direct", r), {}) and figs[("direct", r)][k] > 0]
            cells.append(mmm(v, "%.3f"))
        med = statistics.median(d)
        spread = (max(d) - min(d)) / med if med > 0 and len(d) > 1 else 0.0
        flag = " **noise**" if spread > 0.02 else ""
        print("| %s | %s | %.2f | %s | %s | %s%s |" % (sec if sec != sec_prev else "", name or "-", med,
              cells[0], cells[1], "%.1f %%" % (100 * spread) if len(d) > 1 else "-", flag))
        sec_prev = sec
    print()

if bad:
    print("FAILED runs (exit status non-zero, or results not verified / figures missing): " +
          ", ".join("%s %s round %d" % k for k in sorted(bad)))
    sys.exit(1)
print("Every run succeeded and verified its results.")
EOF
