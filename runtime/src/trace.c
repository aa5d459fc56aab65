/*
 * trace.c: SYCL_PI_TRACE.
 *
 * Level bits: 1 = discovery, binding and device selection; 2 = every PI call
 * with its arguments, result and out-values, in DPC++'s "---> piXxx(" shape;
 * -1 = everything plus debug lines. SYCL_PI_TRACE_FILE=path appends to a
 * file instead of stdout.
 *
 * Each block is formatted into the calling thread's buffer and written with
 * one write(2), so blocks from different threads never tear and no lock is
 * held across the plugin call. The entry block is written before the call,
 * so a call that crashes or hangs still shows. Once a second thread makes PI
 * calls, blocks carry a " [thread N]" tag so entries and exits can be paired.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pirt_internal.h"

int pirt_trace_level;
bool pirt_trace_calls;

static int trace_fd = -1;
static bool trace_fd_owned;
static atomic_uint thread_counter;
static atomic_bool multi_thread;
static __thread unsigned thread_id;

void pirt_trace_init(void)
{
  const char *lv = getenv("SYCL_PI_TRACE");
  pirt_trace_level = 0;
  if (lv && *lv) {
    char *end;
    long v = strtol(lv, &end, 0);
    if (*end) {
      fprintf(stderr, "pitrace: SYCL_PI_TRACE=%s is not a number "
                      "(use 1, 2 or -1); tracing is off\n", lv);
      v = 0;
    }
    pirt_trace_level = v == -1 ? (PIRT_TRACE_BASIC | PIRT_TRACE_CALLS |
                                  PIRT_TRACE_DEBUG)
                               : (int)v;
  }
  trace_fd = STDOUT_FILENO;
  trace_fd_owned = false;
  const char *file = getenv("SYCL_PI_TRACE_FILE");
  if (pirt_trace_level && file && *file) {
    int fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0)
      fprintf(stderr, "pitrace: cannot open SYCL_PI_TRACE_FILE=%s: %s; "
                      "tracing to stdout\n", file, strerror(errno));
    else {
      trace_fd = fd;
      trace_fd_owned = true;
    }
  }
  pirt_trace_calls = (pirt_trace_level & PIRT_TRACE_CALLS) != 0;
}

void pirt_trace_fini(void)
{
  pirt_trace_calls = false;
  if (trace_fd_owned)
    close(trace_fd);
  trace_fd = -1;
  trace_fd_owned = false;
}

/* Writes the whole block; stdout's stdio buffer is flushed first so the
 * trace keeps its place among the application's own output. */
static void emit(const char *s, size_t n)
{
  if (trace_fd < 0)
    return;
  if (trace_fd == STDOUT_FILENO)
    fflush(stdout);
  while (n) {
    ssize_t w = write(trace_fd, s, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      return; /* a full disk or closed pipe must not hurt the application */
    }
    s += w;
    n -= (size_t)w;
  }
}

void pirt_trace(int level, const char *fmt, ...)
{
  if (!(pirt_trace_level & level))
    return;
  char store[1024];
  pi_sbuf b;
  pi_sbuf_init(&b, store, sizeof store);
  pi_sbuf_puts(&b, level == PIRT_TRACE_DEBUG ? "SYCL_PI_TRACE[debug]: "
                                             : "SYCL_PI_TRACE[basic]: ");
  va_list ap;
  va_start(ap, fmt);
  pi_sbuf_vprintf(&b, fmt, ap);
  va_end(ap);
  pi_sbuf_puts(&b, "\n");
  emit(b.p, b.len);
  pi_sbuf_free(&b);
}

/* " [thread N]" once more than one thread has made calls, else NULL. */
static const char *thread_tag(char *buf, size_t n)
{
  if (!thread_id) {
    thread_id = atomic_fetch_add(&thread_counter, 1) + 1;
    if (thread_id > 1)
      atomic_store(&multi_thread, true);
  }
  if (!atomic_load(&multi_thread))
    return NULL;
  snprintf(buf, n, " [thread %u]", thread_id);
  return buf;
}

void pirt_trace_enter(const struct pirt_plugin *pl, pi_api_id id,
                      const uint64_t *argv)
{
  (void)pl;
  char store[2048], tagbuf[32];
  pi_sbuf b;
  pi_sbuf_init(&b, store, sizeof store);
  pi_format_call_enter(&b, &pi_api_table[id], argv,
                       thread_tag(tagbuf, sizeof tagbuf));
  emit(b.p, b.len);
  pi_sbuf_free(&b);
}

void pirt_trace_exit(const struct pirt_plugin *pl, pi_api_id id,
                     const uint64_t *argv, pi_result r)
{
  (void)pl;
  char store[2048], tagbuf[32];
  pi_sbuf b;
  pi_sbuf_init(&b, store, sizeof store);
  pi_format_call_exit(&b, &pi_api_table[id], argv, r,
                      thread_tag(tagbuf, sizeof tagbuf));
  pi_sbuf_puts(&b, "\n");
  emit(b.p, b.len);
  pi_sbuf_free(&b);
}
