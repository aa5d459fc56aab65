/*
 * bench_common.h: what every benchmark says about where it ran (the header
 * of its output), the min / median / max it reports over rounds, and its
 * numeric options.
 */
#ifndef BENCH_COMMON_H
#define BENCH_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "bench_version.h" /* PITRACE_BENCH_COMMIT, written at build time */

/* A command-line option's number, at least `least`, or the program exits
 * (2) with one line naming the option; bench_positive: at least 1. */
static inline long bench_number_from(const char *prog, const char *opt, const char *v, long least)
{
  char *end;
  long n = v && *v ? strtol(v, &end, 10) : least - 1;
  if (!v || !*v || *end || n < least) {
    fprintf(stderr, "%s: %s needs a %s number, not '%s'\n", prog, opt,
            least > 0 ? "positive" : "non-negative", v ? v : "");
    exit(2);
  }
  return n;
}

static inline long bench_positive(const char *prog, const char *opt, const char *v)
{
  return bench_number_from(prog, opt, v, 1);
}

/* The first line of /proc/cpuinfo's "model name", or "?". */
static inline void bench_cpu_model(char *out, size_t n)
{
  snprintf(out, n, "?");
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
      const char *v = strchr(line, ':') + 1;
      while (*v == ' ' || *v == '\t')
        v++;
      snprintf(out, n, "%.*s", (int)strcspn(v, "\n"), v);
      break;
    }
  }
  if (f)
    fclose(f);
}

/* The 1-minute load average, or -1. */
static inline double bench_load(void)
{
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1)
      l = -1;
    fclose(f);
  }
  return l;
}

/* The header lines: which benchmark, the machine (CPU, cores, load, kernel),
 * the commit it was built from, the date. */
static inline void bench_print_machine(const char *name)
{
  char cpu[256], host[256] = "?";
  struct utsname u;
  bench_cpu_model(cpu, sizeof cpu);
  gethostname(host, sizeof host - 1);
  time_t t = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M", localtime(&t));
  printf("%s: commit %s, started %s\n", name, PITRACE_BENCH_COMMIT, date);
  printf("machine: %s, %ld cores online (%s), load average %.2f at the start%s\n", cpu,
         sysconf(_SC_NPROCESSORS_ONLN), uname(&u) == 0 ? u.release : "?", bench_load(),
         bench_load() > 0.5 * (double)sysconf(_SC_NPROCESSORS_ONLN)
             ? " (shared: others were running)"
             : "");
}

static inline int bench_cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Sorts v[0..n) and gives its min, median (the mean of the middle two for an
 * even n) and max. */
static inline void bench_mmm(double *v, size_t n, double *min, double *med, double *max)
{
  qsort(v, n, sizeof *v, bench_cmp_double);
  *min = v[0];
  *max = v[n - 1];
  *med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
