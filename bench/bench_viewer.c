/*
 * bench_viewer: how fast the viewer verbs and replay's load read a big
 * session.
 *
 * It records a session of N calls (default one million) by driving a loop of
 * cheap PI calls through the recording shim (libpi_shim.so) in front of a
 * minimal plugin defined here (a stand-in, not a backend: every function
 * returns at once), in a child process. The loop is what an application's
 * hot path looks like: two kernel arguments, a launch with its event, the
 * event's release, a small blocking write and read, a finish and an info
 * query. Then it times, each over a number of rounds (medians shown: wall
 * clock, the CPU time the command used and its largest resident memory),
 * on that session: replay's load alone (bench_load: every call read and
 * parsed as `pitrace replay` loads them, no plugin called), the pitrace
 * verbs `show --compact` and `show` to /dev/null, `stats`, `export --format
 * jsonl` to /dev/null, `diff` of the session with itself (and with another
 * one, --diff-with), `sessions`, and `report` to /dev/null.
 *
 * Usage: bench_viewer [--calls N] [--keep PATH] [--record-only] [--db PATH]
 *                     [--pitrace PATH] [--against PATH] [--rounds N]
 *                     [--only load,compact,show,stats,jsonl,diff,diffwith,sessions,report]
 *                     [--vary N] [--threads T] [--diff-with PATH]
 *   (--keep: leave the session there; --record-only: record it, time nothing,
 *   as bench_report.sh does; --db: time on that session instead of recording
 *   one; --pitrace: time that pitrace, e.g. another commit's build, and the
 *   bench_load beside it; --against: time that one too, its rounds
 *   alternating with this one's, the two side by side; --rounds: rounds of
 *   each (default 3); --only: those measurements only; --vary N: every N-th
 *   round of the loop passes another kernel argument value and, half-way
 *   between, queries another device property, for a session slightly
 *   different from the plain one; --threads T: the loop runs in T threads
 *   (at most 64), each on the same objects; --diff-with: also time `diff` of
 *   that session with this one, "diffwith", where exit 1 (different) counts
 *   as success)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pi/pi.h"

typedef bool (*wrap_fn)(const pi_plugin *, const char *, const char *, const char *,
                        pi_plugin *);

/* ---- The stand-in plugin ------------------------------------------------------------ */

static struct obj {
  int dummy;
} platform, device, context, queue, program, kernel, mem, events[4096];
static unsigned next_event;

static pi_result platforms_get(pi_uint32 n, pi_platform *out, pi_uint32 *count)
{
  if (count)
    *count = 1;
  if (n && out)
    out[0] = (pi_platform)&platform;
  return PI_SUCCESS;
}

static pi_result devices_get(pi_platform p, pi_device_type t, pi_uint32 n, pi_device *out,
                             pi_uint32 *count)
{
  (void)p;
  (void)t;
  if (count)
    *count = 1;
  if (n && out)
    out[0] = (pi_device)&device;
  return PI_SUCCESS;
}

static pi_result device_get_info(pi_device d, pi_device_info name, size_t size, void *value,
                                 size_t *ret)
{
  (void)d;
  static const char dev_name[] = "bench stand-in device";
  const void *src = &(pi_uint32){8};
  size_t n = sizeof(pi_uint32);
  if (name == PI_DEVICE_INFO_NAME) {
    src = dev_name;
    n = sizeof dev_name;
  }
  if (ret)
    *ret = n;
  if (value && size >= n)
    memcpy(value, src, n);
  return PI_SUCCESS;
}

static pi_result context_create(const pi_context_properties *props, pi_uint32 n,
                                const pi_device *devs, void (*notify)(const char *,
                                const void *, size_t, void *), void *user, pi_context *ret)
{
  (void)props;
  (void)n;
  (void)devs;
  (void)notify;
  (void)user;
  *ret = (pi_context)&context;
  return PI_SUCCESS;
}

static pi_result queue_create(pi_context c, pi_device d, pi_queue_properties *props,
                              pi_queue *ret)
{
  (void)c;
  (void)d;
  (void)props;
  *ret = (pi_queue)&queue;
  return PI_SUCCESS;
}

static pi_result buffer_create(pi_context c, pi_mem_flags f, size_t size, void *host,
                               pi_mem *ret, const pi_mem_properties *props)
{
  (void)c;
  (void)f;
  (void)size;
  (void)host;
  (void)props;
  *ret = (pi_mem)&mem;
  return PI_SUCCESS;
}

static pi_result program_create(pi_context c, pi_uint32 n, const char **src, const size_t *len,
                                pi_program *ret)
{
  (void)c;
  (void)n;
  (void)src;
  (void)len;
  *ret = (pi_program)&program;
  return PI_SUCCESS;
}

static pi_result program_build(pi_program p, pi_uint32 n, const pi_device *devs,
                               const char *opts, void (*notify)(pi_program, void *), void *user)
{
  (void)p;
  (void)n;
  (void)devs;
  (void)opts;
  (void)notify;
  (void)user;
  return PI_SUCCESS;
}

static pi_result kernel_create(pi_program p, const char *name, pi_kernel *ret)
{
  (void)p;
  (void)name;
  *ret = (pi_kernel)&kernel;
  return PI_SUCCESS;
}

static pi_result kernel_set_arg(pi_kernel k, pi_uint32 index, size_t size, const void *value)
{
  (void)k;
  (void)index;
  (void)size;
  (void)value;
  return PI_SUCCESS;
}

static pi_result launch(pi_queue q, pi_kernel k, pi_uint32 dim, const size_t *offset,
                        const size_t *global, const size_t *local, pi_uint32 n,
                        const pi_event *wait, pi_event *ev)
{
  (void)q;
  (void)k;
  (void)dim;
  (void)offset;
  (void)global;
  (void)local;
  (void)n;
  (void)wait;
  if (ev)
    *ev = (pi_event)&events[__atomic_fetch_add(&next_event, 1, __ATOMIC_RELAXED) % 4096];
  return PI_SUCCESS;
}

static pi_result buffer_rw(pi_queue q, pi_mem b, pi_bool blocking, size_t offset, size_t size,
                           void *ptr, pi_uint32 n, const pi_event *wait, pi_event *ev)
{
  (void)q;
  (void)b;
  (void)blocking;
  (void)offset;
  (void)n;
  (void)wait;
  if (ptr)
    memset(ptr, 0x5a, size);
  if (ev)
    *ev = NULL;
  return PI_SUCCESS;
}

static pi_result buffer_write(pi_queue q, pi_mem b, pi_bool blocking, size_t offset,
                              size_t size, const void *ptr, pi_uint32 n, const pi_event *wait,
                              pi_event *ev)
{
  (void)ptr;
  return buffer_rw(q, b, blocking, offset, size, NULL, n, wait, ev);
}

static pi_result event_release(pi_event e)
{
  (void)e;
  return PI_SUCCESS;
}

static pi_result queue_finish(pi_queue q)
{
  (void)q;
  return PI_SUCCESS;
}

static pi_result tear_down(void *p)
{
  (void)p;
  return PI_SUCCESS;
}

static void fill_table(pi_plugin *p)
{
  memset(p, 0, sizeof *p);
  snprintf(p->PiVersion, sizeof p->PiVersion, "%s", _PI_H_VERSION_STRING);
  snprintf(p->PluginVersion, sizeof p->PluginVersion, "%s", _PI_H_VERSION_STRING);
  struct pi_function_table *t = &p->PiFunctionTable;
  t->piPlatformsGet = platforms_get;
  t->piDevicesGet = devices_get;
  t->piDeviceGetInfo = device_get_info;
  t->piContextCreate = context_create;
  t->piextQueueCreate = queue_create;
  t->piMemBufferCreate = buffer_create;
  t->piclProgramCreateWithSource = program_create;
  t->piProgramBuild = program_build;
  t->piKernelCreate = kernel_create;
  t->piKernelSetArg = kernel_set_arg;
  t->piEnqueueKernelLaunch = launch;
  t->piEnqueueMemBufferWrite = buffer_write;
  t->piEnqueueMemBufferRead = buffer_rw;
  t->piEventRelease = event_release;
  t->piQueueFinish = queue_finish;
  t->piTearDown = tear_down;
}

/* ---- Recording the session ------------------------------------------------------------ */

/* One thread's share of the loop. */
typedef struct loop_arg {
  struct pi_function_table *t;
  pi_device dev;
  pi_queue q;
  pi_kernel k;
  pi_mem buf;
  long rounds, vary;
} loop_arg;

static void *loop(void *p)
{
  const loop_arg *a = p;
  struct pi_function_table *t = a->t;
  size_t global = 1024;
  unsigned char data[64] = {1, 2, 3, 4};
  pi_uint32 units;
  for (long round = 1; round <= a->rounds; round++) {
    pi_event ev;
    int value = a->vary && round % a->vary == 0 ? 8 : 7;
    pi_device_info query = a->vary && round % a->vary == a->vary / 2
                               ? PI_DEVICE_INFO_MAX_CLOCK_FREQUENCY
                               : PI_DEVICE_INFO_MAX_COMPUTE_UNITS;
    t->piKernelSetArg(a->k, 0, sizeof value, &value);
    t->piKernelSetArg(a->k, 1, sizeof value, &value);
    t->piEnqueueKernelLaunch(a->q, a->k, 1, NULL, &global, NULL, 0, NULL, &ev);
    t->piEventRelease(ev);
    t->piEnqueueMemBufferWrite(a->q, a->buf, 1, 0, sizeof data, data, 0, NULL, NULL);
    t->piEnqueueMemBufferRead(a->q, a->buf, 1, 0, sizeof data, data, 0, NULL, NULL);
    t->piQueueFinish(a->q);
    t->piDeviceGetInfo(a->dev, query, sizeof units, &units, NULL);
  }
  return NULL;
}

static int record(const char *libdir, const char *db, long calls, long vary, int threads)
{
  char path[4300];
  snprintf(path, sizeof path, "%s/libpi_shim.so", libdir);
  setenv("SYCL_PI_RECORD", db, 1);
  setenv("SYCL_PI_RECORD_LABEL", "bench_viewer", 1);
  void *shim = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  wrap_fn wrap = shim ? (wrap_fn)(uintptr_t)dlsym(shim, "pitrace_shim_wrap") : NULL;
  pi_plugin target, out;
  fill_table(&target);
  if (!wrap || !wrap(&target, "bench_stand_in", "(in process)", "opencl", &out)) {
    fprintf(stderr, "bench_viewer: cannot wrap with the shim (%s)\n", shim ? "" : dlerror());
    return 2;
  }
  struct pi_function_table *t = &out.PiFunctionTable;
  pi_platform plat;
  pi_device dev;
  pi_context ctx;
  pi_queue q;
  pi_program prog;
  pi_kernel k;
  pi_mem buf;
  const char *src = "__kernel void bench_kernel(int v, __global int *o) { o[0] = v; }";
  size_t len = strlen(src);
  char name[64];
  t->piPlatformsGet(1, &plat, NULL);
  t->piDevicesGet(plat, PI_DEVICE_TYPE_ALL, 1, &dev, NULL);
  t->piDeviceGetInfo(dev, PI_DEVICE_INFO_NAME, sizeof name, name, NULL);
  t->piContextCreate(NULL, 1, &dev, NULL, NULL, &ctx);
  t->piextQueueCreate(ctx, dev, (pi_queue_properties[]){0}, &q);
  t->piMemBufferCreate(ctx, PI_MEM_FLAGS_ACCESS_RW, 4096, NULL, &buf, NULL);
  t->piclProgramCreateWithSource(ctx, 1, &src, &len, &prog);
  t->piProgramBuild(prog, 1, &dev, "", NULL, NULL);
  t->piKernelCreate(prog, "bench_kernel", &k);
  long made = 10; /* the setup calls and the final piTearDown */
  /* The loop's rounds of 8 calls, shared by the threads (the first takes
   * what does not divide). */
  long rounds = (calls - made) / 8;
  pthread_t tid[64];
  loop_arg args[64];
  for (int i = 0; i < threads; i++) {
    args[i] = (loop_arg){t, dev, q, k, buf, rounds / threads + (i ? 0 : rounds % threads), vary};
    if (i && pthread_create(&tid[i], NULL, loop, &args[i]) != 0)
      return 2;
  }
  loop(&args[0]);
  for (int i = 1; i < threads; i++)
    pthread_join(tid[i], NULL);
  made += 8 * rounds;
  while (made++ < calls)
    t->piQueueFinish(q);
  t->piTearDown(NULL); /* closes the session once everything is stored */
  return 0;
}

/* ---- Timing the verbs ---------------------------------------------------------------- */

static double now_s(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Runs argv with stdout to /dev/null; the wall time (-1 when it failed:
 * an exit status other than 0 or `also_ok`), the CPU time (user + system)
 * it took and its largest resident size (MiB). */
static double timed_run(char *const *argv, int also_ok, double *cpu, double *rss)
{
  double t0 = now_s();
  pid_t pid = fork();
  if (pid == 0) {
    int fd = open("/dev/null", O_WRONLY);
    dup2(fd, 1);
    execv(argv[0], argv);
    _exit(127);
  }
  int status = 0;
  struct rusage ru;
  wait4(pid, &status, 0, &ru);
  double t = now_s() - t0;
  *cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
  *rss = (double)ru.ru_maxrss / 1024;
  bool ok = WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == also_ok);
  return ok ? t : -1;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* What is timed: its key for --only, its label and its arguments after
 * the program (DB: the session, OTHER: --diff-with's; the session is the
 * last argument too; load's program is bench_load). */
static const struct measure {
  const char *key, *label;
  const char *args[4];
} measures[] = {
    {"load", "replay's load (bench_load)", {NULL}},
    {"compact", "show --compact", {"show", "--compact", NULL}},
    {"show", "show", {"show", NULL}},
    {"stats", "stats", {"stats", NULL}},
    {"jsonl", "export --format jsonl", {"export", "--format", "jsonl", NULL}},
    {"diff", "diff (the session with itself)", {"diff", "DB", NULL}},
    {"diffwith", "diff (--diff-with's session with it)", {"diff", "OTHER", NULL}},
    {"sessions", "sessions", {"sessions", NULL}},
    {"report", "report -o - (to /dev/null)", {"report", "-o", "-", NULL}},
};
#define NMEASURES (sizeof measures / sizeof *measures)

/* The medians of one program's rounds of one measure (wall -1: a round
 * failed). */
typedef struct figures {
  double wall, cpu, rss;
} figures;

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The argv of measure m for the pitrace at `pitrace` (bench_load beside it
 * for load) on db; label and program in the caller's buffers. */
static void measure_argv(const struct measure *m, const char *pitrace, const char *db,
                         const char *diff_with, char *prog, size_t progn, char **argv)
{
  snprintf(prog, progn, "%s", pitrace);
  if (strcmp(m->key, "load") == 0) {
    char *slash = strrchr(prog, '/');
    snprintf(slash ? slash + 1 : prog, progn - (size_t)(slash ? slash + 1 - prog : 0),
             "bench_load");
  }
  int n = 0;
  argv[n++] = prog;
  for (int i = 0; i < 4 && m->args[i]; i++)
    argv[n++] = strcmp(m->args[i], "DB") == 0      ? (char *)db
                : strcmp(m->args[i], "OTHER") == 0 ? (char *)diff_with
                                                   : (char *)m->args[i];
  argv[n++] = (char *)db;
  argv[n] = NULL;
}

/* Whether `key` is one of the comma-separated names in `list`. */
static bool in_list(const char *list, const char *key)
{
  size_t n = strlen(key);
  for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (strncmp(p, key, n) == 0 && (p[n] == ',' || p[n] == '\0'))
      return true;
  return false;
}

static void print_figures(const figures *f, long calls)
{
  if (f->wall < 0)
    printf(" failed | | | |");
  else
    printf(" %.2f | %.2f | %.0f | %.2f M |", f->wall, f->cpu, f->rss,
           (double)calls / f->wall / 1e6);
}

/* Times the measures `only` names (NULL: all) of `pitrace`, and of
 * `against` (NULL: none) in alternating rounds; one table row per measure.
 * The failures. */
static int time_verbs(const char *pitrace, const char *against, const char *db,
                      const char *diff_with, long calls, int rounds, const char *only)
{
  const char *progs[2] = {pitrace, against};
  int nprogs = against ? 2 : 1, failures = 0;
  printf("Medians of %d rounds; %s: %s\n", rounds, against ? "A" : "pitrace", pitrace);
  if (against)
    printf("B: %s (its rounds alternating with A's)\n", against);
  printf("\n");
  if (against)
    printf("| what | A wall s | A CPU s | A max RSS MiB | A calls/s | B wall s | B CPU s | "
           "B max RSS MiB | B calls/s |\n|---|---|---|---|---|---|---|---|---|\n");
  else
    printf("| what | wall s | CPU s (user + sys) | max RSS MiB | calls/s |\n"
           "|---|---|---|---|---|\n");
  for (size_t v = 0; v < NMEASURES; v++) {
    const struct measure *m = &measures[v];
    bool other = strcmp(m->key, "diffwith") == 0;
    if ((only && !in_list(only, m->key)) || (other && !diff_with))
      continue;
    double t[2][64], cpu[2][64], rss[2][64];
    figures f[2];
    bool failed[2] = {false, false};
    for (int r = 0; r < rounds; r++)
      for (int k = 0; k < nprogs; k++) {
        char prog[4300], *argv[8];
        measure_argv(m, progs[k], db, diff_with, prog, sizeof prog, argv);
        t[k][r] = timed_run(argv, other ? 1 : 0, &cpu[k][r], &rss[k][r]);
        failed[k] |= t[k][r] < 0;
      }
    printf("| %s |", m->label);
    for (int k = 0; k < nprogs; k++) {
      f[k] = (figures){failed[k] ? -1 : median(t[k], rounds), median(cpu[k], rounds),
                       median(rss[k], rounds)};
      failures += failed[k];
      print_figures(&f[k], calls);
    }
    printf("\n");
    fflush(stdout);
  }
  return failures;
}

int main(int argc, char **argv)
{
  long calls = 1000000;
  long vary = 0;
  int threads = 1;
  const char *keep = NULL, *given = NULL, *other = NULL, *against = NULL, *only = NULL,
             *diff_with = NULL;
  bool record_only = false;
  int rounds = 3;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--record-only") == 0)
      record_only = true;
    else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
      calls = atol(argv[++i]);
    else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
      keep = argv[++i];
    else if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
      given = argv[++i];
    else if (strcmp(argv[i], "--pitrace") == 0 && i + 1 < argc)
      other = argv[++i];
    else if (strcmp(argv[i], "--against") == 0 && i + 1 < argc)
      against = argv[++i];
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
      only = argv[++i];
    else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "--vary") == 0 && i + 1 < argc)
      vary = atol(argv[++i]);
    else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc && atoi(argv[i + 1]) >= 1 &&
             atoi(argv[i + 1]) <= 64)
      threads = atoi(argv[++i]);
    else if (strcmp(argv[i], "--diff-with") == 0 && i + 1 < argc)
      diff_with = argv[++i];
    else {
      fprintf(stderr, "usage: bench_viewer [--calls N] [--keep PATH] [--record-only] "
                      "[--db PATH] [--pitrace PATH] [--against PATH] [--rounds N] "
                      "[--only load,compact,show,stats,jsonl,diff,diffwith,sessions,report] "
                      "[--vary N] [--threads T] [--diff-with PATH]\n");
      return 2;
    }
  }
  if (rounds < 1 || rounds > 64) {
    fprintf(stderr, "bench_viewer: --rounds takes 1 to 64\n");
    return 2;
  }
  if (calls < 16)
    calls = 16;
  char self[4096], dir[4096], libdir[4200], pitrace[4200];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return 2;
  self[n] = 0;
  snprintf(dir, sizeof dir, "%s", self);
  *strrchr(dir, '/') = 0;
  snprintf(libdir, sizeof libdir, "%s/../lib", dir);
  snprintf(pitrace, sizeof pitrace, "%s/pitrace", dir);
  if (other)
    snprintf(pitrace, sizeof pitrace, "%s", other);
  if (given) {
    if (access(given, R_OK) != 0) {
      fprintf(stderr, "bench_viewer: cannot read the session %s: %s\n", given, strerror(errno));
      return 2;
    }
    printf("Session: %s\n", given);
    return time_verbs(pitrace, against, given, diff_with, calls, rounds, only) ? 1 : 0;
  }
  char db[4096] = "/tmp/pitrace-bench-viewer-XXXXXX";
  if (keep)
    snprintf(db, sizeof db, "%s", keep);
  else
    close(mkstemp(db));
  unlink(db);

  double t0 = now_s();
  pid_t pid = fork();
  if (pid == 0)
    _exit(record(libdir, db, calls, vary, threads));
  int status = 0;
  waitpid(pid, &status, 0);
  struct stat st;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || stat(db, &st) != 0) {
    fprintf(stderr, "bench_viewer: recording the session failed\n");
    return 2;
  }
  printf("Session: %ld calls recorded in %.2f s, %.1f MB (%s)\n", calls, now_s() - t0,
         (double)st.st_size / 1e6, db);
  if (record_only && keep)
    return 0;
  int failures =
      record_only ? 0 : time_verbs(pitrace, against, db, diff_with, calls, rounds, only);
  if (!keep)
    unlink(db);
  return failures ? 1 : 0;
}
