#!/bin/sh
# bench_report.sh: how big `pitrace report` makes a big session's page and
# how fast headless Chromium loads and redraws it.
#
# Records a session of N calls (default 100000, the most a report holds)
# with bench_viewer's stand-in plugin, times `pitrace report` on it, then
# opens the page R times (default 5) in headless Chromium with a script
# appended that notes, on the page's clock (performance.now(), from the
# start of navigation): when the page's own script ended, when the page was
# laid out (ready to paint), one full redraw of the timeline, and ten mouse
# wheel zooms. Medians are printed as a Markdown table, with Chromium's
# wall time for the report and for an empty page (its start-up).
#
# Usage: bench/bench_report.sh [BUILD_DIR] [N] [R]   (BUILD_DIR: build)
set -eu
build=${1:-build}
calls=${2:-100000}
runs=${3:-5}
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "bench_report: chromium is not installed" >&2
  exit 2
fi
work=$(mktemp -d /tmp/pitrace-bench-report-XXXXXX)
trap 'rm -rf "$work"' EXIT

"$build/bin/bench_viewer" --calls "$calls" --keep "$work/s.db" --record-only >/dev/null

now() { date +%s.%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

: >"$work/gen"
for _ in 1 2 3; do
  t0=$(now)
  "$build/bin/pitrace" report "$work/s.db" -o "$work/report.html"
  echo "$(now) $t0" | awk '{ printf "%.2f\n", $1 - $2 }' >>"$work/gen"
done
size=$(wc -c <"$work/report.html")

# The page, with a script after its own that measures and leaves the
# figures in an attribute of <body>.
sed 's|</body>|<script>\
(function () {\
  const end = Number(document.body.dataset.loadMs);\
  document.body.offsetHeight;\
  const ready = performance.now();\
  let t = performance.now();\
  window.dispatchEvent(new Event("resize"));\
  const redraw = performance.now() - t;\
  const cv = document.getElementById("timeline"), r = cv.getBoundingClientRect();\
  t = performance.now();\
  for (let i = 0; i < 10; i++)\
    cv.dispatchEvent(new WheelEvent("wheel", { clientX: Math.round(r.left + r.width / 2),\
      clientY: Math.round(r.top + 30), deltaY: -120, bubbles: true, cancelable: true }));\
  const wheel = (performance.now() - t) / 10;\
  document.body.setAttribute("data-bench", [end, ready, redraw, wheel].map(v => v.toFixed(1)).join(" "));\
})();\
</script></body>|' "$work/report.html" >"$work/timed.html"
echo '<!DOCTYPE html><html><body>empty</body></html>' >"$work/empty.html"

open_page() {
  profile=$(mktemp -d "$work/profile-XXXXXX")
  HOME=$profile "$chromium" --headless --no-sandbox --disable-gpu --user-data-dir="$profile" \
    --window-size=1280,900 --dump-dom "file://$1" 2>/dev/null
  rm -rf "$profile"
}

: >"$work/figures"
: >"$work/wall"
: >"$work/empty"
for _ in $(seq "$runs"); do
  t0=$(now)
  open_page "$work/timed.html" | grep -o 'data-bench="[^"]*"' | tr -d '"' |
    sed 's/data-bench=//' >>"$work/figures"
  echo "$(now) $t0" | awk '{ printf "%.2f\n", $1 - $2 }' >>"$work/wall"
  t0=$(now)
  open_page "$work/empty.html" >/dev/null
  echo "$(now) $t0" | awk '{ printf "%.2f\n", $1 - $2 }' >>"$work/empty"
done
if [ "$(wc -l <"$work/figures")" -ne "$runs" ]; then
  echo "bench_report: the page did not load in Chromium" >&2
  exit 1
fi

col() { awk -v c="$1" '{ print $c }' "$work/figures" | median; }
echo "| $calls calls | |"
echo "|---|---|"
echo "| pitrace report (median of 3) | $(median <"$work/gen") s |"
echo "| HTML file | $size bytes ($(echo "$size" | awk '{ printf "%.1f MB", $1 / 1e6 }')) |"
echo "| page script done (median of $runs) | $(col 1) ms after navigation start |"
echo "| page laid out, ready to paint | $(col 2) ms after navigation start |"
echo "| full timeline redraw | $(col 3) ms |"
echo "| one wheel zoom (redraw) | $(col 4) ms |"
echo "| chromium --dump-dom wall time | $(median <"$work/wall") s (empty page: $(median <"$work/empty") s) |"
