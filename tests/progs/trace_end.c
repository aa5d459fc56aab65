/*
 * trace_end: a program for test_trace that makes traced PI calls and then
 * ends the ways that skip atexit and destructors, to check that the
 * buffered trace file still has every line:
 *
 *   trace_end exit N      N device queries, then _exit(7)
 *   trace_end crash N     N device queries, then a query whose answer goes
 *                         to an invalid address: SIGSEGV inside the call
 *   trace_end abort N     N device queries, then abort() (a failed assert)
 *   trace_end badhost N   N device queries, then a buffer made from host data
 *                         at an invalid address: SIGSEGV as the bytes are read
 *   trace_end badbig N    the same with 1 MiB (the recorder's payload file)
 *   trace_end badprops N  N device queries, then a queue made through PI with
 *                         its property list at an invalid address
 *   trace_end fsize N     a file size limit of 100000 bytes set after the
 *                         first call (the trace does not know it), then N
 *                         device queries; returns
 *   trace_end alarms N    N device queries while a timer raises SIGALRM every
 *                         100 us, which a handler of its own counts
 *                         (installed with signal(): SA_RESTART); returns
 *   trace_end forkkill N  a child makes N device queries, waits 500 ms and
 *                         kills itself (SIGKILL); the parent waits for it
 *   trace_end exitbusy N  N threads make device queries without end (failing
 *                         ones too: after the runtime's shutdown); the main
 *                         thread returns from main after 100 ms
 *   trace_end exitinfo N  the same with pirt_device_get_info, which calls no
 *                         plugin (each reads the device's name and plugin's)
 *   trace_end exitabort N the same as exitbusy, but a thread whose query fails
 *                         (the runtime's shutdown closed it) calls abort(), as
 *                         a program that asserts on every call does
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pirt.h"
#include "pirt_pi.h"

static atomic_int alarms;
static void count_alarm(int sig)
{
  (void)sig;
  atomic_fetch_add(&alarms, 1);
}

static pirt_device *dev;

static void *info_forever(void *arg)
{
  (void)arg;
  size_t n = 0;
  for (;;) {
    pirt_device_info info;
    if (pirt_device_get_info(dev, &info) == PI_SUCCESS)
      n += strlen(info.name) + strlen(info.plugin);
  }
  return (void *)n;
}

static void *query_forever(void *arg)
{
  (void)arg;
  for (;;) {
    pi_uint32 units = 0;
    pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
  }
  return NULL;
}

static void *query_or_abort(void *arg)
{
  (void)arg;
  for (;;) {
    pi_uint32 units = 0;
    if (pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units,
                          NULL) != PI_SUCCESS)
      abort();
  }
  return NULL;
}

static int queries(int n)
{
  for (int i = 0; i < n; i++) {
    pi_uint32 units = 0;
    if (pirt_device_query(dev, PI_DEVICE_INFO_MAX_COMPUTE_UNITS, sizeof units, &units,
                          NULL) != PI_SUCCESS) {
      fprintf(stderr, "trace_end: %s\n", pirt_error_message());
      return 2;
    }
  }
  return 0;
}

int main(int argc, char **argv)
{
  const char *modes[] = {"exit",     "crash",  "abort",  "badhost",  "badbig",   "badprops",
                         "fsize",    "alarms", "forkkill", "exitbusy", "exitinfo", "exitabort"};
  bool known = false;
  for (size_t i = 0; argc == 3 && i < sizeof modes / sizeof *modes; i++)
    known |= strcmp(argv[1], modes[i]) == 0;
  if (!known) {
    fprintf(stderr, "usage: trace_end exit|crash|abort|badhost|badbig|badprops|fsize|"
                    "alarms|forkkill|exitbusy|exitinfo|exitabort N\n");
    return 2;
  }
  int n = atoi(argv[2]);
  if (pirt_device_select(NULL, &dev) != PI_SUCCESS) {
    fprintf(stderr, "trace_end: %s\n", pirt_error_message());
    return 2;
  }
  if (strcmp(argv[1], "alarms") == 0) {
    signal(SIGALRM, count_alarm);
    struct itimerval every = {{0, 100}, {0, 100}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &every, NULL);
    int bad = queries(n);
    setitimer(ITIMER_REAL, &off, NULL);
    printf("trace_end: %d queries, %d alarms\n", n, atomic_load(&alarms));
    return bad;
  }
  if (strcmp(argv[1], "forkkill") == 0) {
    pid_t c = fork();
    if (c == 0) {
      queries(n);
      struct timespec half = {0, 500000000};
      nanosleep(&half, NULL);
      kill(getpid(), SIGKILL);
    }
    int st = 0;
    if (c < 0 || waitpid(c, &st, 0) != c || !WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
      return 2;
    printf("trace_end: the child made %d queries and was killed\n", n);
    return 0;
  }
  if (strncmp(argv[1], "exit", 4) == 0 && argv[1][4]) {
    void *(*fn)(void *) = argv[1][4] == 'b' ? query_forever
                          : argv[1][4] == 'i' ? info_forever : query_or_abort;
    for (int i = 0; i < n; i++) {
      pthread_t t;
      if (pthread_create(&t, NULL, fn, NULL) != 0)
        return 2;
    }
    struct timespec wait = {0, 100000000};
    nanosleep(&wait, NULL);
    printf("trace_end: %d threads still querying at the end\n", n);
    return 0;
  }
  if (strcmp(argv[1], "fsize") == 0) {
    struct rlimit lim = {100000, 100000};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
      return 2;
    return queries(n);
  }
  if (queries(n))
    return 2;
  if (strcmp(argv[1], "exit") == 0)
    _exit(7);
  if (strcmp(argv[1], "abort") == 0)
    abort();
  if (strcmp(argv[1], "badprops") == 0) {
    const pirt_plugin *pl;
    pi_platform plat;
    pi_device d;
    pi_context c;
    pi_queue q;
    if (pirt_device_plugin(dev, &pl, &plat, &d, NULL) != PI_SUCCESS ||
        pirt_piContextCreate(pl, NULL, 1, &d, NULL, NULL, &c) != PI_SUCCESS)
      return 2;
    /* The trace, the recorder and the plugin read the list here. */
    pirt_piextQueueCreate(pl, c, d, (pi_queue_properties *)(uintptr_t)64, &q);
    return 0;
  }
  if (strncmp(argv[1], "bad", 3) == 0) {
    pirt_context *ctx;
    pirt_buffer *buf;
    if (pirt_context_create(dev, &ctx) != PI_SUCCESS)
      return 2;
    /* The trace shows these bytes, the recorder and the plugin copy them:
     * 4096 or 1 MiB from 0x40. */
    size_t size = argv[1][3] == 'h' ? 4096 : (size_t)1 << 20;
    pirt_buffer_create(ctx, PIRT_MEM_COPY_HOST, size, (void *)(uintptr_t)64, &buf);
    return 0;
  }
  /* The plugin writes the answer to this address. */
  pirt_device_query(dev, PI_DEVICE_INFO_VENDOR_ID, sizeof(pi_uint32),
                    (void *)(uintptr_t)16, NULL);
  return 0;
}
