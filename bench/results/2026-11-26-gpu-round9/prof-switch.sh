#!/bin/sh
# Where the merge thread is switched out at 8 flooding threads: its samples
# in the scheduler, by the kernel path and the user-level caller.
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib
PERF="env LD_LIBRARY_PATH=$B/perflib:$B/lib $B/bin/perf"
rm -f /tmp/p.db* /tmp/p.data
$PERF record -q -F 15000 -e cpu-clock -g -o /tmp/p.data $B/bin/bench_record --child $B/lib null-scalar rec-none 8 1000000 0 /tmp/p.db | grep RESULT
$PERF report -i /tmp/p.data --comm pitrace-merge --no-children --sort sym --stdio -G 2>/dev/null | grep -v "^$" | grep -v "^#" | head -90
echo "== sched_switch events of the merge thread, by user caller"
rm -f /tmp/p.db* /tmp/s.data
$PERF record -q -e sched:sched_switch -g -o /tmp/s.data $B/bin/bench_record --child $B/lib null-scalar rec-none 8 1000000 0 /tmp/p.db | grep RESULT
$PERF script -i /tmp/s.data --comm pitrace-merge -F comm,sym 2>/dev/null | awk 'NF==0{if(u!="")c[u]++; u=""; next} $1!="pitrace-merge"{ if ($1 !~ /^(__|entry|do_|schedule|x64|futex|hrtimer|common)/ && u=="") u=$1 } END{for(k in c) print c[k], k}' | sort -rn | head -15
$PERF script -i /tmp/s.data --comm pitrace-merge 2>/dev/null | grep -c sched_switch
