/*
 * writer.c: the recording shim's writer thread, its start and its end.
 * writer_start (on the application's thread, at the first recorded call)
 * gathers the session's description and makes the ring file the
 * application's threads write their records into; the writer's thread
 * then salvages what killed processes left beside the database, opens it
 * and makes the session's row, and loops: merge the rings (writer_merge.c)
 * into calls (writer_calls.c) and chunks (writer_chunks.c), and commit at
 * least every 50 ms or when a ring fills, with a checkpoint
 * (writer_checkpoint.c). Every record is in the ring file from the moment
 * it is written, so a process killed between commits loses nothing: the
 * next one to look salvages it (writer_salvage.c).
 *
 * When writing fails (a full disk, an unwritable path) recording stops with
 * one warning, the session is marked incomplete where that still can be
 * written, and the application's calls go on unrecorded.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "writer_internal.h"

writer_state wr = {.maps_dirty = true, .cur_api = ""};

static bool writer_open(void);

/* The writer's naps: 0.25 ms doubled up to 4 ms (a thread flooding its
 * ring writes no more than about 1 GB/s: 4 MB, a ring, in 4 ms). */
#define NAP_MIN_NS 250000L
#define NAP_DOUBLINGS 4u

static pi_thread writer_thread;
static bool writer_running;
/* The process the writer runs in: a child forked from it has the same
 * memory, writer_running included, but no writer thread, and its ring
 * file header is its parent's. */
static pid_t writer_pid;

/* Whether the writer runs in this process (async-signal-safe). */
static bool writer_here(void) { return writer_running && getpid() == writer_pid; }

static _Atomic int finish_req;  /* 0 none, 1 flush, 2 finish */
static _Atomic int finish_done; /* generation acknowledged */
static _Atomic int finish_gen;

/* The writer naps on this word when it finds nothing; whoever needs it
 * sooner (a producer whose ring is full, a flush, the end) rings it. */
static _Atomic uint32_t writer_bell;

void writer_wake(void)
{
  atomic_fetch_add_explicit(&writer_bell, 1, memory_order_release);
  syscall(SYS_futex, &writer_bell, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Naps ns nanoseconds, or until the bell rings after it read `bell`. */
static void writer_nap(uint32_t bell, long ns)
{
  struct timespec t = {ns / 1000000000L, ns % 1000000000L};
  syscall(SYS_futex, &writer_bell, FUTEX_WAIT_PRIVATE, bell, &t, NULL, 0);
}

static char finish_how[16];
static int finish_signo;
/* A fatal signal taken while the session's end was under way on another
 * thread (a thread of a program exiting that aborts as its call fails at
 * the closed runtime): the end says that signal (finish_session). */
static _Atomic int late_signo;

/* A fork waits for the writer to stand still (writer_fork_prepare):
 * fork_wait is the fork's number while it waits (0: none); `fork_paused`
 * the writer's answer, the number of the fork it stands still for,
 * outside SQLite with everything committed, until fork_wait changes. A
 * number, not a flag: an answer that comes after its fork gave up waiting
 * (WRITER_FORK_BUSY) is never taken for the next fork's. Forks come one
 * at a time (the shim's fork_lock). */
_Atomic uint32_t wr__fork_wait;
static _Atomic uint32_t fork_paused;
static uint32_t fork_number;

/* The database path as SYCL_PI_RECORD gave it, and the directory it was
 * given in: a forked child resolves it again (its own file where %p or a
 * directory asks for one). */
static char given_path[sizeof shim_cfg.path], given_cwd[4096];

/* A knot the writer took (stamp.c): into the ring file, for salvage. */
void wr__keep_knot(stamp_knot k)
{
  if (!wr.salvaging)
    ringfile_note_knot(k);
}

static void commit(void)
{
  if (wr.failed)
    return;
  wr__materialize_inflight();
  wr__write_plugins();
  wr__flush_chunk();
  wr__write_chunks();
  wr__write_inflight();
  wr__write_checkpoint();
  if (wr.failed)
    return;
  if (wr__commit_writes())
    wr__publish_tails();
}

static void finish_session(void)
{
  if (wr.failed)
    return;
  wr.draining = true;
  /* Everything, committed on the way when payloads take long to store
   * (wr.long_txn), so that other processes recording into the file have
   * their turns meanwhile. */
  for (;;) {
    wr__merge();
    if (!wr.long_txn)
      break;
    commit();
    if (wr.failed)
      return;
  }
  wr__materialize_inflight();
  wr__write_plugins();
  wr__flush_chunk();
  wr__write_chunks();
  wr__write_inflight();
  wr__write_waiting_notes();
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int late = atomic_load(&late_signo);
  wr__end_session(late ? "signal" : finish_how[0] ? finish_how : "exit",
                  late ? late : finish_signo, (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec,
                  shim_now() - wr.session_t0, NULL, -1);
  wr__commit_writes();
}

/* A fork is on its way (writer_fork_prepare): everything so far
 * committed (a connection that holds SQLite's lock or is inside SQLite
 * cannot be left behind in a child that opens one of its own: its locks
 * would be held there for ever), the encoders idle, then the writer waits
 * until the fork is done. */
static void stand_still(size_t since_commit)
{
  uint32_t n = atomic_load_explicit(&wr__fork_wait, memory_order_acquire);
  if (!n)
    return;
  if (!wr.failed && wr.db &&
      (since_commit || wr.pressure || !sqlite3_get_autocommit(wr.db)))
    commit();
  wr__wait_encoders();
  atomic_store_explicit(&fork_paused, n, memory_order_release);
  syscall(SYS_futex, &fork_paused, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  while (atomic_load_explicit(&wr__fork_wait, memory_order_acquire) == n)
    syscall(SYS_futex, &wr__fork_wait, FUTEX_WAIT_PRIVATE, n, NULL, NULL, 0);
}

/* After a session that could not begin (a full disk, a file size limit):
 * the database file left empty, and its journal, go, so that a record
 * directory does not hold a file that is no session (every directory
 * verb refused the directory for it). Only an empty file: one with a page
 * in it may be another process's, being made. Under pitrace record (its
 * PT_RECORD_RUN_VAR), record does it, after naming the file. */
static void drop_if_empty(void)
{
  if (!getenv(PT_RECORD_RUN_VAR)) /* pitrace record's run: it names the file, then removes it */
    pt_remove_if_empty(shim_cfg.path);
}

static void *writer_main(void *arg)
{
  (void)arg;
  pthread_setname_np(pthread_self(), "pitrace-merge"); /* for top, perf, bench_record */
  ringfile_make_spare(); /* the application's first thread's slot */
  if (!writer_open()) {
    /* Said why; the calls made meanwhile are dropped (wr__discard), as after
     * any failure, and the ring file goes. */
    wr.failed = true;
    atomic_store(&shim_recording, false);
    wr__finalize_statements();
    if (wr.db) {
      wr__close_db(wr.db); /* an open transaction is rolled back */
      wr.db = NULL;
    }
    wr__reserve_forget();
    drop_if_empty();
    ringfile_remove();
  }
  uint64_t last_commit = shim_now();
  unsigned idle = 0; /* rounds in a row that found nothing */
  size_t since_commit = 0; /* records processed since the last commit */
  for (;;) {
    uint32_t bell = atomic_load_explicit(&writer_bell, memory_order_acquire);
    if (atomic_load_explicit(&wr__fork_wait, memory_order_acquire)) {
      stand_still(since_commit);
      since_commit = 0;
      last_commit = shim_now();
      continue;
    }
    int req = atomic_load(&finish_req);
    if (wr.failed) {
      wr__discard();
      if (req) {
        if (req == 2) {
          wr__stop_encoders();
          ringfile_remove();
        }
        atomic_store(&finish_done, atomic_load(&finish_gen));
        if (req == 2)
          return NULL;
        atomic_store(&finish_req, 0);
      }
      writer_nap(bell, 1000000);
      continue;
    }
    wr.ending = req == 2;
    size_t done = wr__merge();
    since_commit += done;
    uint64_t now = shim_now();
    if (req) {
      if (req == 2) {
        wr.pressure = false;
        finish_session();
        wr__stop_encoders();
        /* One file again when this process is the last one using it (the
         * journal mode changes only with nobody else there: no waiting).
         * Here, not after the join: a process ending on a signal is not
         * joined (its handler returns to die) and left an empty journal. */
        if (wr.db) {
          sqlite3_busy_handler(wr.db, NULL, NULL);
          sqlite3_exec(wr.db, "PRAGMA journal_mode=DELETE;", NULL, NULL, NULL);
        }
        /* Everything is in the database (or recording failed): nobody
         * needs the rings any more. */
        ringfile_remove();
        atomic_store(&finish_done, atomic_load(&finish_gen));
        return NULL;
      }
      for (;;) {
        wr__merge();
        bool again = wr.pressure || wr.long_txn; /* merge stopped to commit */
        commit();
        if (!again || wr.failed)
          break;
      }
      atomic_store(&finish_req, 0);
      atomic_store(&finish_done, atomic_load(&finish_gen));
      last_commit = now;
      since_commit = 0;
      continue;
    }
    if (wr.pressure || wr.long_txn || now - last_commit >= COMMIT_NS) {
      /* Nothing new: no commit (it would write the same checkpoint). */
      if (since_commit || wr.pressure ||
          wr.plugins_written < atomic_load(&shim_ninstances))
        commit();
      last_commit = now;
      since_commit = 0;
      continue;
    }
    /* Nothing came: nap, twice as long each round that finds nothing,
     * from NAP_MIN_NS (0.25 ms) up to 4 ms. A wake-up is what an idle recorder
     * costs (the timer and two context switches: 10-20 us on a virtual
     * machine); waking every 0.2 ms for 50 ms after each call, as before,
     * cost vadd 1024 (60 ms, 39 calls) some 4 ms of a processor on the
     * 2-core machine. The records are safe in the ring file meanwhile,
     * and a producer whose ring fills rings the bell (reserve_slow). */
    idle = done ? 0 : idle + 1;
    if (!done)
      writer_nap(bell, NAP_MIN_NS << (idle - 1 < NAP_DOUBLINGS ? idle - 1 : NAP_DOUBLINGS));
  }
}

int writer_make_dirs(char *path, mode_t mode, bool *made)
{
  *made = false;
  for (char *s = path + 1; *s; s++) {
    if (*s != '/' || s[-1] == '/')
      continue;
    *s = 0;
    int e = mkdir(path, 0777) != 0 && errno != EEXIST ? errno : 0;
    *s = '/';
    if (e)
      return e;
  }
  struct stat st;
  if (mkdir(path, mode) == 0)
    *made = true;
  else if (errno != EEXIST)
    return errno;
  return stat(path, &st) != 0 ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

/* The database path: %p becomes the pid; a directory gets a new file.
 * False when too long, or (*dir_err set to errno) when the directory it
 * names by a trailing '/' cannot be made. */
static bool resolve_path(char *out, size_t n, int *dir_err)
{
  char tmp[3800];
  size_t w = 0;
  const char *p = shim_cfg.path;
  for (; *p && w + 24 < sizeof tmp; p++) {
    if (p[0] == '%' && p[1] == 'p') {
      w += (size_t)snprintf(tmp + w, sizeof tmp - w, "%d", (int)getpid());
      p++;
    } else {
      tmp[w++] = *p;
    }
  }
  tmp[w] = 0;
  /* A path cut short would name another file (in a directory that
   * exists, a file by a prefix of the name asked for). */
  if (*p || shim_cfg.path_len >= sizeof shim_cfg.path)
    return false;
  /* Absolute from here on: the database is opened on the writer's
   * thread, its ring file removed at the end, each later than this, and
   * the application may have changed its directory meanwhile (a relative
   * path's ring file was left behind in the first directory, the removal
   * looking for it in the second). */
  char cwd[4096] = "";
  if (tmp[0] != '/' && given_cwd[0]) /* a forked child: its parent's at the start */
    snprintf(cwd, sizeof cwd, "%s", given_cwd);
  else if (tmp[0] != '/' && !getcwd(cwd, sizeof cwd))
    cwd[0] = 0; /* none to tell (removed): relative, as given */
  const char *sep = cwd[0] ? "/" : "";
  struct stat st;
  int w2;
  /* A path ending in '/' is a directory, made when missing (pitrace record
   * -o DIR: another run's end may have removed DIR, left empty, since; a
   * session then went into a file named DIR, and later runs found a file
   * where their directory should be). */
  size_t tl = strlen(tmp);
  if (tl > 1 && tmp[tl - 1] == '/') {
    while (tl > 1 && tmp[tl - 1] == '/')
      tmp[--tl] = 0;
    /* pitrace record's directory is private (0700, as record makes it):
     * made again here when another run's end removed it meanwhile. */
    mode_t mode = getenv(PT_RECORD_RUN_VAR) ? 0700 : 0777;
    bool made;
    if ((*dir_err = writer_make_dirs(tmp, mode, &made)) != 0)
      return false;
  }
  if (stat(tmp, &st) == 0 && S_ISDIR(st.st_mode))
    w2 = snprintf(out, n, "%s%s%s/pitrace-%d-%lld.db", cwd, sep, tmp, (int)getpid(),
                  (long long)time(NULL));
  else
    w2 = snprintf(out, n, "%s%s%s", cwd, sep, tmp);
  return w2 > 0 && (size_t)w2 < n;
}

static void json_env(text *t)
{
  extern char **environ;
  t_c(t, '{');
  bool first = true;
  for (char **e = environ; e && *e; e++)
    /* pitrace's and the runtime's own variables only (not PIP_*, say:
     * pip's certificates and index paths are no business of a session). */
    if (strncmp(*e, "SYCL_", 5) == 0 || strncmp(*e, "PI_", 3) == 0 ||
        strncmp(*e, "PITRACE_", 8) == 0) {
      const char *eq = strchr(*e, '=');
      if (!eq)
        continue;
      if (!first)
        t_c(t, ',');
      first = false;
      t_str(t, *e, (size_t)(eq - *e));
      t_c(t, ':');
      t_str(t, eq + 1, strlen(eq + 1));
    }
  t_c(t, '}');
}

static char *command_line(void)
{
  FILE *f = fopen("/proc/self/cmdline", "rb");
  if (!f)
    return strdup("");
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  for (size_t i = 0; i + 1 < n; i++)
    if (!buf[i])
      buf[i] = ' ';
  buf[n] = 0;
  return strdup(buf);
}

/* This process's description, made by writer_start for the writer's
 * thread (which frees it once the row is made). */
static session_desc start_desc;
static stamp_knot start_knot; /* taken as the ring file was made */
static text start_env;
static char *start_cmd;
static char start_cwd[4096], start_host[256];
/* In a child forked from a recording process: the parent's pid, its
 * session and the database it recorded into (writer_fork_child), for the
 * child's session row. The writer stands still for a fork only once its
 * session's row is committed (its loop begins after writer_open). */
static int32_t parent_pid;
static int64_t parent_session;
static char parent_path[4096];

static void start_desc_free(void)
{
  free(start_env.p);
  free(start_cmd);
  start_env = (text){0};
  start_cmd = NULL;
}

/* The writer's first work, on its own thread: the database opened (which
 * may wait for another process's lock, at most BUSY_MS of writer_db.c:
 * the application's calls wait in their rings meanwhile, not in the
 * call), the session's row made and committed. False (having said why)
 * when recording cannot go on. */
static bool writer_open(void)
{
  /* First, sessions of processes that recorded here and ended without a
   * word (the next process to record salvages them: up to a fraction of a
   * second for a large one, which the application's first call used to
   * wait for). The salvage uses the writer's state: this process's start
   * is kept aside meanwhile. */
  {
    uint64_t t0 = wr.session_t0;
    char err[600];
    if (wr__salvage_dir(shim_cfg.path, NULL, NULL, err, sizeof err) < 0)
      fprintf(stderr, "pitrace: %s\n", err);
    wr.session_t0 = t0;
    stamp_add_knot(start_knot);
  }
  bool ok = wr__open_db();
  if (ok)
    wr__reserve_take();
  wr.committed = false;
  if (ok && !(wr.session_id = wr__insert_session(&start_desc)))
    ok = false;
  start_desc_free();
  ok = ok && wr__prepare_statements();
  if (ok) {
    /* Before the commit: a salvager that finds no row of this id (the
     * process died before the commit) makes the row from the description. */
    ringfile_set_session(wr.session_id);
  }
  /* Committed, then the lock is let go until the first commit of calls. */
  ok = ok && wr__commit_writes();
  if (!ok && wr.db && !wr.failed)
    wr__say_cannot_record(sqlite3_errmsg(wr.db));
  return ok;
}

bool writer_start(void)
{
  wr__decide_printing();
  char path[4096];
  /* A path SQLite cannot open fails there only after the file was made:
   * said before anything is. */
  size_t len = shim_cfg.path_len, most = 504;
  int dir_err = 0;
  if (!resolve_path(path, sizeof path, &dir_err) || !pt_path_openable(path, &len, &most)) {
    char why[160];
    if (dir_err) /* the directory it names (ending in '/') could not be made */
      snprintf(why, sizeof why, "its directory cannot be made: %s", strerror(dir_err));
    else
      snprintf(why, sizeof why, "its path is %zu characters long, and SQLite opens files by "
               "paths of up to %zu; record to a shorter one", len, most);
    wr__say_cannot_record(why);
    return false;
  }
  if (!given_path[0]) {
    snprintf(given_path, sizeof given_path, "%s", shim_cfg.path);
    if (shim_cfg.path[0] != '/' && !getcwd(given_cwd, sizeof given_cwd))
      given_cwd[0] = 0;
  }
  snprintf(shim_cfg.path, sizeof shim_cfg.path, "%s", path);
  /* A device, pipe or socket is no database: SYCL_PI_RECORD=/dev/null
   * failed only at the first write, after the recorder had made
   * /dev/null readable by root alone (the fchmod below). */
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    wr__say_cannot_record(S_ISDIR(st.st_mode) ? "it is a directory"
                          : "it is a device, pipe or socket, not a file; name a file, or "
                            "unset SYCL_PI_RECORD to record nothing");
    return false;
  }
  /* A new file is the template, put in place whole; created readable by
   * its owner only, before SQLite opens it. The database is there before
   * the ring file is: a salvager finds it beside. */
  wr__create_from_template(path);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) { /* one line, before a ring file beside it is tried */
    wr__say_cannot_record(strerror(errno));
    return false;
  }
  fchmod(fd, 0600);
  close(fd);
  start_desc_free();
  json_env(&start_env);
  start_cmd = command_line();
  if (!getcwd(start_cwd, sizeof start_cwd))
    start_cwd[0] = 0;
  gethostname(start_host, sizeof start_host);
  start_host[sizeof start_host - 1] = 0;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t start_unix_ns = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
  wr.session_t0 = shim_now();
  start_desc = (session_desc){.pid = getpid(), .start_unix_ns = start_unix_ns,
                              .data_mode = (uint32_t)shim_cfg.data_mode};
  if (parent_pid > 0) { /* a forked child: into its parent's file, or another */
    struct stat mine, theirs;
    bool same = stat(parent_path, &theirs) == 0 && stat(path, &mine) == 0 &&
                mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
    start_desc.parent_pid = parent_pid;
    start_desc.parent_session = same ? parent_session : 0;
  }
  const char *strs[DESC_NSTR] = {shim_cfg.label, start_cmd, start_cwd, start_host,
                                 start_env.p ? start_env.p : "{}", shim_cfg.filter};
  for (int i = 0; i < DESC_NSTR; i++) {
    start_desc.s[i].p = strs[i];
    start_desc.s[i].n = (uint32_t)strlen(strs[i]);
  }
  static unsigned char packed[RINGFILE_DESC];
  uint32_t packed_len = wr__desc_pack(&start_desc, packed);
  /* The ring file is there before the session's row is (which the
   * writer's thread makes): whatever the process records is in a file
   * from its first call on. */
  ringfile_create(path, wr.session_t0, start_unix_ns, packed, packed_len,
                  (int32_t)start_desc.parent_pid, start_desc.parent_session);
  start_knot = stamp_take_knot();
  wr__keep_knot(start_knot); /* for a salvager: how its stamps were counting */
  writer_pid = getpid();
  writer_running = pi_thread_start(&writer_thread, writer_main, NULL);
  if (!writer_running) {
    fprintf(stderr, "pitrace: cannot start the recording thread; not recording\n");
    ringfile_remove();
    start_desc_free();
    return false;
  }
  return true;
}

/* Waits for the writer to be done with request `gen`, at most timeout_ms.
 * Naps of 50 µs: a process's end waits for its writer, which takes a
 * millisecond or so; waking every millisecond added up to one more to
 * every recorded run. Only clock_gettime and nanosleep: it also runs in
 * signal handlers. */
static void wait_done(int gen, int timeout_ms)
{
  struct timespec nap = {0, 50000};
  uint64_t until = shim_now() + (uint64_t)timeout_ms * 1000000u;
  while (atomic_load(&finish_done) < gen && shim_now() < until)
    nanosleep(&nap, NULL);
}

void writer_flush(int timeout_ms)
{
  if (!writer_here() || pthread_equal(pthread_self(), writer_thread.t))
    return;
  int gen = atomic_fetch_add(&finish_gen, 1) + 1;
  int expected = 0;
  if (atomic_compare_exchange_strong(&finish_req, &expected, 1)) {
    writer_wake();
    wait_done(gen, timeout_ms);
  }
}

static _Atomic bool finishing; /* writer_finish was called */

void writer_finish(const char *how, int signo, int timeout_ms)
{
  /* Not in a forked child (a fatal signal there): nothing of its parent's
   * session is its to end, and waiting for a writer it does not have held
   * its death up for the whole timeout. */
  if (!writer_here())
    return;
  if (atomic_exchange(&finishing, true)) {
    /* A fatal signal while another thread ends the session: the process
     * dies once this handler returns, which used to leave the end under
     * way undone (its last calls salvaged later, the signal unsaid). The
     * end says the signal (unless it is another signal's end), and the
     * handler waits for it (once it is requested) as for an end of its
     * own. */
    if (signo && !pthread_equal(pthread_self(), writer_thread.t)) {
      if (!finish_signo) { /* an end of a signal's own says that one */
        ringfile_note_signal(signo);
        atomic_store(&late_signo, signo);
      }
      struct timespec nap = {0, 50000};
      uint64_t until = shim_now() + (uint64_t)timeout_ms * 1000000u;
      while (atomic_load(&finish_req) != 2 && shim_now() < until)
        nanosleep(&nap, NULL);
      uint64_t now = shim_now();
      wait_done(atomic_load(&finish_gen), now < until ? (int)((until - now) / 1000000u) : 0);
    }
    return;
  }
  if (pthread_equal(pthread_self(), writer_thread.t))
    return;
  if (signo) /* should the writer not finish in time, the salvager knows why */
    ringfile_note_signal(signo);
  snprintf(finish_how, sizeof finish_how, "%s", how);
  finish_signo = signo;
  int gen = atomic_fetch_add(&finish_gen, 1) + 1;
  atomic_store(&finish_req, 2);
  writer_wake();
  wait_done(gen, timeout_ms);
  atomic_store(&shim_recording, false);
  if (signo) /* in a signal handler: leave the rest to the process's end */
    return;
  if (atomic_load(&finish_done) < gen) {
    /* Its last calls wait in the ring file: a salvager stores them, and
     * says the process ended in order (it said "killed or _exit"). */
    ringfile_note_signal(RINGFILE_ENDED_IN_ORDER);
    fprintf(stderr, "pitrace: recording to %s: the session's end waited %d s for the file, "
                    "held by another process (stopped?); its last calls stay in the ring file "
                    "beside it, for the next pitrace verb or recording process there to store\n",
            shim_cfg.path, timeout_ms / 1000);
  }
  if (atomic_load(&finish_done) >= gen) {
    pi_thread_join(&writer_thread);
    writer_running = false;
    wr__finalize_statements();
    if (wr.db) { /* none when it could not be opened */
      wr__close_db(wr.db);
      wr.db = NULL;
    }
    wr__reserve_forget();
    if (wr.failed)
      drop_if_empty();
    /* Only once the writer is gone: the reset marks the payload file's
     * regions stored (pt_payload_trim), which a writer that did not
     * finish in time has not stored; a salvager looks for them there. */
    wr__reset_state();
  }
}

bool writer_ended(void) { return atomic_load(&finishing); }

bool writer_begin_again(void)
{
  if (writer_running) /* its end timed out: its thread still stores (or waits) */
    return false;
  ringfile_forget();
  start_desc_free();
  finish_how[0] = 0;
  finish_signo = 0;
  atomic_store(&late_signo, 0);
  atomic_store(&finish_req, 0);
  atomic_store(&shim_data_dropped, false);
  /* Resolved again: a directory or %p names a file for each session. */
  snprintf(shim_cfg.path, sizeof shim_cfg.path, "%s", given_path);
  atomic_store(&finishing, false);
  return true;
}

/* In a forked child: its parent's connection and statements, as they
 * were, never used (SQLite's rule: a connection does not cross a fork)
 * and kept reachable. */
static writer_state parents_left __attribute__((used));

/* A fork the writer could not stand still for: whether the forking
 * thread holds the payload copies' lock through it (writer_fork_child). */
static bool busy_fork_payloads;

int writer_fork_prepare(void)
{
  if (!writer_here() || pthread_equal(pthread_self(), writer_thread.t))
    return WRITER_FORK_NONE;
  uint32_t n = ++fork_number ? fork_number : ++fork_number; /* never 0 */
  atomic_store(&wr__fork_wait, n);
  writer_wake();
  /* The writer commits what it has first: a few milliseconds at most,
   * unless it waits for another process's lock on the file, or is still
   * salvaging before its own session: then the child goes unrecorded
   * rather than wait. */
  uint64_t until = shim_now() + 1000000000u;
  uint32_t answer;
  while ((answer = atomic_load_explicit(&fork_paused, memory_order_acquire)) != n) {
    if (shim_now() > until)
      break;
    struct timespec t = {0, 1000000};
    syscall(SYS_futex, &fork_paused, FUTEX_WAIT_PRIVATE, answer, &t, NULL, 0);
  }
  if (answer != n) {
    busy_fork_payloads = pt_payload_fork_trylock();
    return WRITER_FORK_BUSY;
  }
  wr__chunks_fork_lock();
  ringfile_fork_lock();
  pt_payload_fork_lock();
  return WRITER_FORK_PAUSED;
}

void writer_fork_parent(int prepared)
{
  if (prepared == WRITER_FORK_PAUSED) {
    pt_payload_fork_unlock();
    ringfile_fork_unlock();
    wr__chunks_fork_unlock();
  } else if (prepared == WRITER_FORK_BUSY && busy_fork_payloads) {
    pt_payload_fork_unlock();
  }
  if (prepared != WRITER_FORK_NONE) {
    atomic_store(&wr__fork_wait, 0);
    syscall(SYS_futex, &wr__fork_wait, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  }
}

void writer_fork_child(int prepared)
{
  if (prepared == WRITER_FORK_BUSY && busy_fork_payloads) {
    pt_payload_fork_forget(); /* only its file and window let go */
    pt_payload_fork_unlock();
  }
  /* The room kept on the disk is the parent's, unrecorded child or not:
   * held open here, what the parent gives back on a full disk stays
   * taken while the child lives. */
  if (prepared == WRITER_FORK_BUSY)
    wr__reserve_forget();
  if (prepared != WRITER_FORK_PAUSED)
    return; /* nothing else of the parent's may be touched: the child is not recorded */
  pt_payload_fork_child();
  ringfile_fork_child();
  wr__reserve_forget(); /* the parent's room: this one's own is taken as its session begins */
  wr__chunks_fork_child();
  wr__reset_state();
  wr__turn_fork_child();
  parents_left = wr;
  wr = (writer_state){.maps_dirty = true, .cur_api = ""};
  parent_pid = (int32_t)writer_pid;
  writer_running = false;
  writer_pid = 0;
  atomic_store(&finish_req, 0);
  atomic_store(&finish_done, 0);
  atomic_store(&finish_gen, 0);
  atomic_store(&writer_bell, 0);
  atomic_store(&wr__fork_wait, 0);
  atomic_store(&fork_paused, 0);
  finish_how[0] = 0;
  finish_signo = 0;
  atomic_store(&late_signo, 0);
  parent_session = parents_left.session_id;
  snprintf(parent_path, sizeof parent_path, "%s", shim_cfg.path);
  start_desc_free();
  atomic_store(&shim_data_dropped, false);
  snprintf(shim_cfg.path, sizeof shim_cfg.path, "%s", given_path);
}

void writer_fork_unstarted_child(void)
{
  parent_pid = (int32_t)getppid();
  parent_session = 0;
  parent_path[0] = 0;
}


/* Back to the state of a writer that never ran. */
void wr__reset_state(void)
{
  stamp_reset();
  for (size_t i = 0; i < wr.nthreads; i++) {
    for (size_t j = 0; j < wr.threads[i].nnotes; j++)
      free(wr.threads[i].notes[j]);
    free(wr.threads[i].notes);
  }
  free(wr.threads);
  wr.threads = NULL;
  wr.nthreads = wr.notes_waiting = 0;
  wr__stop_encoders();
  wr__free_chunks();
  pt_payload_trim();
  for (pending_call *c = wr.inflight, *n; c; c = n) {
    n = c->next;
    wr__call_free(c);
  }
  wr.inflight = NULL;
  for (pending_call *c = wr.free_calls, *n; c; c = n) {
    n = c->next;
    free(c->in.p);
    free(c->inl.p);
    free(c->found.v);
    free(c);
  }
  wr.free_calls = NULL;
  map_free(&wr.handles);
  free(wr.usm_allocs);
  wr.usm_allocs = NULL;
  wr.nusm_allocs = wr.cap_usm_allocs = 0;
  map_free(&wr.mapped);
  map_free(&wr.memo);
  map_free(&wr.devmemo);
  map_free(&wr.stacks);
  map_free(&wr.callbacks);
  wr.seq_counter = wr.next_handle_id = wr.next_stack_id = 0;
  wr.chunk_id = 0;
  wr.last_ticket = 0;
  wr.plugins_written = 0;
  wr.last_t = 0;
  wr.damaged = 0;
  wr.failed = wr.salvaging = wr.draining = wr.ending = wr.pressure = false;
  wr.room = 0;
  wr.maps_dirty = true;
  wr.salvage_hdr = NULL;
  wr.cur_api = "";
  wr__forget_rings();
}

/* Salvages the rings beside db_path that processes now gone left
 * (recorder.h); not while this process records. */
int writer_salvage(const char *db_path, writer_status_fn status_of, void *ctx, char *err,
                   size_t errn)
{
  if (writer_running) {
    snprintf(err, errn, "cannot salvage rings while recording");
    return -1;
  }
  return wr__salvage_dir(db_path, status_of, ctx, err, errn);
}
