/*
 * writer_db.c: the writer's SQLite: opening the session database (the
 * template put in place, the busy handler, the schema checked), the
 * prepared statements, writing in transactions that take the lock only
 * when there is something to write, the session's row made from its
 * description (by the writer, or by a salvager when the process died
 * first), payloads stored once by their hash, and the session's end.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "writer_internal.h"

#define BUSY_MS 30000u /* the longest wait for another process's lock (busy_wait) */

/* Taking turns with the other processes that write into the file. SQLite's
 * lock has no queue: a waiter polls (busy_wait) and gets the lock only if
 * it looks in the moment between another writer's commit and its next
 * write. A recorder storing a stream of payloads writes again at once (and
 * commits every COMMIT_NS, wr.long_txn: it used to hold one transaction
 * for the whole stream, and for the whole backlog it stored at its end),
 * so a process that began recording into the same file beside it waited
 * for the lock until that recorder ended: 0.4 to 2.1 s for the three
 * queries of `record_prog plain 3` beside `record_prog bigwrites 4 100`
 * (bench/results/2026-11-28-round23/turns.sh), and beside `bigwrites 8
 * 255` its end gave up after its 10 s, leaving its calls to a salvager.
 * Now a waiter says so with a shared lock on one byte of the database
 * file (an open-file-description lock on PT_TURN_BYTE, recorder.h, out of
 * the bytes SQLite locks, through a descriptor of its own that is closed
 * only after the connection: closing any descriptor of a file drops the
 * process's POSIX locks on it, SQLite's included); a writer that commits
 * and finds such a lock lets the waiters have SQLite's lock (each lets go
 * of its own once it has it) before it writes again, for at most
 * TURN_YIELD_MS. */
#define TURN_YIELD_MS 20u
static struct {
  sqlite3 *db; /* the connection the descriptor goes with */
  int fd;
  bool want;    /* in wr__begin_immediate: a wait is for the write lock */
  bool waiting; /* holding the shared lock: waiting for SQLite's */
  bool yield;   /* others waited at the last commit */
} turn = {NULL, -1, false, false, false};

static bool turn_lock(int cmd, short type)
{
  struct flock l = {.l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)PT_TURN_BYTE,
                    .l_len = 1};
  if (fcntl(turn.fd, cmd, &l) != 0)
    return false;
  return cmd != F_OFD_GETLK || l.l_type != F_UNLCK;
}

/* Waiting for SQLite's write lock: said to the holder. Only then (busy_wait
 * runs for other waits too: a commit waiting for readers to leave, a
 * page cache spilled inside a transaction), and withdrawn as soon as the
 * BEGIN is over, or a writer would yield to a waiter that waits no more. */
static void turn_announce(void)
{
  if (turn.want && turn.fd >= 0 && !turn.waiting)
    turn.waiting = turn_lock(F_OFD_SETLK, F_RDLCK);
}

static void turn_taken(void)
{
  if (turn.waiting)
    turn_lock(F_OFD_SETLK, F_UNLCK);
  turn.waiting = false;
}

bool wr__begin_immediate(sqlite3 *d, char **err)
{
  turn.want = d == turn.db;
  bool ok = sqlite3_exec(d, "BEGIN IMMEDIATE", NULL, NULL, err) == SQLITE_OK;
  turn.want = false;
  turn_taken();
  if (ok)
    wr.txn_began = shim_now();
  return ok;
}

/* Whether another process waits for the lock. */
static bool turn_others_wait(void)
{
  return turn.fd >= 0 && turn_lock(F_OFD_GETLK, F_WRLCK);
}

/* Before writing again after a commit that found waiters: until they had
 * their turn (or TURN_YIELD_MS). */
static void turn_yield(void)
{
  turn.yield = false;
  uint64_t until = shim_now() + (uint64_t)TURN_YIELD_MS * 1000000u;
  struct timespec nap = {0, 100000};
  while (turn_others_wait() && shim_now() < until)
    nanosleep(&nap, NULL);
}

void wr__close_db(sqlite3 *d)
{
  /* Only once SQLite let go of its locks (a connection it could not close
   * keeps them, and the descriptor with them). */
  if (sqlite3_close(d) != SQLITE_OK || !d || d != turn.db)
    return;
  turn_taken();
  if (turn.fd >= 0)
    close(turn.fd);
  turn.db = NULL;
  turn.fd = -1;
  turn.yield = false;
}

void wr__turn_fork_child(void)
{
  if (turn.fd >= 0) /* the parent's: this process has no lock on the file yet */
    close(turn.fd);
  turn.db = NULL;
  turn.fd = -1;
  turn.waiting = turn.yield = false;
}
#define BLOB_WRITE_MIN (64u << 10) /* from here on a payload is written into its row (store_blob) */

static void fail_sql(const char *what)
{
  if (wr.failed)
    return;
  wr.failed = true;
  if (wr.salvaging) { /* writer_salvage says why */
    snprintf(wr.salvage_error, sizeof wr.salvage_error, "%s: %s", what,
             wr.db ? sqlite3_errmsg(wr.db) : "no database");
    return;
  }
  atomic_store(&shim_recording, false);
  /* Locked: say by whom it can be, and for how long it was waited for. */
  char why[256];
  if (wr.db && (sqlite3_errcode(wr.db) == SQLITE_BUSY || sqlite3_errcode(wr.db) == SQLITE_LOCKED))
    snprintf(why, sizeof why, "another process held the file for %u s: a reader inside a "
             "transaction, or another recorder", BUSY_MS / 1000);
  else if (wr.db && (sqlite3_errcode(wr.db) & 0xff) == SQLITE_IOERR)
    pt_sqlite_write_error(wr.db, why, sizeof why); /* the cause (schema.h) */
  else
    snprintf(why, sizeof why, "%s", wr.db ? sqlite3_errmsg(wr.db) : "no database");
  bool marked = false, kept = false;
  if (wr.db) {
    sqlite3_exec(wr.db, "ROLLBACK", NULL, NULL, NULL);
    char sql[256];
    snprintf(sql, sizeof sql, "UPDATE sessions SET ended='incomplete', "
             "incomplete_reason=%s WHERE id=%lld", "'recording failed: disk full or "
             "write error'", (long long)wr.session_id);
    marked = sqlite3_exec(wr.db, sql, NULL, NULL, NULL) == SQLITE_OK && sqlite3_changes(wr.db);
    snprintf(sql, sizeof sql, "SELECT 1 FROM sessions WHERE id=%lld", (long long)wr.session_id);
    sqlite3_stmt *q = NULL;
    /* A failed rollback (a file size limit below the file's size: the
     * program lowered it) leaves the file needing one, and the query
     * fails: the row is there all the same once a commit took it. */
    kept = marked || wr.committed || (wr.session_id > 0 &&
                      sqlite3_prepare_v2(wr.db, sql, -1, &q, NULL) == SQLITE_OK &&
                      sqlite3_step(q) == SQLITE_ROW);
    sqlite3_finalize(q);
  }
  /* No session row committed yet (the file could not take even that): none
   * to mark, and the file, if left empty, goes (writer.c). On a full disk
   * the mark itself may not be written: the session then stays as last
   * committed. */
  fprintf(stderr, "pitrace: recording to %s stopped (%s: %s); the application goes on "
                  "unrecorded, and %s\n", shim_cfg.path, what, why,
          marked ? "the session is marked incomplete"
          : kept ? "the session stays as its last commit left it"
                 : "no session was kept");
}

/* Room kept for the calls when payloads would fill the disk: 1 MiB, some
 * 40,000 calls more (the ring file's slots are allocated already), and
 * the 2 MiB of pages SQLite may hold in memory (its default cache) before
 * writing them, which the disk's free space does not show yet. */
#define CALLS_RESERVE (3u << 20)

/* ---- Room kept for a disk that fills ----------------------------------------------
 * CALLS_RESERVE bytes taken on the session's file system as the session
 * begins, in a file without a name (O_TMPFILE, or made and unlinked at
 * once: a process killed leaves nothing behind, its descriptor closes).
 * When a write meets a full disk (another process filled it, or what
 * room_for saw was not all there), SQLite takes back the whole
 * transaction, every call since the last commit, and the recording
 * stopped. The room is given back before that (room_check): the calls so
 * far are kept, and later ones go on being recorded, without their data,
 * until that room is used too. */
static int reserve_fd = -1;
#define GIVE_BACK_BELOW (1u << 20)

/* The session's directory (of shim_cfg.path) into dir (n bytes). */
static void session_dir(char *dir, size_t n)
{
  snprintf(dir, n, "%s", shim_cfg.path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, n, ".");
  else if (slash == dir)
    dir[1] = 0;
  else
    *slash = 0;
}

void wr__reserve_take(void)
{
  /* Not on a disk with little room: taken, it would leave the payloads
   * none (room_for) from the first call on. */
  struct statvfs sv;
  if (reserve_fd >= 0 || wr.salvaging || !pt_fsize_allows(CALLS_RESERVE) ||
      statvfs(shim_cfg.path, &sv) != 0 ||
      (uint64_t)sv.f_bavail * sv.f_frsize < 4 * (uint64_t)CALLS_RESERVE)
    return;
  char dir[PATH_MAX];
  session_dir(dir, sizeof dir);
  int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) { /* a file system without O_TMPFILE */
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s/.pitrace-room-XXXXXX", dir);
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0)
      unlink(tmp);
  }
  if (fd < 0)
    return;
  if (posix_fallocate(fd, 0, CALLS_RESERVE) != 0) { /* no room for it: none kept */
    close(fd);
    return;
  }
  reserve_fd = fd;
}

void wr__reserve_forget(void)
{
  if (reserve_fd >= 0)
    close(reserve_fd);
  reserve_fd = -1;
}

/* The room kept is given back, and no data is stored from now on (the
 * session says from which call, as room_for's drop does). Inside the
 * transaction. */
static void give_back(void)
{
  wr__reserve_forget();
  if (wr.failed)
    return; /* recording stopped, and said so: no call is kept from here */
  if (atomic_exchange_explicit(&shim_data_dropped, true, memory_order_relaxed))
    return; /* room_for said so already */
  unsigned long long seq = (unsigned long long)wr.seq_counter + 1;
  fprintf(stderr, "pitrace: recording to %s: the disk is full; the %u MiB kept for this are "
                  "given back, so the calls so far are kept, and the calls from %llu on are "
                  "recorded without their data until that room is used too (recording then "
                  "stops)\n", shim_cfg.path, CALLS_RESERVE >> 20, seq);
  char sql[320];
  snprintf(sql, sizeof sql, "UPDATE sessions SET incomplete_reason='" PT_DATA_CUT "%llu on not "
           "stored: the disk filled (the room kept for the calls was given back)' WHERE id=%lld",
           seq, (long long)wr.session_id);
  sqlite3_exec(wr.db, sql, NULL, NULL, NULL); /* the room is there now */
}

/* Before a write: the room kept is given back once the disk has less than
 * GIVE_BACK_BELOW free (SQLite's cache may hold 2 MiB of pages that are
 * not on the disk yet: with the room given back they fit). After the
 * write is too late: a commit, or a statement that writes pages out of
 * the cache, that meets a full disk takes the whole transaction back.
 * Looked at before each commit, and before other statements once a
 * millisecond at most (statvfs: a system call). A disk filled faster than
 * that, between the look and the write, still meets the write. */
static void room_check(bool always)
{
  static uint64_t last;
  if (reserve_fd < 0)
    return;
  uint64_t now = shim_now();
  if (!always && now - last < 1000000u)
    return;
  last = now;
  struct statvfs sv;
  if (statvfs(shim_cfg.path, &sv) == 0 && (uint64_t)sv.f_bavail * sv.f_frsize < GIVE_BACK_BELOW)
    give_back();
}

/* The write lock is taken when there is something to write, not held
 * between commits: a transaction begins (IMMEDIATE: the lock first, so
 * that two processes never each hold a read lock the other's commit waits
 * for) at the first statement after a commit. */
static bool begin_writing(const char *what)
{
  if (!sqlite3_get_autocommit(wr.db))
    return true;
  if (turn.yield)
    turn_yield();
  bool ok = wr__begin_immediate(wr.db, NULL);
  if (!ok)
    fail_sql(what);
  return ok;
}

/* Runs a write statement (beginning the transaction first), resets it;
 * false once writing failed (fail_sql said why). */
bool wr__step(sqlite3_stmt *s, const char *what)
{
  if (!begin_writing(what)) {
    sqlite3_reset(s);
    sqlite3_clear_bindings(s);
    return false;
  }
  room_check(false);
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  sqlite3_clear_bindings(s);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    fail_sql(what);
    return false;
  }
  return true;
}

/* Commits what was written since the last commit (nothing: true). */
bool wr__commit_writes(void)
{
  wr.long_txn = false;
  if (sqlite3_get_autocommit(wr.db))
    return true;
  room_check(true);
  if (sqlite3_exec(wr.db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    fail_sql("writing the session");
    return false;
  }
  wr.committed = true;
  turn.yield = turn_others_wait();
  return true;
}

/* A statement kept for the connection's life; NULL after one line. */
sqlite3_stmt *wr__prepare(const char *sql)
{
  sqlite3_stmt *s = NULL;
  if (sqlite3_prepare_v3(wr.db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s, NULL) != SQLITE_OK) {
    fprintf(stderr, "pitrace: internal error preparing '%s': %s\n", sql, sqlite3_errmsg(wr.db));
    return NULL;
  }
  return s;
}

/* A payload's content into blobs under its key, unless there already.
 * A large one is written into a row made for it (zeroblob, then
 * sqlite3_blob_write): bound as a value, SQLite would first copy it whole
 * into a record of its own (three 16 MiB payloads: 29 to 32 ms stored
 * this way, 34 to 67 ms bound, on the 2-core machine). A write that fails
 * fails the transaction, whose rollback takes the zeroed row away. */
static bool store_blob(const unsigned char *key, const void *bytes, uint64_t size)
{
  bool big = size >= BLOB_WRITE_MIN && size <= INT_MAX;
  sqlite3_stmt *s = big ? wr.st_blob_zero : wr.st_blob;
  sqlite3_bind_blob(s, 1, key, PT_BLOB_KEY, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, (int64_t)size);
  if (big)
    sqlite3_bind_int64(s, 3, (int64_t)size);
  else
    sqlite3_bind_blob64(s, 3, bytes, size, SQLITE_STATIC);
  if (!wr__step(s, "storing data"))
    return false;
  if (!big || !sqlite3_changes(wr.db)) /* stored already: the same content */
    return true;
  sqlite3_blob *b = NULL;
  bool ok = sqlite3_blob_open(wr.db, "main", "blobs", "content", sqlite3_last_insert_rowid(wr.db),
                              1, &b) == SQLITE_OK &&
            sqlite3_blob_write(b, bytes, (int)size, 0) == SQLITE_OK;
  if (sqlite3_blob_close(b) != SQLITE_OK)
    ok = false;
  if (!ok)
    fail_sql("storing data");
  return ok;
}


/* Whether a payload of `size` bytes, for the call at seq, fits on the
 * disk with room left for the calls; if not, payloads are no longer
 * stored, and the session says from which call on. A full disk met by a
 * write makes SQLite take back the whole transaction, every call since
 * the last commit with it (all of a short program's), and stops the
 * recording: so the room is looked at first (statvfs, and the file size
 * limit), again only once what was stored since nears what was found. Not
 * while salvaging: a salvage that fails leaves its ring file whole for a
 * reader with room. What the ring file and payload file beside it took
 * since counts against the room too (4 threads writing 2 MiB buffers on
 * a 100 MiB disk: their ring slots, made after the look, made the
 * session's write meet a full disk, 3 runs of 3). Another process filling the disk
 * meanwhile still stops the recording. */
static bool room_for(uint64_t size, uint64_t seq)
{
  uint64_t need = size + size / 16 + 4096; /* pages and their headers */
  /* Ring slots and payload file regions made beside it since. */
  uint64_t taken = atomic_exchange_explicit(&shim_disk_taken, 0, memory_order_relaxed);
  wr.room = wr.room > taken ? wr.room - taken : 0;
  if (wr.salvaging || wr.room >= need + CALLS_RESERVE) {
    wr.room = wr.room >= need ? wr.room - need : 0;
    return true;
  }
  struct statvfs sv;
  struct stat st;
  struct rlimit lim;
  uint64_t room = UINT64_MAX;
  if (statvfs(shim_cfg.path, &sv) == 0)
    room = (uint64_t)sv.f_bavail * sv.f_frsize;
  if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
      stat(shim_cfg.path, &st) == 0) {
    uint64_t left = (uint64_t)lim.rlim_cur > (uint64_t)st.st_size
                        ? (uint64_t)lim.rlim_cur - (uint64_t)st.st_size
                        : 0;
    if (left < room)
      room = left;
  }
  wr.room = room;
  if (room >= need + CALLS_RESERVE) {
    wr.room -= need;
    return true;
  }
  atomic_store_explicit(&shim_data_dropped, true, memory_order_relaxed); /* copy no more */
  char why[160], sql[320];
  snprintf(why, sizeof why, "%llu bytes of it, with %llu KiB free for the session file, kept "
           "for the calls", (unsigned long long)size, (unsigned long long)(room >> 10));
  /* Below the calls' own reserve the calls may not fit either (a commit
   * journals 16 KiB pages): not promised then (on 80 KiB free it said
   * they go on, and the next commit met the full disk). */
  fprintf(stderr, "pitrace: recording to %s: the data of call %llu on is not stored (%s); %s\n",
          shim_cfg.path, (unsigned long long)seq, why,
          room >= CALLS_RESERVE ? "the calls go on being recorded without it"
                                : "the calls go on being recorded without it while the disk "
                                  "has room for them, which it may not (recording then stops)");
  snprintf(sql, sizeof sql, "UPDATE sessions SET incomplete_reason='" PT_DATA_CUT "%llu on not "
           "stored: %s' WHERE id=%lld", (unsigned long long)seq, why, (long long)wr.session_id);
  if (begin_writing("storing data") && sqlite3_exec(wr.db, sql, NULL, NULL, NULL) != SQLITE_OK)
    fail_sql("storing data");
  return false;
}

/* Stores a payload: inline when small, else once by its hash. */
void wr__store_data(uint64_t seq, unsigned position, const char *role, unsigned index,
                    const void *bytes, uint64_t size, uint64_t full, int64_t captured_seq)
{
  /* Its size only, as with data=meta, once the data is left out. */
  if (bytes && ((!wr.salvaging && atomic_load_explicit(&shim_data_dropped, memory_order_relaxed)) ||
                !room_for(size, seq)))
    bytes = NULL, size = 0;
  sqlite3_bind_int64(wr.st_data, 1, wr.session_id);
  sqlite3_bind_int64(wr.st_data, 2, (int64_t)seq);
  sqlite3_bind_int(wr.st_data, 3, (int)position);
  sqlite3_bind_text(wr.st_data, 4, role, -1, SQLITE_STATIC);
  sqlite3_bind_int(wr.st_data, 5, (int)index);
  sqlite3_bind_int64(wr.st_data, 6, (int64_t)full);
  if (captured_seq >= 0)
    sqlite3_bind_int64(wr.st_data, 9, captured_seq);
  if (size <= PT_INLINE_DATA || !bytes) {
    if (bytes && (size || full == 0))
      sqlite3_bind_blob(wr.st_data, 8, bytes, (int)size, SQLITE_STATIC);
    sqlite3_bind_int64(wr.st_data, 10, (int64_t)size);
  } else {
    unsigned char key[PT_BLOB_KEY];
    pt_blob_key(bytes, size, key);
    if (!store_blob(key, bytes, size))
      return;
    /* The merge goes on while records come, and a ring fills slowly when
     * its calls' payloads are in the payload file: a stream of large
     * payloads held one transaction (and the file's lock: other processes
     * recording into it waited) for as long as it lasted, seconds, and so
     * did the end of a process that left a backlog of them. Not while
     * salvaging: a salvage is one transaction, or none. */
    if (!wr.salvaging && shim_now() - wr.txn_began > COMMIT_NS)
      wr.long_txn = true;
    sqlite3_bind_blob(wr.st_data, 7, key, PT_BLOB_KEY, SQLITE_TRANSIENT);
    sqlite3_bind_int64(wr.st_data, 10, (int64_t)size);
  }
  wr__step(wr.st_data, "storing data");
}

/* A call still running: the inflight table, until it returns. */
void wr__insert_running(pending_call *c, const text *args)
{
  static text data; /* the writer is one thread */
  data.len = 0;
  wr__put_data(&data, c);
  sqlite3_stmt *s = wr.st_inflight;
  sqlite3_bind_int64(s, 1, wr.session_id);
  sqlite3_bind_int64(s, 2, (int64_t)c->seq);
  sqlite3_bind_int(s, 3, (int)c->thread);
  sqlite3_bind_int(s, 4, (int)c->plugin);
  sqlite3_bind_int(s, 5, c->api);
  sqlite3_bind_int64(s, 6, (int64_t)(c->t0 - wr.session_t0));
  sqlite3_bind_text(s, 7, args->p, (int)args->len, SQLITE_TRANSIENT);
  if (c->stack >= 0)
    sqlite3_bind_int64(s, 8, c->stack);
  if (data.len)
    sqlite3_bind_text(s, 9, data.p, (int)data.len, SQLITE_TRANSIENT);
  wr__step(s, "storing a running call");
  c->inserted = true;
}

/* The plugins not written yet: this process's instances, or (salvaging)
 * the ring file's copy of them. */
void wr__write_plugins(void)
{
  for (;; wr.plugins_written++) {
    const char *name, *path, *version, *backend;
    uint32_t index;
    if (wr.salvage_hdr) {
      if (wr.plugins_written >= SHIM_MAX_INSTANCES ||
          !wr.salvage_hdr->instances[wr.plugins_written].set)
        return;
      const ringfile_instance *in = &wr.salvage_hdr->instances[wr.plugins_written];
      name = in->name, path = in->path, version = in->version, backend = in->backend;
      index = in->index;
    } else {
      if (wr.plugins_written >= atomic_load(&shim_ninstances))
        return;
      const shim_instance *in = &shim_instances[wr.plugins_written];
      name = in->name, path = in->path, version = in->version, backend = in->backend;
      index = in->index;
    }
    sqlite3_bind_int64(wr.st_plugin, 1, wr.session_id);
    sqlite3_bind_int(wr.st_plugin, 2, (int)index);
    sqlite3_bind_text(wr.st_plugin, 3, name, (int)strnlen(name, 256), SQLITE_TRANSIENT);
    sqlite3_bind_text(wr.st_plugin, 4, path, (int)strnlen(path, 1024), SQLITE_TRANSIENT);
    sqlite3_bind_text(wr.st_plugin, 5, version, (int)strnlen(version, 32), SQLITE_TRANSIENT);
    sqlite3_bind_text(wr.st_plugin, 6, backend, (int)strnlen(backend, 32), SQLITE_TRANSIENT);
    wr__step(wr.st_plugin, "storing a plugin");
  }
}

/* The session's end: `how` and `signo` as writer_finish has them. */
void wr__end_session(const char *how, int signo, int64_t end_unix_ns, uint64_t duration,
                     const char *reason, int exit_status)
{
  /* A reason given (a salvage's) goes before what the session said
   * already of its data (room_for), which stays. */
  sqlite3_stmt *u = wr__prepare("UPDATE sessions SET ended=?, signal=?, end_unix_ns=?, "
                                "duration_ns=?, calls=?, incomplete_reason=CASE WHEN ?6 IS "
                                "NULL THEN incomplete_reason WHEN incomplete_reason LIKE "
                                "'" PT_DATA_CUT "% on not stored: %' THEN ?6 || '; ' || "
                                "incomplete_reason ELSE ?6 END, exit_status=coalesce(?, "
                                "exit_status) WHERE id=?");
  if (u) {
    sqlite3_bind_text(u, 1, how, -1, SQLITE_TRANSIENT);
    if (signo)
      sqlite3_bind_int(u, 2, signo);
    sqlite3_bind_int64(u, 3, end_unix_ns);
    sqlite3_bind_int64(u, 4, (int64_t)duration);
    sqlite3_bind_int64(u, 5, (int64_t)wr.seq_counter);
    if (reason)
      sqlite3_bind_text(u, 6, reason, -1, SQLITE_TRANSIENT);
    if (exit_status >= 0)
      sqlite3_bind_int(u, 7, exit_status);
    sqlite3_bind_int64(u, 8, wr.session_id);
    wr__step(u, "ending the session");
    sqlite3_finalize(u);
  }
  sqlite3_stmt *d = wr__prepare("DELETE FROM recorder_state WHERE session=?");
  if (d) {
    sqlite3_bind_int64(d, 1, wr.session_id);
    wr__step(d, "ending the session");
    sqlite3_finalize(d);
  }
}

/* SQLite's busy handler: other processes recording into the same file
 * hold its write lock while they commit, and readers hold off a commit
 * while they read. Polls often (their commits are short, and a waiter
 * that sleeps long misses its turn), for at most BUSY_MS in all; then the
 * caller says the database stayed locked. */
static int busy_wait(void *arg, int n)
{
  (void)arg;
  static __thread uint64_t since;
  if (n == 0) {
    since = shim_now();
    turn_announce();
  }
  if (shim_now() - since > (uint64_t)BUSY_MS * 1000000u) {
    turn_taken(); /* given up */
    return 0;
  }
  struct timespec nap = {0, n < 20 ? 100000 : 1000000};
  nanosleep(&nap, NULL);
  return 1;
}

/* Opens `path` for writing with the busy handler; NULL with a reason. */
sqlite3 *wr__open_rw(const char *path, bool create, char *err, size_t errn)
{
  sqlite3 *d = NULL;
  int rc = sqlite3_open_v2(path, &d, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
                                         (create ? SQLITE_OPEN_CREATE : 0), NULL);
  if (rc != SQLITE_OK) {
    snprintf(err, errn, "%s", d ? sqlite3_errmsg(d) : sqlite3_errstr(rc));
    sqlite3_close(d);
    return NULL;
  }
  sqlite3_busy_handler(d, busy_wait, NULL);
  pt_sqlite_register(d);
  if (!turn.db) { /* one writing connection at a time (salvage, then the session) */
    turn.db = d;
    turn.fd = open(path, O_RDONLY | O_CLOEXEC);
  }
  return d;
}

/* The statements the writer uses for every session, on wr.db. */
bool wr__prepare_statements(void)
{
  wr.st_chunk =
      wr__prepare("INSERT INTO call_chunks(session, id, first_seq, last_seq, ncalls, calls) "
                  "VALUES (?,?,?,?,?,?)");
  wr.st_inflight = wr__prepare("INSERT OR REPLACE INTO inflight(session, seq, thread, plugin, api, "
                               "start_ns, args, stack, data) VALUES (?,?,?,?,?,?,?,?,?)");
  wr.st_inflight_done = wr__prepare("DELETE FROM inflight WHERE session=? AND seq=?");
  wr.st_data =
      wr__prepare("INSERT OR REPLACE INTO data_rows(session, seq, position, role, idx, size, "
                  "hash, content, captured_seq, stored) VALUES (?,?,?,?,?,?,?,?,?,?)");
  wr.st_blob = wr__prepare("INSERT OR IGNORE INTO blobs(hash, size, content) VALUES (?,?,?)");
  wr.st_blob_zero =
      wr__prepare("INSERT OR IGNORE INTO blobs(hash, size, content) VALUES (?,?,zeroblob(?))");
  wr.st_handle =
      wr__prepare("INSERT OR REPLACE INTO handles(session, id, kind, created_seq, created, "
                  "created_by) VALUES (?,?,?,?,?,?)");
  wr.st_handle_release = wr__prepare("UPDATE handles SET released_seq=?, released_by=? WHERE "
                                     "session=? AND id=?");
  wr.st_note = wr__prepare("INSERT INTO notes(session, seq, idx, kind, kernel, device, symbol, "
                           "image, symbolic_id, numeric_ids, value, native, text, api) "
                           "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  wr.st_stack = wr__prepare("INSERT INTO stacks(session, id, frames) VALUES (?,?,?)");
  wr.st_thread = wr__prepare("INSERT OR IGNORE INTO threads(session, idx, tid) VALUES (?,?,?)");
  wr.st_plugin = wr__prepare("INSERT INTO plugins(session, idx, name, path, version, backend) "
                             "VALUES (?,?,?,?,?,?)");
  wr.st_state = wr__prepare("INSERT OR REPLACE INTO recorder_state(session, part, state) "
                            "VALUES (?,?,?)");
  wr.st_devtime =
      wr__prepare("INSERT OR REPLACE INTO device_times(session, seq, api, queue, device, "
                  "start_ns, end_ns, device_start_ns, device_end_ns) "
                  "VALUES (?,?,?,?,?,?,?,?,?)");
  wr.st_devclock = wr__prepare("INSERT OR REPLACE INTO device_clocks(session, device, device_ns0, "
                               "host_ns0, device_ns1, host_ns1) VALUES (?,?,?,?,?,?)");
  /* Drift: the times mapped with the first sample, scaled by the device
   * clock's rate against the host's over the two samples. */
  wr.st_drift = wr__prepare("UPDATE device_times SET "
                            "start_ns = ?1 + CAST(round((device_start_ns - ?2) * ?3) AS INTEGER), "
                            "end_ns = ?1 + CAST(round((device_end_ns - ?2) * ?3) AS INTEGER) "
                            "WHERE session = ?4 AND device = ?5 AND start_ns IS NOT NULL");
  return wr.st_chunk && wr.st_inflight && wr.st_inflight_done && wr.st_data && wr.st_blob &&
         wr.st_blob_zero && wr.st_handle && wr.st_handle_release && wr.st_note && wr.st_stack &&
         wr.st_thread && wr.st_plugin && wr.st_state && wr.st_devtime && wr.st_devclock &&
         wr.st_drift;
}

/* Finalizes them (any not prepared are NULL). */
void wr__finalize_statements(void)
{
  sqlite3_stmt **all[] = {&wr.st_chunk,   &wr.st_inflight, &wr.st_inflight_done,  &wr.st_data,
                          &wr.st_blob,    &wr.st_handle,   &wr.st_handle_release, &wr.st_note,
                          &wr.st_stack,   &wr.st_thread,   &wr.st_plugin,         &wr.st_state,
                          &wr.st_devtime, &wr.st_devclock, &wr.st_drift,         &wr.st_blob_zero};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
    sqlite3_finalize(*all[i]);
    *all[i] = NULL;
  }
}

/* The file's schema version, in the write transaction: one of version 1
 * becomes version 2 first, its sessions kept as they are (a newer one is
 * not written to); one without the sessions' parent columns (an older
 * recorder's) gets them. */
int wr__schema_version(void)
{
  int version = pt_schema_stored_version(wr.db);
  if (version > PT_SCHEMA_VERSION)
    return version;
  if (!pt_schema_add_parents(wr.db))
    return -1;
  if (version == 1 && sqlite3_exec(wr.db, shim_schema_sql, NULL, NULL, NULL) == SQLITE_OK &&
      sqlite3_exec(wr.db, pt_schema_upgrade_sql, NULL, NULL, NULL) == SQLITE_OK)
    version = PT_SCHEMA_VERSION;
  return version;
}

/* Puts the template of a new database (schema.h) at `path` when nothing
 * is there: written beside it, then linked into place, so that a process
 * opening the path at the same moment sees nothing or all of it. Where
 * that fails (a file there already, a file system without links, a full
 * disk), the schema is created statement by statement as before. */
void wr__create_from_template(const char *path)
{
  struct stat st;
  if (lstat(path, &st) == 0 || errno != ENOENT)
    return;
  if (!pt_fsize_allows(pt_schema_template_size))
    return; /* on the application's thread: SIGXFSZ would kill it */
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.new.XXXXXX", path);
  int fd = mkostemp(tmp, O_CLOEXEC); /* mode 0600 */
  if (fd < 0)
    return;
  size_t done = 0;
  while (done < pt_schema_template_size) {
    ssize_t w = write(fd, pt_schema_template + done, pt_schema_template_size - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    done += (size_t)w;
  }
  if (close(fd) == 0 && done == pt_schema_template_size)
    (void)link(tmp, path);
  unlink(tmp);
}

/* The one line a process that cannot record says. */
void wr__say_cannot_record(const char *why)
{
  fprintf(stderr, "pitrace: cannot record to %s (%s); the application goes on unrecorded\n",
          shim_cfg.path, why);
}

/* Opens the database and leaves a write transaction open (BEGIN
 * IMMEDIATE: it waits its turn behind other recording processes, and
 * nothing read in it goes stale) with the schema in place; false after
 * one line that says why. */
bool wr__open_db(void)
{
  const char *path = shim_cfg.path;
  char why[512];
  wr.db = wr__open_rw(path, true, why, sizeof why);
  if (!wr.db) {
    wr__say_cannot_record(why);
    return false;
  }
  /* Before anything is set on it (journal_mode would take a database of
   * another program out of WAL mode). */
  if (pt_schema_foreign(wr.db, why, sizeof why)) {
    wr__say_cannot_record(why);
    wr__close_db(wr.db);
    wr.db = NULL;
    return false;
  }
  /* A rollback journal, not WAL: a commit writes the pages it adds (the
   * payloads, the chunks) once, into the database, where WAL writes them
   * to its log (with a checksum over every byte) and copies them into the
   * database again at each checkpoint: recording vadd 4194304 with data
   * all (50 MB moved) added 93 ms to the plain run through WAL, 56 ms with
   * the journal (2-core machine, 10 rounds; 70 and 33 ms on the GPU host:
   * bench/results/2026-11-26-h100-round8/). The journal holds only the
   * pages a commit changes that were there before (a few b-tree pages),
   * truncated after each commit. What it costs: a reader's
   * open read transaction holds off a commit until it ends (the recorder
   * waits, at most BUSY_MS; the application only once its ring is full).
   * A killed process leaves a consistent database either way (a journal
   * left behind is rolled back by the next connection that writes, as
   * the salvage does). synchronous=OFF: a process crash loses nothing the
   * OS has. */
  char *err = NULL;
  /* Some of SQLite's lock steps answer SQLITE_BUSY without calling the
   * busy handler (taking a file out of WAL mode, as an older recorder
   * left it, while another process has it open): several processes that
   * start recording into one path at once retry the whole start, within
   * the same bound as every other wait for the lock. */
  uint64_t since = shim_now();
  char schema_err[512] = "";
  bool ok;
  for (;;) {
    ok = sqlite3_exec(wr.db,
                      PT_PAGE_SIZE_SQL "PRAGMA synchronous=OFF; PRAGMA journal_mode=TRUNCATE;",
                      NULL, NULL, &err) == SQLITE_OK &&
         wr__begin_immediate(wr.db, &err) &&
         pt_schema_create(wr.db, schema_err, sizeof schema_err);
    int code = sqlite3_errcode(wr.db);
    if (ok || (code != SQLITE_BUSY && code != SQLITE_LOCKED) ||
        shim_now() - since > (uint64_t)BUSY_MS * 1000000u)
      break;
    if (!sqlite3_get_autocommit(wr.db))
      sqlite3_exec(wr.db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_free(err);
    err = NULL;
    schema_err[0] = 0;
    struct timespec nap = {0, 2000000};
    nanosleep(&nap, NULL);
  }
  if (!ok) {
    wr__say_cannot_record(err ? err : schema_err[0] ? schema_err : sqlite3_errmsg(wr.db));
    sqlite3_free(err);
    wr__close_db(wr.db);
    wr.db = NULL;
    return false;
  }
  int version = wr__schema_version();
  if (version < 0) {
    wr__say_cannot_record(sqlite3_errmsg(wr.db));
    wr__close_db(wr.db);
    wr.db = NULL;
    return false;
  }
  if (version != PT_SCHEMA_VERSION) {
    fprintf(stderr, "pitrace: %s holds pitrace schema version %d, this recorder writes "
                    "version %d; record to another file\n", path, version, PT_SCHEMA_VERSION);
    wr__close_db(wr.db);
    wr.db = NULL;
    return false;
  }
  return true;
}

/* The most each field keeps in the ring file (the writer's row has them
 * whole): the environment (pitrace's and the runtime's variables only) goes
 * in whole or not at all (half a JSON object is not one). */
enum { MOST_LABEL = 256, MOST_COMMAND = 4096, MOST_CWD = 4096, MOST_HOST = 256, MOST_ENV = 6144,
       MOST_FILTER = 512 };
static const uint32_t desc_most[DESC_NSTR] = {MOST_LABEL, MOST_COMMAND, MOST_CWD,
                                              MOST_HOST,  MOST_ENV,     MOST_FILTER};

/* Packs d into out (at most RINGFILE_DESC bytes): data_mode, then each
 * string as its length and bytes (all little-endian u32). */
uint32_t wr__desc_pack(const session_desc *d, unsigned char *out)
{
  uint32_t at = 0;
  memcpy(out, &d->data_mode, 4);
  at += 4;
  for (int i = 0; i < DESC_NSTR; i++) {
    uint32_t n = d->s[i].n;
    const char *p = d->s[i].p;
    if (n > desc_most[i]) {
      if (i == DESC_ENV)
        p = "{}", n = 2;
      else
        n = desc_most[i];
    }
    memcpy(out + at, &n, 4);
    if (n)
      memcpy(out + at + 4, p, n);
    at += 4 + n;
  }
  return at;
}

_Static_assert(4 + 4 * DESC_NSTR + MOST_LABEL + MOST_COMMAND + MOST_CWD + MOST_HOST + MOST_ENV +
                       MOST_FILTER <= RINGFILE_DESC,
               "a packed description may not fit the ring file");

/* The description a ring file holds (its strings point into it); false
 * when it has none (version 1) or it is damaged. */
bool wr__desc_unpack(const ringfile_hdr *h, session_desc *d)
{
  if (h->version < 2 || h->desc_len < 4 || h->desc_len > RINGFILE_DESC)
    return false;
  const unsigned char *p = h->desc, *end = h->desc + h->desc_len;
  memcpy(&d->data_mode, p, 4);
  p += 4;
  for (int i = 0; i < DESC_NSTR; i++) {
    uint32_t n;
    if (end - p < 4)
      return false;
    memcpy(&n, p, 4);
    p += 4;
    if ((size_t)(end - p) < n)
      return false;
    d->s[i].p = (const char *)p;
    d->s[i].n = n;
    p += n;
  }
  d->pid = h->pid;
  d->start_unix_ns = h->start_unix_ns;
  d->parent_pid = h->parent_pid;
  d->parent_session = h->parent_session;
  return true;
}

/* Makes the session's row, running, in the open write transaction; its id,
 * or 0 (failed: fail_sql said why). */
int64_t wr__insert_session(const session_desc *d)
{
  static const char *const modes[] = {"none", "meta", "all"};
  sqlite3_stmt *s = wr__prepare(
      "INSERT INTO sessions(label, pid, command, cwd, host, start_unix_ns, pi_version, "
      "env, ended, data_mode, filter, schema_version, parent_pid, parent_session) VALUES "
      "(?,?,?,?,?,?,?,?,'running',?,?,?,?,?)");
  if (!s)
    return 0;
  sqlite3_bind_text(s, 1, d->s[DESC_LABEL].p, (int)d->s[DESC_LABEL].n, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 2, d->pid);
  sqlite3_bind_text(s, 3, d->s[DESC_COMMAND].p, (int)d->s[DESC_COMMAND].n, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 4, d->s[DESC_CWD].p, (int)d->s[DESC_CWD].n, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 5, d->s[DESC_HOST].p, (int)d->s[DESC_HOST].n, SQLITE_TRANSIENT);
  sqlite3_bind_int64(s, 6, d->start_unix_ns);
  sqlite3_bind_text(s, 7, _PI_H_VERSION_STRING, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 8, d->s[DESC_ENV].n ? d->s[DESC_ENV].p : "{}",
                    d->s[DESC_ENV].n ? (int)d->s[DESC_ENV].n : 2, SQLITE_TRANSIENT);
  sqlite3_bind_text(s, 9, modes[d->data_mode <= DATA_ALL ? d->data_mode : DATA_ALL], -1,
                    SQLITE_STATIC);
  sqlite3_bind_text(s, 10, d->s[DESC_FILTER].p, (int)d->s[DESC_FILTER].n, SQLITE_TRANSIENT);
  sqlite3_bind_int(s, 11, PT_SCHEMA_VERSION);
  if (d->parent_pid > 0)
    sqlite3_bind_int64(s, 12, d->parent_pid);
  if (d->parent_pid > 0 && d->parent_session > 0)
    sqlite3_bind_int64(s, 13, d->parent_session);
  bool ok = wr__step(s, "starting the session");
  sqlite3_finalize(s);
  return ok ? sqlite3_last_insert_rowid(wr.db) : 0;
}
