#!/bin/sh
# Round 15 on the GPU host: which instructions of the merge thread take
# its time at 1 and 8 flooding threads (scalar calls, data none), to tell
# waiting for memory another core wrote from work (perf and its libraries
# carried in build-gpu/bin and build-gpu/perflib; cpu-clock: this VM
# counts no cycles, so a sample lands on the instruction after a stall).
B=$PWD/build-gpu
export LD_LIBRARY_PATH=$B/lib
PERF="env LD_LIBRARY_PATH=$B/perflib:$B/lib $B/bin/perf"
for T in 1 8; do
  rm -f /tmp/p.db* /tmp/p.data
  echo "== $T threads: $($PERF record -q -F 20000 -e cpu-clock -o /tmp/p.data $B/bin/bench_record --child $B/lib null-scalar rec-none $T 2000000 0 /tmp/p.db | grep RESULT)"
  $PERF report -i /tmp/p.data --comm pitrace-merge --sort sym --stdio 2>/dev/null | grep "%" | head -12
  for sym in wr__handle_record process_entry process_exit wr__merge heap_down.constprop.0 pt_chunk_enc_add_written stamp_to_ns; do
    echo "== $T threads: $sym, instructions with >= 1.5 % of its samples"
    $PERF annotate -i /tmp/p.data --stdio -s "$sym" 2>/dev/null |
      awk -F: '$1 + 0 >= 1.5' | head -40
  done
done
