/*
 * trace.c: SYCL_PI_TRACE.
 *
 * Level bits: 1 = discovery, binding and device selection; 2 = every PI call
 * with its arguments, result and out-values, in DPC++'s "---> piXxx(" shape;
 * -1 = everything plus debug lines. SYCL_PI_TRACE_FILE=path appends to a
 * file instead of stdout.
 *
 * Each block is formatted into the calling thread's buffer, whole, and no
 * lock is held across the plugin call. Once a second thread makes PI calls,
 * blocks carry a " [thread N]" tag so entries and exits can be paired (a
 * forked child's always carry " [pid P thread N]").
 *
 * Where the block goes:
 * - stdout, or a file that is not a regular file (a terminal, a pipe): one
 *   write(2) per block, at once, so the trace keeps its place among the
 *   application's own output and a reader of the pipe sees each call as it
 *   happens.
 * - a regular file: each thread appends its blocks to a buffer of its own
 *   (64 KiB, behind a per-thread lock that only the flusher ever contends),
 *   written with one write(2) when full, at the thread's exit, every 100 ms
 *   by a background flusher, at teardown, on a fatal signal (the crashing
 *   call's entry included; one that faulted as its bytes were shown, too,
 *   wherever the trace goes: write_forming) and at _exit (libpirt
 *   interposes _exit and _Exit: the buffers are written, then the process
 *   exits as libc's would).
 *   Buffers hold whole blocks only, so the file holds whole blocks; blocks
 *   of different threads interleave by buffer, not by time (the tag says
 *   whose each is). What is lost: at most the last 100 ms of a process
 *   killed by SIGKILL or ending by a raw exit_group system call, and, where
 *   libpirt is loaded with dlopen (the OpenCL front end), at _exit.
 *
 * A write that fails (a full disk, a file size limit, a pipe whose reader
 * left) drops its blocks and never hurts the application (SIGXFSZ and
 * SIGPIPE are blocked around it; blocks that would pass the file size
 * limit are left out whole); the first failure is said once on stderr,
 * from the next place that is no signal handler (a failure in the last
 * write at a crash or _exit goes unsaid). A signal the application handles
 * and goes on after (a timer's) writes nothing: the flusher does. A forked
 * child has a flusher of its own from its first block. Once its handlers
 * are in, libpirt stays loaded (pi_pin_library_of). At the runtime's end
 * with other threads still alive (global.c), the buffers are written and
 * kept, and later blocks go to the file at once.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pi_signals.h"
#include "pi_thread.h"
#include "pirt_internal.h"

int pirt_trace_level;
bool pirt_trace_calls;

static int trace_fd = -1;
static bool trace_fd_owned;
static atomic_uint thread_counter;
static atomic_bool multi_thread;
static pthread_mutex_t multi_lock = PTHREAD_MUTEX_INITIALIZER; /* the switch to tags */
static __thread unsigned thread_id;
static __thread char my_tag[48]; /* " [thread N]", made once */
/* In a forked child: its pid, which every block's tag carries (" [pid P
 * thread N]"), since the child's blocks go into the file its parent
 * writes (between a parent's entry and its exit, untagged, they read as
 * the parent's); 0 in the process that began the trace. */
static pid_t child_pid;

/* ---- Buffered blocks (a regular trace file) ------------------------------- */

#define TRACE_BUF_SIZE (64u << 10)
#define FLUSH_EVERY_NS 100000000L

typedef struct trace_buf {
  atomic_int lock;     /* the owner's, and the flusher's now and then */
  atomic_int owned;    /* a live thread writes into it */
  _Atomic size_t len;  /* bytes of whole blocks in data */
  struct trace_buf *next;
  char data[TRACE_BUF_SIZE];
} trace_buf;

static bool trace_buffered;          /* the trace file is a regular file */
static _Atomic(trace_buf *) all_bufs; /* every buffer, owned or free */
static atomic_uint trace_gen;        /* a new one at each init: buffers of an
                                        earlier runtime are not ours */
static __thread trace_buf *my_buf;
/* The buffer this thread holds the lock of (NULL: none): a signal handler
 * that runs on the thread must not wait for it. */
static __thread trace_buf *my_locked;
static __thread unsigned my_gen;
static pid_t trace_pid;              /* the process the buffers belong to */
static pthread_key_t buf_key;
static bool buf_key_made;
static atomic_bool flusher_started;
static pi_thread flusher;
static pthread_mutex_t flusher_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t flusher_cond = PTHREAD_COND_INITIALIZER;
static bool flusher_stop;

/* Where the trace goes, as the user named it (for the message below). */
static char trace_name[4200]; /* a path up to PATH_MAX, said whole */
/* The first write that failed, its errno (0: none), and whether that was
 * said: a full disk or a closed file must not hurt the application, but
 * a trace that lacks blocks is said to once, on stderr. */
static atomic_int write_errno;
static atomic_bool write_failure_said;
/* The process's file size limit at the start (RLIMIT_FSIZE; 0: none). */
static uint64_t size_limit;

static void write_failed(int e)
{
  int none = 0;
  atomic_compare_exchange_strong(&write_errno, &none, e ? e : EIO);
}

/* Writes all of s (errors drop the block and are remembered for
 * say_write_failure). Async-signal-safe. A write past the file size limit
 * would raise SIGXFSZ and a write into a pipe nobody reads SIGPIPE, each
 * ending the application by default: both are blocked around the write
 * and a signal it raised is taken back (one pending before stays). Blocks
 * that would pass the limit are dropped whole, not cut, and so are those
 * of a regular file's write cut short (a full disk). */
static void write_all(int fd, const char *s, size_t n)
{
  struct stat st;
  bool sized = trace_buffered && fstat(fd, &st) == 0;
  if (size_limit && sized && (uint64_t)st.st_size + n > size_limit) {
    write_failed(EFBIG);
    return;
  }
  size_t done = 0;
  sigset_t quiet, old, before;
  sigemptyset(&quiet);
  sigaddset(&quiet, SIGPIPE);
  sigaddset(&quiet, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &quiet, &old);
  sigpending(&before);
  while (n) {
    ssize_t w = write(fd, s, n);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      int e = errno;
      for (int k = 0; k < 2; k++) {
        int sig = k ? SIGXFSZ : SIGPIPE;
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, sig);
        struct timespec none = {0, 0};
        if (!sigismember(&before, sig))
          while (sigtimedwait(&one, NULL, &none) == sig)
            ;
      }
      /* A write cut short (a full disk) left the file ending inside a
       * block: what it wrote is taken back, where nothing came after it. */
      struct stat now;
      if (done && sized && fstat(fd, &now) == 0 &&
          now.st_size == st.st_size + (off_t)done)
        (void)!ftruncate(fd, st.st_size);
      write_failed(e);
      break;
    }
    s += w;
    n -= (size_t)w;
    done += (size_t)w;
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Says once that the trace lacks blocks, after a write failed: from the
 * places that are no signal handler (a buffer full, the flusher, a
 * block written at once, the end). One relaxed load when nothing failed. */
static void say_write_failure(void)
{
  int e = atomic_load_explicit(&write_errno, memory_order_relaxed);
  if (PIRT_LIKELY(!e) || atomic_exchange(&write_failure_said, true))
    return;
  fprintf(stderr, "pitrace: writing the trace to %s failed (%s): blocks from then on are "
                  "missing from it; the application goes on\n", trace_name, strerror(e));
}

/* The per-thread lock: uncontended but for the flusher's visit. `tries`
 * bounds the wait (0: no bound); false when not taken. */
static bool buf_lock(trace_buf *b, unsigned tries)
{
  for (unsigned i = 0; atomic_exchange_explicit(&b->lock, 1, memory_order_acquire); i++) {
    if (tries && i >= tries)
      return false;
    if (i >= 64)
      sched_yield();
  }
  return true;
}

static void buf_unlock(trace_buf *b)
{
  atomic_store_explicit(&b->lock, 0, memory_order_release);
}

/* Writes out a buffer's blocks; the caller holds its lock. Emptied
 * before the write: a signal handler on this thread that writes the
 * buffers while it writes finds nothing of it to write twice. */
static void buf_drain(trace_buf *b)
{
  size_t n = atomic_load_explicit(&b->len, memory_order_relaxed);
  atomic_store_explicit(&b->len, 0, memory_order_relaxed);
  atomic_signal_fence(memory_order_seq_cst);
  if (n && trace_fd >= 0)
    write_all(trace_fd, b->data, n);
}

/* The lock of this thread's own buffer (emit, thread_done), known to its
 * signal handlers. */
static void own_lock(trace_buf *b)
{
  buf_lock(b, 0);
  my_locked = b;
  atomic_signal_fence(memory_order_seq_cst);
}

static void own_unlock(trace_buf *b)
{
  my_locked = NULL;
  atomic_signal_fence(memory_order_seq_cst);
  buf_unlock(b);
}

/* Writes out every thread's buffer, in list order. */
static void flush_all(void)
{
  for (trace_buf *b = atomic_load(&all_bufs); b; b = b->next)
    if (atomic_load_explicit(&b->len, memory_order_relaxed)) {
      buf_lock(b, 0);
      buf_drain(b);
      buf_unlock(b);
    }
}

/* A thread ends: its blocks are written, its buffer is free for another. */
static void thread_done(void *p)
{
  trace_buf *b = p;
  /* Not when done already (pirt_trace_thread_ends): the buffer may be
   * another thread's by now. */
  if (!b || b != my_buf || my_gen != atomic_load(&trace_gen))
    return;
  own_lock(b);
  buf_drain(b);
  own_unlock(b);
  atomic_store(&b->owned, 0);
  my_buf = NULL;
}

void pirt_trace_thread_ends(void)
{
  if (trace_buffered && my_buf)
    thread_done(my_buf);
}

static void *flusher_main(void *arg)
{
  (void)arg;
  pthread_mutex_lock(&flusher_lock);
  while (!flusher_stop) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += FLUSH_EVERY_NS;
    if (t.tv_nsec >= 1000000000L) {
      t.tv_sec++;
      t.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&flusher_cond, &flusher_lock, &t);
    if (!flusher_stop) {
      flush_all();
      say_write_failure();
    }
  }
  pthread_mutex_unlock(&flusher_lock);
  return NULL;
}

/* Fatal signals (pi_signals.h): the buffers are written (the crashing call's entry is in
 * one), then the signal goes on to the handler that was there before, or
 * its default action. Only async-signal-safe calls here. */
static struct sigaction previous[PI_NFATAL];
/* Read by every thread's calls that may start an implementation. */
static atomic_bool handlers_installed;

/* Writes every buffer as the process ends (a fatal signal, _exit): the
 * buffer whose lock the interrupted thread itself holds is not waited for
 * (its whole blocks are written: nothing more will be added to it), nor
 * is a lock another thread holds too long. */
static void flush_all_now(void)
{
  if (!trace_buffered || trace_fd < 0 || getpid() != trace_pid)
    return;
  for (trace_buf *b = atomic_load(&all_bufs); b; b = b->next) {
    size_t n = atomic_load_explicit(&b->len, memory_order_acquire);
    if (!n)
      continue;
    if (b != my_locked && buf_lock(b, 100000)) {
      buf_drain(b);
      buf_unlock(b);
    } else {
      atomic_store_explicit(&b->len, 0, memory_order_relaxed);
      write_all(trace_fd, b->data, n);
    }
  }
}

void pirt_trace_flush_at_crash(void) { flush_all_now(); }

/* The block this thread is formatting, while it does (pirt_trace_enter,
 * pirt_trace_exit). A call given memory at a bad address (a host pointer
 * of 0x40) faults inside the formatter as it shows the bytes, before the
 * block is written: the handler writes what was formatted, saying where
 * it stopped, so the crashing call's entry is in the trace. Reading the
 * bytes through process_vm_readv instead (EFAULT, no fault) costs two
 * system calls on every traced call that shows bytes. */
static __thread pi_sbuf *volatile forming;

static void write_forming(int sig, const siginfo_t *info)
{
  pi_sbuf *b = forming;
  forming = NULL;
  if (!b || trace_fd < 0 || (sig != SIGSEGV && sig != SIGBUS) || !info || info->si_code <= 0)
    return;
  static const char note[] = " <unreadable: the process faulted reading this>\n";
  write_all(trace_fd, b->p, b->len);
  write_all(trace_fd, note, sizeof note - 1);
}

static void on_fatal(int sig, siginfo_t *info, void *ctx)
{
  int saved_errno = errno;
  size_t k = 0;
  while (k < PI_NFATAL && pi_fatal_signals[k] != sig)
    k++;
  if (k == PI_NFATAL)
    return;
  struct sigaction *prev = &previous[k];
  if (pi_sigaction_ignores(prev)) {
    errno = saved_errno;
    return;
  }
  if (pi_sigaction_handles(prev) && pi_signal_may_go_on(sig)) {
    /* The application's handler, after which the program may go on: the
     * buffers stay for the flusher (written here, a timer's signal 10 times
     * a second cost a program twenty times its run in waits for its own
     * buffer's lock, and wrote blocks twice); if it ends the process, it
     * does so through exit or _exit, which write them. */
    errno = saved_errno;
    pi_sigaction_chain(prev, sig, info, ctx);
    return;
  }
  flush_all_now();
  write_forming(sig, info);
  errno = saved_errno;
  if (pi_sigaction_handles(prev)) {
    pi_sigaction_chain(prev, sig, info, ctx);
    return;
  }
  /* The default action: raised again, it ends the process once this
   * handler returns (a fault would also come back by itself). */
  signal(sig, SIG_DFL);
  raise(sig);
}

/* Ours in front again (front_prev: the handler it went in front of).
 * An implementation starting in a call installs handlers of its own over
 * ours (LLVM's in PoCL and rusticl): on abort() LLVM's put ours back and
 * returned, and abort() then raised SIGABRT under the default action:
 * ours never ran, and a traced program that failed an assert lost every
 * block still buffered (often the whole trace). After the calls that may
 * start one, ours goes in front of whatever is over it (not ignored
 * signals), through on_fatal_front. */
static struct sigaction front_prev[PI_NFATAL];

static void on_fatal_front(int sig, siginfo_t *info, void *ctx)
{
  static __thread int passing_on; /* the signal this thread hands on now */
  size_t k = 0;
  while (k < PI_NFATAL && pi_fatal_signals[k] != sig)
    k++;
  if (k == PI_NFATAL)
    return;
  if (passing_on == sig) { /* handed back to us by the handler we called */
    on_fatal(sig, info, ctx);
    return;
  }
  if (!pi_signal_may_go_on(sig)) { /* a fault or abort ends the process: written first */
    int saved_errno = errno;
    flush_all_now();
    write_forming(sig, info);
    errno = saved_errno;
  }
  passing_on = sig;
  pi_sigaction_chain(&front_prev[k], sig, info, ctx);
  passing_on = 0;
  /* The signal again, pending while this handler blocks it: the handler
   * we called put back the one it replaced and raised it (a handler of
   * Python faulthandler's kind): it is done with it; ours below (on_fatal)
   * takes it, not that handler again (which would go round for ever). */
  siginfo_t again;
  if (pi_signal_take_pending(sig, &again))
    on_fatal(sig, &again, ctx);
}

static bool ours(const struct sigaction *a)
{
  return (a->sa_flags & SA_SIGINFO) &&
         (a->sa_sigaction == on_fatal || a->sa_sigaction == on_fatal_front);
}

static void keep_in_front(void)
{
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&lock);
  for (size_t k = 0; atomic_load(&handlers_installed) && k < PI_NFATAL; k++) {
    struct sigaction cur;
    if (sigaction(pi_fatal_signals[k], NULL, &cur) == 0 && !ours(&cur) &&
        !pi_sigaction_ignores(&cur))
      pi_fatal_install(k, on_fatal_front, &front_prev[k]);
  }
  pthread_mutex_unlock(&lock);
}

static void install_handlers(void)
{
  /* libpirt then stays loaded after a dlclose (its runtime with it, ended
   * at exit): a handler installed over ours may hand signals on to it. */
  pi_pin_library_of((void *)on_fatal);
  for (size_t k = 0; k < PI_NFATAL; k++) {
    /* An ignored signal stays ignored (and so for the programs it execs). */
    struct sigaction cur;
    if (sigaction(pi_fatal_signals[k], NULL, &cur) == 0 && pi_sigaction_ignores(&cur))
      continue;
    pi_fatal_install(k, on_fatal, &previous[k]);
  }
  atomic_store(&handlers_installed, true);
}

static void remove_handlers(void)
{
  if (!atomic_load(&handlers_installed))
    return;
  for (size_t k = 0; k < PI_NFATAL; k++) {
    struct sigaction cur;
    /* Only where ours is still the one: a handler installed since keeps
     * its place (libpirt stays loaded: it hands on to ours still). */
    if (sigaction(pi_fatal_signals[k], NULL, &cur) != 0)
      continue;
    if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fatal)
      sigaction(pi_fatal_signals[k], &previous[k], NULL);
    else if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == on_fatal_front)
      sigaction(pi_fatal_signals[k], &front_prev[k], NULL);
  }
  atomic_store(&handlers_installed, false);
}

/* A forked child: the buffers hold its parent's blocks (the parent writes
 * them), and there is no flusher in it; a lock held at the fork by another
 * thread would never be released. */
static void fork_child(void)
{
  for (trace_buf *b = atomic_load(&all_bufs); b; b = b->next) {
    atomic_store(&b->len, 0);
    atomic_store(&b->lock, 0);
    atomic_store(&b->owned, 0);
  }
  /* The forking thread takes a buffer again at its next block, and with
   * it starts the child's flusher (a child killed a second after its
   * calls lost every one of them). */
  my_buf = my_locked = NULL;
  my_gen = 0;
  child_pid = getpid();
  my_tag[0] = 0;
  atomic_store(&flusher_started, false);
  pthread_mutex_init(&flusher_lock, NULL);
  pthread_cond_init(&flusher_cond, NULL);
  pthread_mutex_init(&multi_lock, NULL);
  trace_pid = getpid();
}

static void start_flusher(void)
{
  pthread_mutex_lock(&flusher_lock);
  if (!atomic_load(&flusher_started)) {
    flusher_stop = false;
    /* None of the application's signals, a stack of its own (pi_thread.h). */
    if (pi_thread_start(&flusher, flusher_main, NULL))
      atomic_store(&flusher_started, true);
  }
  pthread_mutex_unlock(&flusher_lock);
}

/* The calling thread's buffer: a free one, or a new one; NULL when memory
 * runs out (the block is then written at once). */
static trace_buf *attach_buf(void)
{
  unsigned gen = atomic_load(&trace_gen);
  trace_buf *b;
  for (b = atomic_load(&all_bufs); b; b = b->next) {
    int free_ = 0;
    if (atomic_compare_exchange_strong(&b->owned, &free_, 1))
      break;
  }
  if (!b) {
    b = calloc(1, sizeof *b);
    if (!b)
      return NULL;
    atomic_store(&b->owned, 1);
    b->next = atomic_load(&all_bufs);
    while (!atomic_compare_exchange_weak(&all_bufs, &b->next, b))
      ;
  }
  my_buf = b;
  my_gen = gen;
  if (buf_key_made)
    pthread_setspecific(buf_key, b);
  if (!atomic_load_explicit(&flusher_started, memory_order_acquire))
    start_flusher();
  return b;
}

static void register_atfork(void) { pthread_atfork(NULL, NULL, fork_child); }

void pirt_trace_init(void)
{
  const char *lv = getenv("SYCL_PI_TRACE");
  pirt_trace_level = 0;
  if (lv && *lv) {
    /* Decimal, -1 or the levels' bits (1 basic, 2 calls, 4 debug) as
     * DPC++ takes them: "010" was octal 8 (tracing silently off), a
     * number past an int wrapped (to -1: everything). */
    char *end;
    errno = 0;
    long v = strtol(lv, &end, 10);
    /* strtol skips leading blanks and the test below refused trailing
     * ones: " 2" traced, "2 " did not; both are refused now. */
    if (*end || end == lv || isspace((unsigned char)*lv) || errno == ERANGE || v < -1 ||
        v > 7) {
      fprintf(stderr, "pitrace: SYCL_PI_TRACE=%s is not a trace level "
                      "(use 1, 2 or -1); tracing is off\n", lv);
      v = 0;
    }
    pirt_trace_level = v == -1 ? (PIRT_TRACE_BASIC | PIRT_TRACE_CALLS |
                                  PIRT_TRACE_DEBUG)
                               : (int)v;
  }
  trace_fd = STDOUT_FILENO;
  trace_fd_owned = false;
  trace_buffered = false;
  atomic_store(&write_errno, 0);
  atomic_store(&write_failure_said, false);
  snprintf(trace_name, sizeof trace_name, "the standard output");
  const char *file = getenv("SYCL_PI_TRACE_FILE");
  if (pirt_trace_level && file && *file) {
    /* A FIFO nobody reads yet: open(2) waits for a reader, and the program
     * with it, at its first PI call; said first, or it looks hung. */
    int fd = open(file, O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0) {
      (void)fcntl(fd, F_SETFL, O_APPEND); /* writes that wait, as before */
    } else if (errno == ENXIO) {
      fprintf(stderr, "pitrace: SYCL_PI_TRACE_FILE=%s is a FIFO that nobody reads yet: the "
                      "program waits until something opens it for reading (cat %s)\n",
              file, file);
      fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
    } else {
      fd = open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    }
    if (fd < 0)
      fprintf(stderr, "pitrace: cannot open SYCL_PI_TRACE_FILE=%s: %s; "
                      "tracing to stdout\n", file, strerror(errno));
    else {
      trace_fd = fd;
      trace_fd_owned = true;
      snprintf(trace_name, sizeof trace_name, "SYCL_PI_TRACE_FILE=%s", file);
      struct stat st;
      trace_buffered = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    }
  }
  struct rlimit fsize;
  size_limit = getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY
                   ? (uint64_t)fsize.rlim_cur
                   : 0;
  if (trace_buffered) {
    static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
    pthread_once(&atfork_once, register_atfork);
    atomic_fetch_add(&trace_gen, 1);
    trace_pid = getpid();
    buf_key_made = pthread_key_create(&buf_key, thread_done) == 0;
  }
  pirt_trace_calls = (pirt_trace_level & PIRT_TRACE_CALLS) != 0;
  /* A file's buffers are written at a fatal signal; a call's block that a
   * fault cut (write_forming) is written wherever the trace goes. */
  if (trace_buffered || pirt_trace_calls)
    install_handlers();
}

void pirt_trace_flush(void)
{
  if (trace_buffered)
    flush_all();
}

void pirt_trace_fini(bool release)
{
  pirt_trace_calls = false;
  remove_handlers();
  if (trace_buffered) {
    if (atomic_load(&flusher_started)) {
      pthread_mutex_lock(&flusher_lock);
      flusher_stop = true;
      pthread_cond_signal(&flusher_cond);
      pthread_mutex_unlock(&flusher_lock);
      pi_thread_join(&flusher);
      atomic_store(&flusher_started, false);
    }
    /* The key goes in any case (a thread ending after a dlclose would
     * call its destructor in the unmapped library); the threads still
     * alive keep their buffers, written here. */
    if (buf_key_made)
      pthread_key_delete(buf_key);
    buf_key_made = false;
    if (!release) {
      /* Other threads may be writing a block into their buffers now:
       * every buffer written, then the blocks that still come go to the
       * file at once (it stays open), the buffers are kept. A block
       * begun before the switch, its thread not yet at its buffer's lock
       * when the first pass went by, is written by a second pass a
       * millisecond later (only at such an end). */
      trace_buffered = false;
      atomic_thread_fence(memory_order_seq_cst);
      flush_all();
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
      flush_all();
      say_write_failure();
      return;
    }
    flush_all();
    /* Buffers of threads still alive are freed too: their next block (none
     * is traced after this) would attach a new one. */
    trace_buf *b = atomic_exchange(&all_bufs, NULL);
    while (b) {
      trace_buf *n = b->next;
      free(b);
      b = n;
    }
    my_buf = NULL;
    trace_buffered = false;
  }
  say_write_failure();
  if (!release)
    return; /* stdout, or a pipe another thread may still write into */
  if (trace_fd_owned)
    close(trace_fd);
  trace_fd = -1;
  trace_fd_owned = false;
}

/* _exit and _Exit skip atexit and destructors: the buffered blocks are
 * written first, then the process ends as libc's _exit ends it. */
__attribute__((noreturn)) static void exit_now(int status)
{
  flush_all_now();
  for (;;)
    syscall(SYS_exit_group, status);
}

__attribute__((noreturn, visibility("default"))) void _exit(int status)
{
  exit_now(status);
}

__attribute__((noreturn, visibility("default"))) void _Exit(int status)
{
  exit_now(status);
}

/* Writes one whole block: at once (stdout's stdio buffer flushed first, so
 * the trace keeps its place among the application's own output), or into
 * the thread's buffer. */
static void emit(const char *s, size_t n)
{
  if (trace_fd < 0)
    return;
  if (!trace_buffered) {
    if (trace_fd == STDOUT_FILENO)
      fflush(stdout);
    write_all(trace_fd, s, n);
    say_write_failure();
    return;
  }
  trace_buf *b = my_buf;
  if (PIRT_UNLIKELY(!b || my_gen != atomic_load_explicit(&trace_gen, memory_order_relaxed)))
    b = attach_buf();
  if (PIRT_UNLIKELY(!b || n > TRACE_BUF_SIZE)) {
    if (b)
      flush_all(); /* this thread's earlier blocks first */
    write_all(trace_fd, s, n);
    return;
  }
  own_lock(b);
  size_t len = atomic_load_explicit(&b->len, memory_order_relaxed);
  bool drained = len + n > TRACE_BUF_SIZE;
  if (drained) {
    buf_drain(b);
    len = 0;
  }
  memcpy(b->data + len, s, n);
  atomic_store_explicit(&b->len, len + n, memory_order_release);
  own_unlock(b);
  if (drained)
    say_write_failure();
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

void pirt_trace_device_time(const char *text)
{
  if (!pirt_trace_level)
    return;
  char store[512];
  pi_sbuf b;
  pi_sbuf_init(&b, store, sizeof store);
  pi_sbuf_printf(&b, "---> device time: %s\n", text);
  emit(b.p, b.len);
  pi_sbuf_free(&b);
}

/* " [thread N]" once more than one thread has made calls, else NULL;
 * in a forked child " [pid P thread N]" always. */
static const char *thread_tag(void)
{
  if (!thread_id) {
    thread_id = atomic_fetch_add(&thread_counter, 1) + 1;
    /* Every untagged block goes before the first tagged one: the blocks
     * buffered so far are written before any thread sees the tags on
     * (a second thread that saw them first, ran and ended wrote its
     * tagged blocks ahead of the first thread's untagged ones). */
    if (thread_id > 1 && !atomic_load(&multi_thread)) {
      pthread_mutex_lock(&multi_lock);
      if (!atomic_load(&multi_thread)) {
        if (trace_buffered)
          flush_all();
        atomic_store(&multi_thread, true);
      }
      pthread_mutex_unlock(&multi_lock);
    }
  }
  if (!atomic_load(&multi_thread) && !child_pid)
    return NULL;
  if (!my_tag[0] && child_pid)
    snprintf(my_tag, sizeof my_tag, " [pid %d thread %u]", (int)child_pid, thread_id);
  else if (!my_tag[0])
    snprintf(my_tag, sizeof my_tag, " [thread %u]", thread_id);
  return my_tag;
}

void pirt_trace_enter(const struct pirt_plugin *pl, pi_api_id id,
                      const uint64_t *argv)
{
  (void)pl;
  char store[2048];
  pi_sbuf b;
  pi_sbuf_init(&b, store, sizeof store);
  forming = &b;
  pi_format_call_enter(&b, &pi_api_table[id], argv, thread_tag());
  forming = NULL;
  emit(b.p, b.len);
  pi_sbuf_free(&b);
}

void pirt_trace_exit(const struct pirt_plugin *pl, pi_api_id id,
                     const uint64_t *argv, pi_result r)
{
  (void)pl;
  if ((pi_api_table[id].flags & PI_API_F_STARTS_IMPL) && /* its signal handlers over ours */
      atomic_load_explicit(&handlers_installed, memory_order_relaxed))
    keep_in_front();
  char store[2048];
  pi_sbuf b;
  pi_sbuf_init(&b, store, sizeof store);
  forming = &b;
  pi_format_call_exit_live(&b, &pi_api_table[id], argv, r, thread_tag());
  forming = NULL;
  pi_sbuf_puts(&b, "\n");
  emit(b.p, b.len);
  pi_sbuf_free(&b);
}
