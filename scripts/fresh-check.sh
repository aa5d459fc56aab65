#!/bin/bash
# Checks the README's promise on a fresh machine: builds a minimal Debian 12
# (bookworm) root with debootstrap, puts a clean clone of a commit in it, and
# runs the README's two Quick start commands there as root, through chroot,
# with a clean environment. Each command gets its own fresh root and its own
# fresh clone; after each, the CUDA plugin (build/lib/libpi_cuda.so) must
# have been built. Runs as root. See "Checking a fresh machine" in README.md.
#
#   scripts/fresh-check.sh [--workdir DIR] [--rev REV] [--keep]
#                          [--same-root] [--refresh-cache]
#
#   --workdir DIR     where roots, cache and logs go (default /var/tmp/pitrace-fresh)
#   --rev REV         the commit to check (default HEAD); the working tree's
#                     changes are never used, only committed history
#   --keep            keep the roots (DIR/root-1, DIR/root-2) for inspection;
#                     they are replaced by the next run
#   --same-root       run command 2 in command 1's root, after it, instead of
#                     in a fresh root of its own (faster, weaker)
#   --refresh-cache   debootstrap anew instead of using the cached root
#
# The first run debootstraps (--variant=minbase, from the Debian mirror apt
# uses on this machine) and stores the result untouched as
# DIR/cache/bookworm-minbase-ARCH.tar; every root after that, on this run and
# later ones, starts from a fresh untar of it, so each is still a pristine
# minimal root. The cache is rebuilt when the mirror changes, or with
# --refresh-cache. Each command's output goes to DIR/logs/STAMP-REV/.
#
# Exit 0 when both commands passed and the CUDA plugin was built after each,
# 1 when a check failed, 2 when the check itself could not run.
set -euo pipefail

# Every mount happens in a private mount namespace of our own: the trap below
# unmounts everything on exit, and should even this process be SIGKILLed the
# kernel drops the namespace's mounts with its last process.
self=$(readlink -f "$0")
if [ -z "${PITRACE_FRESH_NS:-}" ] && unshare --mount --propagation private true 2>/dev/null; then
  exec unshare --mount --propagation private -- env PITRACE_FRESH_NS=1 bash "$self" "$@"
fi

usage() { sed -n '2,/^set -euo/{/^#/s/^# \{0,1\}//p}' "$self"; }
die() { echo "fresh-check: $*" >&2; exit 2; }

workdir=/var/tmp/pitrace-fresh
rev=HEAD
keep=0
same_root=0
refresh_cache=0
while [ $# -gt 0 ]; do
  case $1 in
    --workdir) [ $# -ge 2 ] || die "--workdir needs a directory"; workdir=$2; shift 2 ;;
    --workdir=*) workdir=${1#*=}; shift ;;
    --rev) [ $# -ge 2 ] || die "--rev needs a revision"; rev=$2; shift 2 ;;
    --rev=*) rev=${1#*=}; shift ;;
    --keep) keep=1; shift ;;
    --same-root) same_root=1; shift ;;
    --refresh-cache) refresh_cache=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option: $1 (see --help)" ;;
  esac
done

[ "$(id -u)" -eq 0 ] || die "must run as root (debootstrap, mount, chroot)"
case $workdir in /*) ;; *) workdir=$PWD/$workdir ;; esac
case $workdir in *[[:space:]]*|/) die "choose a work directory without blanks, not /" ;; esac
mkdir -p "$workdir"
workdir=$(readlink -f "$workdir")

repo=$(git -C "$(dirname "$self")" rev-parse --show-toplevel) || die "not inside a git repository"
sha=$(git -C "$repo" rev-parse --verify --quiet "$rev^{commit}") || die "no such commit: $rev"
short=${sha:0:12}

exec 9>"$workdir/.lock"
flock -n 9 || die "another fresh-check is using $workdir"

suite=bookworm
arch=$(dpkg --print-architecture)
cache=$workdir/cache/$suite-minbase-$arch.tar
stamp=$(date +%Y%m%d-%H%M%S)
logs=$workdir/logs/$stamp-$short
mkdir -p "$workdir/cache" "$logs"

fmt_time() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
say() { echo "== $*"; }

# ---------------------------------------------------------------- mounts

# Mount points at or under $1, deepest first (from this namespace's table).
mounts_under() {
  awk -v d="$1" '{ m = $5; gsub(/\\040/, " ", m)
                   if (m == d || index(m, d "/") == 1) print m }' /proc/self/mountinfo | sort -r
}

# Ends the processes (all ours) whose root directory lies in $1, so nothing
# keeps its mounts busy: a daemon a package started, or a command left
# running by Ctrl-C.
kill_inside() {
  local dir=$1 sig p r found
  for sig in TERM KILL; do
    found=0
    for p in /proc/[0-9]*; do
      r=$(readlink "$p/root" 2>/dev/null) || continue
      case $r in "$dir"|"$dir"/*) kill -s "$sig" "${p#/proc/}" 2>/dev/null && found=1 ;; esac
    done
    [ $found -eq 1 ] || return 0
    sleep 2
  done
}

unmount_under() {
  local dir=$1 m pass
  kill_inside "$dir"
  for pass in 1 2 3; do
    [ -n "$(mounts_under "$dir")" ] || return 0
    for m in $(mounts_under "$dir"); do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
  done
  if [ -n "$(mounts_under "$dir")" ]; then
    echo "fresh-check: still mounted under $dir:" >&2
    mounts_under "$dir" >&2
    return 1
  fi
}

# rm -rf, refusing while anything is mounted inside.
safe_rm() {
  local dir=$1
  [ -e "$dir" ] || return 0
  if [ -n "$(mounts_under "$dir")" ]; then
    echo "fresh-check: not removing $dir: something is mounted inside:" >&2
    mounts_under "$dir" >&2
    return 1
  fi
  rm -rf --one-file-system -- "$dir"
}

# Directories this run made and may have mounted into.
active_dirs=()
cleanup() {
  local rc=$? d
  trap '' INT TERM HUP
  for d in ${active_dirs[@]+"${active_dirs[@]}"}; do
    unmount_under "$d" || rc=2
  done
  if [ "$keep" -eq 0 ]; then
    for d in ${active_dirs[@]+"${active_dirs[@]}"}; do
      safe_rm "$d" || rc=2
    done
  fi
  exit $rc
}
trap cleanup EXIT
trap 'echo "fresh-check: interrupted" >&2; exit 130' INT
trap 'echo "fresh-check: terminated" >&2; exit 143' TERM
trap 'exit 129' HUP

mount_root() {
  local root=$1
  mount -t proc proc "$root/proc"
  mount --bind /sys "$root/sys"
  mount --make-private "$root/sys"
  mount --bind /dev "$root/dev"
  mount --make-private "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  mount --make-private "$root/dev/pts"
  mkdir -p "$root/dev/shm"
  mount -t tmpfs -o mode=1777,nosuid,nodev shm "$root/dev/shm"
}

# ---------------------------------------------------------------- the mirror

# "URI SUITE COMPONENTS..." for every deb entry apt uses here, from
# sources.list and sources.list.d (one-line .list and deb822 .sources).
apt_entries() {
  local f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '{ sub(/#.*/, "") }
         $1 == "deb" { i = 2
           if ($2 ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
           line = $i " " $(i + 1)
           for (j = i + 2; j <= NF; j++) line = line " " $j
           if (i + 1 <= NF) print line }' "$f"
  done
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk 'function flush(  i, j, n, m, u, s) {
           if (types ~ /(^| )deb( |$)/ && tolower(enabled) != "no") {
             n = split(uris, u, " "); m = split(suites, s, " ")
             for (i = 1; i <= n; i++) for (j = 1; j <= m; j++) print u[i], s[j], comps
           }
           types = uris = suites = comps = enabled = ""; key = "" }
         /^#/ { next }
         /^[ \t]*$/ { flush(); next }
         /^[ \t]/ { if (key == "types") types = types " " $0
                    else if (key == "uris") uris = uris " " $0
                    else if (key == "suites") suites = suites " " $0
                    else if (key == "components") comps = comps " " $0
                    next }
         { key = tolower($0); sub(/:.*/, "", key); val = $0; sub(/^[^:]*:[ \t]*/, "", val)
           if (key == "types") types = val; else if (key == "uris") uris = val
           else if (key == "suites") suites = val; else if (key == "components") comps = val
           else if (key == "enabled") enabled = val }
         END { flush() }' "$f"
  done | awk '{ $1 = $1; print }'
}

entries=$(apt_entries)
mirror=$(awk -v s="$suite" '$2 == s { print $1; exit }' <<<"$entries")
[ -n "$mirror" ] || die "no '$suite' entry in apt's sources here (/etc/apt/sources.list{,.d/})"
mirror=${mirror%/}
# The root's own apt sources: this machine's entries for bookworm, its
# updates and its security suite, as an installed Debian 12 has them.
root_sources=$(awk -v s="$suite" '$2 == s || $2 == s "-updates" || $2 == s "-security" {
                 c = ""; for (i = 3; i <= NF; i++) c = c " " $i
                 if (c == "") c = " main"
                 print "deb " $1 " " $2 c }' <<<"$entries")

# ---------------------------------------------------------------- the root

if ! command -v debootstrap >/dev/null; then
  say "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
fi

debootstrap_note="cached ($cache)"
if [ "$refresh_cache" -eq 1 ] || [ ! -f "$cache" ] || [ "$(cat "$cache.mirror" 2>/dev/null)" != "$mirror" ]; then
  bs=$workdir/debootstrap.tmp
  safe_rm "$bs" || exit 2
  active_dirs+=("$bs")
  say "debootstrap --variant=minbase $suite from $mirror (log: $logs/debootstrap.log)"
  t0=$(date +%s)
  keyring=()
  [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] &&
    keyring=(--keyring=/usr/share/keyrings/debian-archive-keyring.gpg)
  if ! debootstrap --variant=minbase --arch="$arch" ${keyring[@]+"${keyring[@]}"} \
         "$suite" "$bs" "$mirror" >"$logs/debootstrap.log" 2>&1; then
    tail -n 20 "$logs/debootstrap.log" >&2
    die "debootstrap failed (log: $logs/debootstrap.log)"
  fi
  unmount_under "$bs" || exit 2
  tar --numeric-owner --xattrs --acls -C "$bs" -cf "$cache.tmp" .
  mv "$cache.tmp" "$cache"
  echo "$mirror" >"$cache.mirror"
  safe_rm "$bs" || exit 2
  t1=$(date +%s)
  debootstrap_note="debootstrapped in $(fmt_time $((t1 - t0))), cached as $cache"
  say "$debootstrap_note"
fi

# A fresh root from the cached tarball, with a fresh clone of $sha in
# /root/pitrace. Prints nothing; the root is $workdir/root-$1.
new_root() {
  local root=$workdir/root-$1 src=/root/pitrace
  safe_rm "$root" || exit 2
  mkdir -p "$root"
  active_dirs+=("$root")
  tar --numeric-owner --xattrs --acls -C "$root" -xf "$cache"
  printf '%s\n' "$root_sources" >"$root/etc/apt/sources.list"
  rm -f "$root/etc/resolv.conf"
  cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  git clone --quiet --no-hardlinks --no-checkout "$repo" "$root$src"
  git -C "$root$src" cat-file -e "$sha^{commit}" 2>/dev/null ||
    git -C "$root$src" fetch --quiet "$repo" "$sha"
  git -C "$root$src" -c advice.detachedHead=false checkout --quiet --detach "$sha"
  mount_root "$root"
}

# The README's two Quick start commands, as the commit under test states
# them: the indented lines of its "Quick start" section.
readme_commands() {
  git -C "$repo" show "$sha:README.md" |
    awk '/^## / { q = ($0 ~ /^## Quick start/) ; next }
         q && /^    [^ ]/ { sub(/^    /, ""); print }'
}
mapfile -t cmds < <(readme_commands)
[ ${#cmds[@]} -eq 2 ] ||
  die "expected two commands in README.md's Quick start at $short, found ${#cmds[@]}: ${cmds[*]-}"

results=()   # lines of the summary
failed=0

# run_in ROOT N: command N in ROOT, from the repository root, clean environment.
run_in() {
  local root=$1 n=$2 cmd=${cmds[$(($2 - 1))]} log=$logs/cmd$2.log t0 t1 rc
  say "command $n in $root: $cmd (log: $log)"
  t0=$(date +%s)
  # In the background, so that a signal reaches our traps at once (bash
  # runs a trap only after a foreground command ends); the cleanup then ends
  # whatever still runs inside the root.
  chroot "$root" /usr/bin/env -i \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root TERM="${TERM:-dumb}" \
    /bin/sh -c "cd /root/pitrace && $cmd" </dev/null >"$log" 2>&1 &
  if wait $!; then rc=0; else rc=$?; fi
  t1=$(date +%s)
  if [ $rc -eq 0 ]; then
    results+=("$(printf '[%d] %-52s PASS (exit 0)   %s' "$n" "$cmd" "$(fmt_time $((t1 - t0)))")")
  else
    failed=$((failed + 1))
    results+=("$(printf '[%d] %-52s FAIL (exit %d)   %s' "$n" "$cmd" "$rc" "$(fmt_time $((t1 - t0)))")")
    echo "-- last lines of $log:"
    tail -n 40 "$log" | sed 's/^/   | /'
  fi
  say "${results[-1]}"
  # What CTest said, when it ran.
  local line
  while IFS= read -r line; do
    results+=("      $line")
  done < <(grep -E '^[0-9]+% tests passed|^[[:space:]]+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess|Not Run|Exception)' "$log" || true)
  check_cuda "$root" "$n"
}

check_cuda() {
  local root=$1 n=$2 lib=build/lib/libpi_cuda.so why
  if [ -f "$root/root/pitrace/$lib" ]; then
    results+=("$(printf '[%d] %-52s PASS (built)' "$n" "CUDA plugin $lib")")
  else
    failed=$((failed + 1))
    why=$(grep -m1 -o 'cuda.h not found.*' "$logs/cmd$n.log" || true)
    [ -d "$root/root/pitrace/build/lib" ] || why="no build/lib at all${why:+; $why}"
    results+=("$(printf '[%d] %-52s FAIL (missing)%s' "$n" "CUDA plugin $lib" "${why:+: $why}")")
  fi
  say "${results[-1]}"
}

total0=$(date +%s)
say "checking $short ($(git -C "$repo" log -1 --format=%s "$sha" | cut -c1-60)) in $workdir"
new_root 1
run_in "$workdir/root-1" 1
if [ "$same_root" -eq 1 ]; then
  run_in "$workdir/root-1" 2
else
  if [ "$keep" -eq 0 ]; then
    unmount_under "$workdir/root-1" && safe_rm "$workdir/root-1" || exit 2
  fi
  new_root 2
  run_in "$workdir/root-2" 2
fi
total1=$(date +%s)

echo
say "fresh-check summary: $short on Debian $suite minbase ($arch) from $mirror"
echo "   root: $debootstrap_note"
if [ "$same_root" -eq 1 ]; then
  echo "   both commands ran in one fresh root, command 2 after command 1"
else
  echo "   each command ran in its own fresh root with its own fresh clone"
fi
printf '   %s\n' "${results[@]}"
echo "   logs: $logs"
if [ "$keep" -eq 1 ]; then
  if [ "$same_root" -eq 1 ]; then echo "   root kept: $workdir/root-1"
  else echo "   roots kept: $workdir/root-1 $workdir/root-2"; fi
fi
echo "   total: $(fmt_time $((total1 - total0)))"
if [ $failed -eq 0 ]; then
  echo "RESULT: PASS"
  exit 0
fi
echo "RESULT: FAIL ($failed check(s) failed)"
exit 1
