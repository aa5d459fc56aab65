/*
 * stamp.c: call times as the recorder takes them, and their conversion to
 * monotonic nanoseconds.
 *
 * A recorded call reads the time twice (start and end). Where the kernel
 * keeps CLOCK_MONOTONIC on the CPU's time-stamp counter (clocksource
 * "tsc": constant, synchronized across cores, or the kernel would not use
 * it), the shim reads the counter itself (rdtsc, ~15 ns on the 2-core
 * development machine against ~38 ns for clock_gettime) and the writer
 * turns stamps into nanoseconds. Elsewhere, or with PITRACE_CLOCK=monotonic,
 * stamps are monotonic nanoseconds already.
 *
 * The conversion is piecewise linear between knots: pairs (counter,
 * CLOCK_MONOTONIC) read back to back by the writer. A knot is taken when a
 * stamp comes that no knot is later than, so every stamp lies between two
 * knots and the conversion never extrapolates forward: it follows
 * CLOCK_MONOTONIC as the kernel steers it, is monotonic (stamps that
 * follow each other in a thread stay in order), and is off by at most the
 * time a knot takes to read. The knots also go into the ring file, for the
 * salvage of a process that is gone (which adds a knot of its own: the
 * counter and the clock are the machine's, not the process's).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder.h"

bool shim_stamps_tsc;
/* How the stamps the writer converts were taken: this process's way
 * (shim_stamps_tsc), or a salvaged ring file's (stamp_set_mode), which
 * the application's threads, stamping meanwhile, must not see. */
static bool convert_tsc;

void stamp_init(void)
{
  /* A misspelt "monotonic" left the counter on without a word. */
  const char *force = getenv("PITRACE_CLOCK");
  bool monotonic = force && strcmp(force, "monotonic") == 0;
  if (force && *force && !monotonic && strcmp(force, "default") != 0)
    fprintf(stderr, "pitrace: PITRACE_CLOCK=%s is not monotonic or default; stamping calls "
                    "the default way\n", force);
#if defined(__x86_64__)
  if (monotonic)
    return;
  FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
  char cs[32] = "";
  if (f) {
    if (!fgets(cs, sizeof cs, f))
      cs[0] = 0;
    fclose(f);
  }
  shim_stamps_tsc = convert_tsc = strcmp(cs, "tsc\n") == 0;
#endif
}

void stamp_set_mode(bool tsc) { convert_tsc = tsc; }

/* ---- Knots (the writer's; one thread) -------------------------------------- */

#define MAX_KNOTS 4096 /* then the older half goes */

static stamp_knot *knots;
/* slopes[i]: ns per count from knots[i] to knots[i + 1], in 32.32 fixed
 * point, found when knots[i + 1] came: a stamp's conversion is a multiply,
 * never a division (the merge of many threads' rings goes back and forth
 * between segments). */
static uint64_t *slopes;
static size_t nknots;
/* The segment the last stamp fell in, by value: stamps come mostly in
 * order, so most need one test and a multiply (span 0: none). */
static struct {
  uint64_t stamp, span, ns, slope, gap;
} last;

void stamp_reset(void)
{
  free(knots);
  free(slopes);
  knots = NULL;
  slopes = NULL;
  nknots = 0;
  last.span = 0;
  convert_tsc = shim_stamps_tsc;
}

static void add_knot(stamp_knot k)
{
  if (!knots && (!(knots = malloc(MAX_KNOTS * sizeof *knots)) ||
                 !(slopes = malloc(MAX_KNOTS * sizeof *slopes)))) {
    stamp_reset();
    return;
  }
  if (nknots && (k.stamp <= knots[nknots - 1].stamp || k.ns < knots[nknots - 1].ns))
    return; /* not later: the last one serves */
  if (nknots == MAX_KNOTS) {
    memmove(knots, knots + MAX_KNOTS / 2, MAX_KNOTS / 2 * sizeof *knots);
    memmove(slopes, slopes + MAX_KNOTS / 2, MAX_KNOTS / 2 * sizeof *slopes);
    nknots = MAX_KNOTS / 2;
    last.span = 0;
  }
  if (nknots) {
    const stamp_knot *a = &knots[nknots - 1];
    slopes[nknots - 1] =
        (uint64_t)(((unsigned __int128)(k.ns - a->ns) << 32) / (k.stamp - a->stamp));
  }
  knots[nknots++] = k;
}

void stamp_add_knot(stamp_knot k) { add_knot(k); }

/* The counter the stamps being converted count (a salvaged file's may not
 * be this process's). */
static inline uint64_t counter(void)
{
#if defined(__x86_64__)
  if (convert_tsc)
    return __builtin_ia32_rdtsc();
#endif
  return shim_now();
}

/* The counter and the clock read back to back; a pair the thread was
 * interrupted between (the counter moved more than ~10 us) is read again. */
static stamp_knot take_knot(void)
{
  stamp_knot k = {0, 0};
  for (int i = 0; i < 8; i++) {
    uint64_t s0 = counter();
    uint64_t ns = shim_now();
    uint64_t s1 = counter();
    k = (stamp_knot){s0 + (s1 - s0) / 2, ns};
    if (s1 - s0 < 30000)
      break;
  }
  return k;
}

stamp_knot stamp_take_knot(void)
{
  stamp_knot k = take_knot();
  add_knot(k);
  return k;
}


/* A stamp of the segment `last` holds (s - last.stamp < last.span). */
static inline uint64_t in_last(uint64_t s)
{
  unsigned __int128 d = ((unsigned __int128)(s - last.stamp) * last.slope) >> 32;
  return d < last.gap ? last.ns + (uint64_t)d : last.ns + last.gap; /* never past the next knot */
}

static uint64_t in_segment(size_t i, uint64_t s)
{
  const stamp_knot *a = &knots[i], *b = &knots[i + 1];
  last.stamp = a->stamp;
  last.span = b->stamp - a->stamp;
  last.ns = a->ns;
  last.slope = slopes[i];
  last.gap = b->ns - a->ns;
  return in_last(s);
}

/* A stamp outside the last one's segment (out of line: the common case
 * then saves no registers). */
__attribute__((noinline)) static uint64_t convert(uint64_t s, void (*on_knot)(stamp_knot))
{
  if (!convert_tsc)
    return s;
  if (!nknots || s >= knots[nknots - 1].stamp) {
    stamp_knot k = take_knot();
    add_knot(k);
    if (on_knot)
      on_knot(k);
  }
  if (nknots < 2)
    return nknots ? knots[0].ns : shim_now();
  if (s >= knots[nknots - 1].stamp) /* a damaged stamp (salvage): no later than now */
    return knots[nknots - 1].ns;
  if (s < knots[0].stamp) { /* older than every knot kept: the first slope back */
    double back = (double)(knots[0].stamp - s) * (double)(knots[1].ns - knots[0].ns) /
                  (double)(knots[1].stamp - knots[0].stamp);
    return back < (double)knots[0].ns ? knots[0].ns - (uint64_t)back : 0;
  }
  size_t lo = 0, hi = nknots - 1; /* knots[lo].stamp <= s < knots[hi].stamp */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (knots[mid].stamp <= s)
      lo = mid;
    else
      hi = mid;
  }
  return in_segment(lo, s);
}

uint64_t stamp_to_ns(uint64_t s, void (*on_knot)(stamp_knot))
{
  /* The segment of the last stamp: no knot is needed (a later one exists),
   * and no search. */
  if (s - last.stamp < last.span)
    return in_last(s);
  return convert(s, on_knot);
}
