/*
 * writer_salvage.c: the rings a recording process left when it died
 * (killed, _exit, a crash that took the writer with it), salvaged into
 * the database beside them by whoever comes next: the next recording
 * process (on its writer's thread), `pitrace record` when its child ends,
 * or any pitrace verb that opens the session.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stddef.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "writer_internal.h"

/* Whether the process that made a ring file, by the pid in its name
 * (DB-rings.PID.XXXXXX, ringfile.c), may still be running: true unless
 * the name has no pid or no process has it now. A pid used again by
 * another process only leaves an empty file for a later salvage. The pid
 * is the maker's in its pid namespace: a salvager in another (a container
 * and its host recording into one shared directory) may see another
 * process or none there, and the race this guards against is back. */
static bool maker_lives(const char *file)
{
  const char *p = strrchr(file, '/');
  p = p ? p + 1 : file;
  const char *at = NULL;
  for (const char *q = p; (q = strstr(q, "-rings.")); q++)
    at = q;
  if (!at)
    return false;
  char *end;
  long pid = strtol(at + strlen("-rings."), &end, 10);
  if (end == at + strlen("-rings.") || *end != '.' || pid <= 0 || pid > INT32_MAX)
    return false;
  return kill((pid_t)pid, 0) == 0 || errno == EPERM;
}

/* Removes a ring file, its payload file first (one is never left
 * without the other). */
static void drop_files(const char *file)
{
  char payloads[4400];
  if (ringfile_payload_path(file, payloads, sizeof payloads))
    unlink(payloads);
  unlink(file);
}

static int by_token(const void *a, const void *b)
{
  const pt_salvaged_payload *x = a, *y = b;
  return x->token < y->token ? -1 : x->token > y->token;
}

const unsigned char *wr__salvaged_payload(uint64_t token, uint64_t size)
{
  if (!wr.nsalvage_payloads || !token || !size)
    return NULL;
  pt_salvaged_payload key = {.token = token};
  const pt_salvaged_payload *p = bsearch(&key, wr.salvage_payloads, wr.nsalvage_payloads,
                                         sizeof key, by_token);
  return p && p->size == size ? p->data : NULL;
}

/* The payloads waiting in the payload file beside ring file `file`, into
 * wr.salvage_payloads (its mapping into *map, *map_len); none when there
 * is no such file. */
static void load_payloads(const char *file, void **map, size_t *map_len)
{
  *map = NULL;
  *map_len = 0;
  char path[4400];
  if (!ringfile_payload_path(file, path, sizeof path))
    return;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return;
  struct stat st;
  if (fstat(fd, &st) == 0 && st.st_size > 0) {
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (m != MAP_FAILED) {
      *map = m;
      *map_len = (size_t)st.st_size;
      int n = pt_payload_salvage_scan(m, (uint64_t)st.st_size, NULL, 0);
      wr.salvage_payloads = n > 0 ? calloc((size_t)n, sizeof *wr.salvage_payloads) : NULL;
      if (wr.salvage_payloads) {
        wr.nsalvage_payloads =
            (size_t)pt_payload_salvage_scan(m, (uint64_t)st.st_size, wr.salvage_payloads, n);
        qsort(wr.salvage_payloads, wr.nsalvage_payloads, sizeof *wr.salvage_payloads, by_token);
      }
    }
  }
  close(fd);
}

/* Takes the ring file's lock, which its recorder holds while it lives.
 * Held by another process, a reader salvaging it at this moment (pitrace
 * show and pitrace report of one killed process at once, or a verb while
 * pitrace record stores what its command left), it is waited for, at
 * most 30 s: a reader that went on read the session as its last commit
 * left it, its later calls missing and the next one "never returned" (a
 * replay matched 1350 calls of 11,700 and exited 0). The holder is the
 * recorder when it has the pid or the start time the header names (the
 * start time also across pid namespaces), or cannot be seen from here
 * (pid 0). False when not taken. */
static bool lock_ring(int fd)
{
  ringfile_hdr h;
  bool known = pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h && h.magic == RINGFILE_MAGIC;
  struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  struct timespec nap = {0, 1000000};
  for (unsigned ms = 0; fcntl(fd, F_SETLK, &lk) != 0; ms++) {
    struct flock who = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    char state;
    if (!known || ms >= 30000 || fcntl(fd, F_GETLK, &who) != 0)
      return false;
    if (who.l_type != F_UNLCK &&
        (who.l_pid <= 0 || who.l_pid == h.pid ||
         (h.proc_start && ringfile_proc_start(who.l_pid, &state) == h.proc_start)))
      return false;
    nanosleep(&nap, NULL);
  }
  return true;
}

/* Salvages one ring file: 1 done, 0 nothing to do (its process lives, or
 * it was done already), -1 failed (err says why; the file stays). */
__attribute__((noinline)) static int salvage_file(const char *db_path, const char *file,
                                                  writer_status_fn status_of, void *ctx,
                                                  char *err, size_t errn)
{
  int fd = open(file, O_RDWR | O_CLOEXEC);
  int e = errno;
  if (fd < 0 && (e == EACCES || e == EPERM) && maker_lives(file))
    return 0; /* another user's process, still recording */
  if (fd < 0 && (e == EROFS || e == EACCES || e == EPERM)) {
    /* Until someone who can write the files salvages them, readers show
     * the session without these calls. */
    snprintf(err, errn, "%s holds calls of a process that ended before storing them, which "
             "cannot be stored into %s (%s): %s; until then they are not shown", file, db_path,
             strerror(e), e == EROFS ? "mount it writable" :
             "open the session once as a user who can write both");
    return -1;
  }
  if (fd < 0)
    return errno == ENOENT ? 0 : (snprintf(err, errn, "%s: %s", file, strerror(errno)), -1);
  /* The recording process holds this lock until it is gone, from before
   * its file has a header; a file without one may be in the moment
   * between its making and its lock, and is not touched while the process
   * its name gives lives (a lock taken there would make the maker's fail,
   * and the file's removal leave it recording without one). */
  struct stat st;
  if (fstat(fd, &st) != 0 || (st.st_size < (off_t)RINGFILE_HEADER && maker_lives(file)) ||
      !lock_ring(fd) || fstat(fd, &st) != 0) {
    close(fd);
    return 0;
  }
  if (st.st_size < (off_t)RINGFILE_HEADER) { /* its process died creating it */
    drop_files(file);
    close(fd);
    return 0;
  }
  unsigned char *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    snprintf(err, errn, "%s: cannot map it: %s", file, strerror(errno));
    close(fd);
    return -1;
  }
  ringfile_hdr *hdr = (ringfile_hdr *)base;
  int ret = 0;
  void *pmap = NULL;
  size_t pmap_len = 0;
  sqlite3 *d = NULL;
  if (hdr->magic == RINGFILE_MAGIC && hdr->version > RINGFILE_VERSION) {
    /* A newer recorder's: left for a pitrace that reads it (an older one
     * that took it for done removed it, calls and all). */
    snprintf(err, errn, "%s: a ring file of version %u, newer than this pitrace reads (%u); "
             "left for a newer pitrace to salvage", file, hdr->version, RINGFILE_VERSION);
    ret = -1;
    goto out;
  }
  if (hdr->magic != RINGFILE_MAGIC || hdr->version < 1 ||
      atomic_load(&hdr->state) != RINGFILE_LIVE || hdr->ring_cap == 0 ||
      hdr->ring_cap > (1u << 30) || hdr->ring_cap % 8 ||
      (hdr->ring_cap & (hdr->ring_cap - 1)) || hdr->slot_size != RINGFILE_CTL + hdr->ring_cap) {
    drop_files(file); /* done already, or never begun: nothing in it */
    goto out;
  }
  /* Version 2: the process's description, for a row it did not make. */
  session_desc desc;
  bool has_desc = wr__desc_unpack(hdr, &desc);
  char why[512];
  if (!(d = wr__open_rw(db_path, false, why, sizeof why))) {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, why);
    ret = -1;
    goto out;
  }
  wr.db = d;
  sqlite3_stmt *q = NULL;
  const char *ended = NULL;
  int64_t pid = 0, start_ns = 0;
  if (!wr__begin_immediate(wr.db, NULL)) {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, sqlite3_errmsg(wr.db));
    ret = -1;
    goto out;
  }
  /* A database without its tables: its process died before its writer
   * made them, so an old ring file (no description) holds nothing; with a
   * description, they are made, as its writer would have. */
  if (sqlite3_prepare_v2(wr.db, "SELECT 1 FROM sqlite_master WHERE name = 'sessions'", -1, &q,
                         NULL) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_DONE) {
    sqlite3_finalize(q);
    q = NULL;
    if (!has_desc) {
      drop_files(file);
      goto out;
    }
    if (!pt_schema_create(wr.db, why, sizeof why)) {
      snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, why);
      ret = -1;
      goto out;
    }
  }
  sqlite3_finalize(q);
  q = NULL;
  if (wr__schema_version() != PT_SCHEMA_VERSION) {
    snprintf(err, errn, "%s: cannot salvage %s into it: its schema version is not %d", db_path,
             file, PT_SCHEMA_VERSION);
    ret = -1;
    goto out;
  }
  if (sqlite3_prepare_v2(wr.db, "SELECT ended, pid, start_unix_ns FROM sessions WHERE id=?", -1,
                         &q, NULL) != SQLITE_OK) {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, sqlite3_errmsg(wr.db));
    ret = -1;
    goto out;
  }
  /* Its session: the row of that id made by this process (a row of the id
   * that another process made after this one's was rolled back is not). */
  sqlite3_bind_int64(q, 1, hdr->session);
  bool found = false, running = false;
  if (hdr->session > 0 && sqlite3_step(q) == SQLITE_ROW) {
    ended = (const char *)sqlite3_column_text(q, 0);
    pid = sqlite3_column_int64(q, 1);
    start_ns = sqlite3_column_int64(q, 2);
    found = pid == hdr->pid && start_ns == hdr->start_unix_ns;
    running = found && ended && strcmp(ended, "running") == 0;
  }
  sqlite3_finalize(q);
  q = NULL;
  wr.salvaging = true; /* a failure from here on is this salvage's (fail_sql, writer_db.c) */
  wr.salvage_error[0] = 0;
  if (!found && has_desc) {
    /* It died before its row was committed: the row made now. */
    wr.session_id = wr__insert_session(&desc);
    if (!wr.session_id) {
      snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file,
               wr.salvage_error[0] ? wr.salvage_error : sqlite3_errmsg(wr.db));
      ret = -1;
      goto out;
    }
    hdr->session = wr.session_id;
    pid = desc.pid;
    start_ns = desc.start_unix_ns;
    running = true;
  }
  if (!running) { /* its session ended, or is not in this file */
    drop_files(file);
    goto out;
  }
  wr.draining = true;
  wr.salvage_hdr = hdr;
  load_payloads(file, &pmap, &pmap_len);
  /* The process's call stamps, and the knots its writer took. */
  stamp_reset(); /* its knots, not this process's */
  stamp_set_mode(hdr->stamps_tsc == 1);
  uint32_t nk = atomic_load(&hdr->nknots);
  for (uint32_t i = nk > RINGFILE_KNOTS ? nk - RINGFILE_KNOTS : 0; i < nk; i++)
    stamp_add_knot(hdr->knots[i % RINGFILE_KNOTS]);
  wr.session_id = hdr->session;
  wr.session_t0 = hdr->session_t0;
  slot_pos *pos = NULL;
  size_t npos = 0;
  if (!wr__prepare_statements())
    snprintf(why, sizeof why, "%s", sqlite3_errmsg(wr.db));
  else if (wr__load_checkpoint(&pos, &npos, why, sizeof why))
    why[0] = 0;
  if (why[0]) {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file, why);
    free(pos);
    ret = -1;
    goto out;
  }
  uint64_t committed = wr.seq_counter;
  uint32_t nslots = atomic_load(&hdr->nslots), cut = 0;
  uint64_t fit = ((uint64_t)st.st_size - RINGFILE_HEADER) / hdr->slot_size;
  if (nslots > fit) { /* a file cut short (a full disk, a copy): those rings are gone */
    cut = nslots - (uint32_t)fit;
    nslots = (uint32_t)fit;
  }
  shim_ring *list = NULL;
  for (uint32_t k = 0; k < nslots; k++) {
    shim_ring *r = (shim_ring *)(base + RINGFILE_HEADER + (size_t)k * hdr->slot_size);
    size_t rd = 0;
    uint32_t rd_thread = 0;
    for (size_t i = 0; i < npos; i++)
      if (pos[i].slot == k) {
        rd = pos[i].rd;
        rd_thread = pos[i].thread;
      }
    size_t head = atomic_load(&r->head);
    r->buf = (unsigned char *)r + RINGFILE_CTL;
    r->cap = hdr->ring_cap;
    r->slot = k;
    if (head < rd || head - rd > r->cap || rd % 8) { /* damaged: nothing to trust */
      wr.damaged++;
      rd = head;
    }
    r->rd = r->head_seen = rd;
    r->rd_thread = rd_thread;
    r->next = list;
    list = r;
  }
  free(pos);
  wr.salvage_list = list;
  wr__merge();
  uint64_t pending = 0;
  for (pending_call *c = wr.inflight; c; c = c->next)
    pending++;
  wr__write_plugins();
  wr__flush_chunk();
  wr__write_chunks();
  wr__write_inflight();
  wr__write_waiting_notes();
  int ws = 0;
  const char *how = "killed";
  int signo = 0, code = -1;
  /* A fatal signal the process said it was ending on: its writer did not
   * finish storing in the time it was given. */
  int noted = atomic_load(&hdr->ending_signal);
  bool in_order = noted == RINGFILE_ENDED_IN_ORDER;
  if (noted <= 0 || noted >= 65) /* none, or not a signal: a damaged header */
    noted = 0;
  /* Its process runs on (the same pid and start) without holding the
   * file: it exec'd another program, which closed it. */
  char pstate = 0;
  bool went_on = hdr->proc_start && hdr->pid > 0 &&
                 ringfile_proc_start(hdr->pid, &pstate) == hdr->proc_start && pstate != 'Z' &&
                 pstate != 'X';
  /* Gone by now: the caller (pitrace record) may know how it ended, or
   * that it went on as a program that ended since. */
  writer_status known = WRITER_STATUS_UNKNOWN;
  if (!went_on && status_of)
    known = status_of(ctx, (int)pid, start_ns, &ws);
  went_on |= known == WRITER_STATUS_EXEC;
  if (went_on) {
    how = "exec";
    noted = 0;
  } else if (known == WRITER_STATUS_KNOWN) {
    if (WIFSIGNALED(ws)) {
      signo = WTERMSIG(ws);
      code = 128 + signo;
    } else if (WIFEXITED(ws)) {
      how = in_order ? "teardown" : "_exit";
      code = WEXITSTATUS(ws);
    }
  } else if (in_order) {
    how = "teardown";
  } else if (noted) {
    signo = noted;
    code = 128 + signo;
  }
  char reason[512]; /* the lead (128) and four parts of at most 80: never cut */
  char lead[128] = "the process ended without a word";
  if (went_on)
    snprintf(lead, sizeof lead, "pid %d went on as another program (exec)", (int)hdr->pid);
  else if (noted)
    snprintf(lead, sizeof lead, "the process was ending on signal %d (%s) before its writer "
             "stored its last calls", noted, strsignal(noted));
  else if (in_order && !signo)
    snprintf(lead, sizeof lead, "its writer could not store its last calls in time (the file "
             "was held by another process)");
  int len = snprintf(reason, sizeof reason, "%s; %llu call%s salvaged from its rings", lead,
                     (unsigned long long)(wr.seq_counter - committed),
                     wr.seq_counter - committed == 1 ? "" : "s");
  if (pending)
    len += snprintf(reason + len, sizeof reason - (size_t)len, ", %llu never returned",
                    (unsigned long long)pending);
  if (wr.damaged)
    len += snprintf(reason + len, sizeof reason - (size_t)len, "; %llu damaged record%s skipped",
                    (unsigned long long)wr.damaged, wr.damaged == 1 ? "" : "s");
  if (cut)
    snprintf(reason + len, sizeof reason - (size_t)len,
             "; %u ring%s past the end of its ring file, which was cut short", cut,
             cut == 1 ? "" : "s");
  uint64_t dur = wr.last_t > wr.session_t0 ? wr.last_t - wr.session_t0 : 0;
  /* Damaged call times can make that anything (and start + it overflow):
   * the calls were made between the session's start and now. */
  struct timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  int64_t now_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
  uint64_t most = start_ns >= 0 && now_ns > start_ns ? (uint64_t)(now_ns - start_ns) : 0;
  if (dur > most)
    dur = most;
  wr__end_session(how, signo, start_ns + (int64_t)dur, dur, reason, code);
  if (!wr.failed && sqlite3_exec(wr.db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) {
    atomic_store(&hdr->state, RINGFILE_DONE);
    drop_files(file);
    ret = 1;
    /* One file again, as a session that ended in order, unless another
     * process still uses the database. */
    sqlite3_busy_handler(wr.db, NULL, NULL);
    sqlite3_exec(wr.db, "PRAGMA journal_mode=DELETE;", NULL, NULL, NULL);
  } else {
    snprintf(err, errn, "%s: cannot salvage %s into it: %s", db_path, file,
             wr.salvage_error[0] ? wr.salvage_error : sqlite3_errmsg(wr.db));
    ret = -1;
  }
out:
  wr.salvage_list = NULL;
  free(wr.salvage_payloads);
  wr.salvage_payloads = NULL;
  wr.nsalvage_payloads = 0;
  if (pmap)
    munmap(pmap, pmap_len);
  wr__finalize_statements();
  if (d)
    wr__close_db(d); /* an open transaction is rolled back */
  wr.db = NULL;
  wr__reset_state();
  munmap(base, (size_t)st.st_size);
  close(fd);
  return ret;
}

/* db_path's directory (into dir, "." or "/" when it has none) and the
 * prefix of the ring files beside it (DB-rings.). */
static void rings_place(const char *db_path, char *dir, size_t dirn, char *prefix, size_t pn)
{
  const char *slash = strrchr(db_path, '/');
  if (!slash)
    snprintf(dir, dirn, ".");
  else if (slash == db_path)
    snprintf(dir, dirn, "/");
  else
    snprintf(dir, dirn, "%.*s", (int)(slash - db_path), db_path);
  snprintf(prefix, pn, "%s-rings.", slash ? slash + 1 : db_path);
}

/* Hands each ring file beside db_path (DB-rings.*) to fn with ctx, until
 * fn returns false. */
static void each_ring_file(const char *db_path, bool (*fn)(const char *file, void *ctx),
                           void *ctx)
{
  char dir[4096], prefix[4200];
  rings_place(db_path, dir, sizeof dir, prefix, sizeof prefix);
  DIR *dd = opendir(dir);
  if (!dd)
    return;
  size_t plen = strlen(prefix);
  bool more = true;
  struct dirent *e;
  while (more && (e = readdir(dd)))
    if (strncmp(e->d_name, prefix, plen) == 0) {
      char file[8400];
      snprintf(file, sizeof file, "%s/%s", dir, e->d_name);
      more = fn(file, ctx);
    }
  closedir(dd);
}

typedef struct salvage_ctx {
  const char *db_path;
  writer_status_fn status_of;
  void *status_ctx;
  char *err;
  size_t errn;
  int n; /* salvaged, or -1 after a failure (err says it) */
} salvage_ctx;

static bool salvage_one(const char *file, void *p)
{
  salvage_ctx *c = p;
  /* Not this process's own, which it has locked: a lock taken again by
   * the same process is granted, and closing the file then would let go
   * of the process's own lock. */
  struct stat st;
  if (stat(file, &st) == 0 && ringfile_is_own(&st))
    return true;
  char one[1024];
  int r = salvage_file(c->db_path, file, c->status_of, c->status_ctx, one, sizeof one);
  if (r < 0 && c->n >= 0) {
    snprintf(c->err, c->errn, "%s", one);
    c->n = -1;
  } else if (r > 0 && c->n >= 0) {
    c->n++;
  }
  return true;
}

int wr__salvage_dir(const char *db_path, writer_status_fn status_of, void *ctx, char *err,
                    size_t errn)
{
  salvage_ctx c = {db_path, status_of, ctx, err, errn, 0};
  each_ring_file(db_path, salvage_one, &c);
  return c.n;
}

typedef struct recorder_ctx {
  int64_t session, pid;
} recorder_ctx;

/* Whether file is the ring file of c->session: locked by a live process
 * (its pid into c->pid), or left by a dead one (-1). Goes on while not. */
static bool find_recorder(const char *file, void *p)
{
  recorder_ctx *c = p;
  int fd = open(file, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return true;
  struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  ringfile_hdr h;
  if (pread(fd, &h, offsetof(ringfile_hdr, instances), 0) ==
          (ssize_t)offsetof(ringfile_hdr, instances) &&
      h.magic == RINGFILE_MAGIC && h.session == c->session && fcntl(fd, F_GETLK, &lk) == 0)
    /* Held by its recorder (the pid its header names), or by a reader
     * salvaging it at this moment, whose pid was shown as the recorder's
     * ("recording (pid N)" for a process killed a while ago). */
    c->pid = lk.l_type != F_UNLCK && lk.l_pid == h.pid ? lk.l_pid : -1;
  close(fd);
  return !c->pid;
}

int64_t writer_recorder_of(const char *db_path, int64_t session)
{
  recorder_ctx c = {session, 0};
  each_ring_file(db_path, find_recorder, &c);
  return c.pid;
}

/* ---- Listed once a directory (writer_salvage_listed) ------------------------------ */

/* The directories whose ring files were listed, the last few (a diff
 * reads two record directories in turn): each by its identity and its
 * modification time when listed, with the names of the ring files then
 * in it (usually none). */
typedef struct dir_listed {
  dev_t dev;
  ino_t ino;
  struct timespec mtime;
  char **rings;
  size_t nrings;
} dir_listed;

#define DIRS_LISTED 4
static dir_listed listed[DIRS_LISTED];
static unsigned listed_next;
static pthread_mutex_t listed_lock = PTHREAD_MUTEX_INITIALIZER;

static void forget_listing(dir_listed *d)
{
  for (size_t i = 0; i < d->nrings; i++)
    free(d->rings[i]);
  free(d->rings);
  memset(d, 0, sizeof *d);
}

/* The listing of dir as it is now (st: its stat), listed again if it
 * changed; NULL when it cannot be read or memory runs out. */
static const dir_listed *listing_of(const char *dir, const struct stat *st)
{
  for (unsigned i = 0; i < DIRS_LISTED; i++) {
    dir_listed *d = &listed[i];
    if (d->ino == st->st_ino && d->dev == st->st_dev && d->mtime.tv_sec == st->st_mtim.tv_sec &&
        d->mtime.tv_nsec == st->st_mtim.tv_nsec)
      return d;
  }
  DIR *dd = opendir(dir);
  if (!dd)
    return NULL;
  dir_listed *d = &listed[listed_next++ % DIRS_LISTED];
  forget_listing(d);
  size_t cap = 0;
  bool ok = true;
  struct dirent *e;
  while (ok && (e = readdir(dd)))
    if (strstr(e->d_name, "-rings.")) {
      char *name = strdup(e->d_name);
      if (d->nrings == cap) {
        size_t c = cap ? cap * 2 : 8;
        char **v = realloc(d->rings, c * sizeof *v);
        if (v) {
          d->rings = v;
          cap = c;
        }
      }
      if (!name || d->nrings == cap) {
        free(name);
        ok = false;
      } else {
        d->rings[d->nrings++] = name;
      }
    }
  closedir(dd);
  if (!ok) {
    forget_listing(d);
    return NULL;
  }
  d->dev = st->st_dev;
  d->ino = st->st_ino;
  d->mtime = st->st_mtim;
  return d;
}

int writer_salvage_listed(const char *db_path, char *err, size_t errn)
{
  char dir[4096], prefix[4200];
  rings_place(db_path, dir, sizeof dir, prefix, sizeof prefix);
  struct stat st;
  if (stat(dir, &st) != 0)
    return 0;
  pthread_mutex_lock(&listed_lock);
  const dir_listed *d = listing_of(dir, &st);
  bool any = !d; /* not listed: look the long way */
  size_t plen = strlen(prefix);
  for (size_t i = 0; d && !any && i < d->nrings; i++)
    any = strncmp(d->rings[i], prefix, plen) == 0;
  int n = any ? writer_salvage(db_path, NULL, NULL, err, errn) : 0;
  pthread_mutex_unlock(&listed_lock);
  return n;
}
