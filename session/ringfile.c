/*
 * ringfile.c: the recording shim's rings in a file that outlives the
 * process. As LTTng-UST and Perfetto keep their buffers outside the traced
 * process's lifetime, each recording thread's ring is a slot of a file
 * mapped MAP_SHARED beside the session database: when the process ends
 * without a word (_exit, SIGKILL, the OOM killer) the kernel keeps every
 * byte it wrote, and whoever comes next (writer_salvage) stores every
 * complete record. The application's fast path is unchanged: it writes
 * into mapped memory and publishes with one release store.
 *
 * The process holds an fcntl write lock on the file for its whole life;
 * the lock goes with the process however it ends, so a file found
 * unlocked belongs to a process that is gone. The file's blocks are
 * allocated when a slot is added (posix_fallocate), so a full disk is one
 * warning and a ring in process memory, never a SIGBUS on a store.
 *
 * Also here: the state the shim and the writer share, so that the writer
 * links into pitrace (for salvage) without the application side.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "recorder.h"

shim_config shim_cfg;
shim_instance shim_instances[SHIM_MAX_INSTANCES];
_Atomic uint32_t shim_ninstances;
_Atomic bool shim_recording;
_Atomic bool shim_data_dropped;
_Atomic uint64_t shim_disk_taken;
_Atomic(shim_ring *) shim_rings;

#define RING_CAP (4u << 20)
/* A power of two: positions become offsets with a mask, not a division
 * (the shim's reserve, the writer's read). */
_Static_assert((RING_CAP & (RING_CAP - 1)) == 0, "RING_CAP is not a power of two");

static pthread_mutex_t rf_lock = PTHREAD_MUTEX_INITIALIZER;
static int rf_fd = -1;
static ringfile_hdr *rf_hdr;
/* rf_hdr for a signal handler, which takes no lock (the mapping stays to
 * the process's end: ringfile_remove). */
static _Atomic(ringfile_hdr *) rf_hdr_signals;
static char rf_path[4200];
static bool rf_warned;

/* A slot the writer makes ahead (ringfile_make_spare), so that a thread's
 * first call does not wait for the file to grow by a slot (posix_fallocate
 * of 4 MiB: 0.5 to 1.7 ms on the GPU host's disk): none, being made (its
 * index reserved, made outside the lock), or ready to take. */
enum { SPARE_NONE, SPARE_MAKING, SPARE_READY };
static int spare_state;
static uint32_t spare_k;
static void *spare_map;
static pthread_cond_t spare_made = PTHREAD_COND_INITIALIZER;

static void rf_warn(const char *what, int err)
{
  if (rf_warned)
    return;
  rf_warned = true;
  fprintf(stderr, "pitrace: cannot keep the recording rings in a file beside %s (%s: %s); "
                  "recording goes on, but calls of the last 50 ms are lost if the process "
                  "is killed\n", shim_cfg.path, what, strerror(err));
}

/* A fault in a file mapping reads the pages around it in too, as far as
 * the disk's read-ahead (8 MiB on the 2-core machine and the GPU hosts):
 * the first write into a new slot had its whole 4 MiB allocated and
 * zeroed, about 3 ms of the recording thread's first call (bench_fixed). The writer
 * faults a ring's pages in ahead of its producer itself, as far as it is
 * written (ringfile_populate): a fault reads only its own page. */
static void no_read_around(void *m, size_t size)
{
  (void)madvise(m, size, MADV_RANDOM);
}

uint64_t ringfile_proc_start(int pid, char *state)
{
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return 0;
  buf[n] = 0;
  /* pid (comm) state ppid ...: comm may hold anything, ')' included; the
   * fields after the last ')' are numbers, starttime the 20th of them. */
  char *p = strrchr(buf, ')');
  if (!p || p[1] != ' ' || !p[2])
    return 0;
  *state = p[2];
  p += 2;
  for (int field = 3; field < 22; field++) {
    p = strchr(p, ' ');
    if (!p)
      return 0;
    p++;
  }
  return strtoull(p, NULL, 10);
}

bool pt_fsize_allows(uint64_t end)
{
  struct rlimit lim;
  return getrlimit(RLIMIT_FSIZE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY ||
         end <= (uint64_t)lim.rlim_cur;
}

bool ringfile_create(const char *db_path, uint64_t session_t0, int64_t start_unix_ns,
                     const void *desc, uint32_t desc_len, int32_t parent_pid,
                     int64_t parent_session)
{
  pthread_mutex_lock(&rf_lock);
  bool ok = false;
  snprintf(rf_path, sizeof rf_path, "%s-rings.%d.XXXXXX", db_path, (int)getpid());
  int fd = mkostemp(rf_path, O_CLOEXEC);
  if (fd < 0) {
    rf_warn("creating it", errno);
    goto done;
  }
  /* Locked before anything is in it: a salvager skips a file it cannot
   * lock, and one without a header. */
  struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  int err = fcntl(fd, F_SETLK, &lk) != 0      ? errno
            : !pt_fsize_allows(RINGFILE_HEADER) ? EFBIG
                                                : posix_fallocate(fd, 0, RINGFILE_HEADER);
  if (err != 0) {
    rf_warn("preparing it", err);
    goto fail;
  }
  void *m = mmap(NULL, RINGFILE_HEADER, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) {
    rf_warn("mapping it", errno);
    goto fail;
  }
  no_read_around(m, RINGFILE_HEADER);
  fchmod(fd, 0600);
  rf_hdr = m;
  rf_hdr->version = RINGFILE_VERSION;
  rf_hdr->session = 0;
  if (desc_len > RINGFILE_DESC)
    desc_len = 0;
  if (desc_len)
    memcpy(rf_hdr->desc, desc, desc_len);
  rf_hdr->desc_len = desc_len;
  rf_hdr->parent_pid = parent_pid;
  rf_hdr->parent_session = parent_session;
  rf_hdr->start_unix_ns = start_unix_ns;
  rf_hdr->session_t0 = session_t0;
  rf_hdr->stamps_tsc = shim_stamps_tsc;
  rf_hdr->ring_cap = RING_CAP;
  rf_hdr->slot_size = RINGFILE_CTL + RING_CAP;
  rf_hdr->pid = (int32_t)getpid();
  char state;
  rf_hdr->proc_start = ringfile_proc_start(rf_hdr->pid, &state);
  atomic_store(&rf_hdr->state, RINGFILE_LIVE);
  __atomic_store_n(&rf_hdr->magic, RINGFILE_MAGIC, __ATOMIC_RELEASE);
  atomic_store(&rf_hdr_signals, rf_hdr);
  rf_fd = fd;
  ok = true;
  char payloads[sizeof rf_path + 8];
  bool named = ringfile_payload_path(rf_path, payloads, sizeof payloads);
  pthread_mutex_unlock(&rf_lock);
  pt_payload_use_file(named ? payloads : NULL);
  for (uint32_t i = 0; i < atomic_load(&shim_ninstances); i++)
    ringfile_note_instance(i);
  return ok;
fail:
  unlink(rf_path);
  close(fd);
done:
  pthread_mutex_unlock(&rf_lock);
  return ok;
}

bool ringfile_is_own(const struct stat *st)
{
  pthread_mutex_lock(&rf_lock);
  struct stat own;
  bool is = rf_fd >= 0 && fstat(rf_fd, &own) == 0 && own.st_dev == st->st_dev &&
            own.st_ino == st->st_ino;
  pthread_mutex_unlock(&rf_lock);
  return is;
}

void ringfile_set_session(int64_t session)
{
  pthread_mutex_lock(&rf_lock);
  if (rf_hdr)
    rf_hdr->session = session;
  pthread_mutex_unlock(&rf_lock);
}

void ringfile_note_knot(stamp_knot k)
{
  pthread_mutex_lock(&rf_lock);
  if (rf_hdr) {
    uint32_t n = atomic_load_explicit(&rf_hdr->nknots, memory_order_relaxed);
    rf_hdr->knots[n % RINGFILE_KNOTS] = k;
    atomic_store_explicit(&rf_hdr->nknots, n + 1, memory_order_release);
  }
  pthread_mutex_unlock(&rf_lock);
}

void ringfile_note_instance(uint32_t i)
{
  pthread_mutex_lock(&rf_lock);
  if (rf_hdr && i < SHIM_MAX_INSTANCES) {
    ringfile_instance *d = &rf_hdr->instances[i];
    const shim_instance *s = &shim_instances[i];
    snprintf(d->name, sizeof d->name, "%s", s->name);
    snprintf(d->path, sizeof d->path, "%s", s->path);
    snprintf(d->version, sizeof d->version, "%s", s->version);
    snprintf(d->backend, sizeof d->backend, "%s", s->backend);
    d->index = s->index;
    d->set = 1;
  }
  pthread_mutex_unlock(&rf_lock);
}

/* A ring in process memory: what is lost when the process is killed is
 * what the writer had not committed. */
static shim_ring *heap_ring(void)
{
  shim_ring *r = aligned_alloc(64, sizeof *r);
  if (r)
    memset(r, 0, sizeof *r);
  if (!r || !(r->buf = calloc(1, RING_CAP))) {
    free(r);
    return NULL;
  }
  r->cap = RING_CAP;
  r->slot = RING_NO_SLOT;
  return r;
}

/* Slot k of the file, its space allocated and mapped; NULL (errno set)
 * when it cannot be. Its pages are faulted in as its ring fills, by the
 * writer ahead of the producer (ringfile_populate). */
static void *make_slot(int fd, uint32_t k, uint64_t slot_size)
{
  off_t off = (off_t)RINGFILE_HEADER + (off_t)k * (off_t)slot_size;
  int err = pt_fsize_allows((uint64_t)off + slot_size) ? posix_fallocate(fd, off, (off_t)slot_size)
                                                       : EFBIG;
  if (err != 0) {
    errno = err;
    return NULL;
  }
  atomic_fetch_add_explicit(&shim_disk_taken, slot_size, memory_order_relaxed);
  void *m = mmap(NULL, slot_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
  if (m == MAP_FAILED)
    return NULL;
  no_read_around(m, slot_size);
  return m;
}

void ringfile_make_spare(void)
{
  pthread_mutex_lock(&rf_lock);
  if (!rf_hdr || spare_state != SPARE_NONE || atomic_load(&rf_hdr->state) != RINGFILE_LIVE) {
    pthread_mutex_unlock(&rf_lock);
    return;
  }
  spare_state = SPARE_MAKING;
  spare_k = atomic_load(&rf_hdr->nslots);
  int fd = rf_fd;
  uint64_t size = rf_hdr->slot_size;
  pthread_mutex_unlock(&rf_lock);
  /* The file stays open meanwhile: ringfile_remove waits for this. */
  void *m = make_slot(fd, spare_k, size);
  pthread_mutex_lock(&rf_lock);
  spare_map = m;
  spare_state = m ? SPARE_READY : SPARE_NONE; /* none: a thread makes its own */
  pthread_cond_broadcast(&spare_made);
  pthread_mutex_unlock(&rf_lock);
}

/* Rings whose threads exited (ringfile_give_back). */
static shim_ring *free_rings;

void ringfile_give_back(shim_ring *r)
{
  pthread_mutex_lock(&rf_lock);
  r->next_free = free_rings;
  free_rings = r;
  pthread_mutex_unlock(&rf_lock);
}

shim_ring *ringfile_new_ring(uint32_t thread_index, bool *reused)
{
  shim_ring *r = NULL;
  pthread_mutex_lock(&rf_lock);
  *reused = free_rings != NULL;
  if (free_rings) {
    /* It goes on where its last thread left it: the writer reads on
     * from there, and a salvager from where the last commit left it. */
    r = free_rings;
    free_rings = r->next_free;
    r->next_free = NULL;
    r->thread_index = thread_index;
    pthread_mutex_unlock(&rf_lock);
    return r;
  }
  while (spare_state == SPARE_MAKING) /* being made: no slower than making one */
    pthread_cond_wait(&spare_made, &rf_lock);
  if (rf_hdr && atomic_load(&rf_hdr->state) == RINGFILE_LIVE) {
    uint32_t k = atomic_load(&rf_hdr->nslots);
    void *m;
    if (spare_state == SPARE_READY) { /* its index is nslots: nobody took one since */
      m = spare_map;
      spare_map = NULL;
      spare_state = SPARE_NONE;
    } else {
      m = make_slot(rf_fd, k, rf_hdr->slot_size);
    }
    if (m) {
      r = m;
      memset(r, 0, sizeof *r);
      r->buf = (unsigned char *)m + RINGFILE_CTL;
      r->cap = rf_hdr->ring_cap;
      r->slot = k;
      r->thread_index = thread_index;
      atomic_store_explicit(&rf_hdr->nslots, k + 1, memory_order_release);
    } else {
      rf_warn("adding a thread's ring", errno);
    }
  }
  pthread_mutex_unlock(&rf_lock);
  if (!r) {
    r = heap_ring();
    if (r)
      r->thread_index = thread_index;
  }
  return r;
}

/* The pages of a ring are faulted in by the writer, ahead of its
 * producer: a few hundred microseconds' work per megabyte, which the
 * application's thread did on its first call (a memset of the whole ring)
 * or else a page at a time among its calls. MADV_POPULATE_WRITE (Linux
 * 5.14) maps them writable without touching the bytes, so the producer
 * may write meanwhile; where the kernel lacks it, the producer faults
 * them in as it goes. */
#define POPULATE_AHEAD ((size_t)1 << 20)
#define POPULATE_MIN ((size_t)16 << 10)

void ringfile_populate(shim_ring *r)
{
  /* As far ahead as the ring has been written, from 16 KiB up to
   * POPULATE_AHEAD: a thread that makes a few calls (most of an
   * application's threads) does not have a megabyte of file pages
   * allocated and zeroed for it. */
  size_t ahead = r->head_seen < POPULATE_MIN ? POPULATE_MIN
                 : r->head_seen < POPULATE_AHEAD ? r->head_seen : POPULATE_AHEAD;
  if (r->populated >= r->cap || r->head_seen + ahead <= r->populated)
    return;
  size_t to = r->head_seen + 2 * ahead;
  if (to > r->cap)
    to = r->cap;
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t from = ((uintptr_t)r->buf + r->populated) & ~(page - 1);
  if (madvise((void *)from, (uintptr_t)r->buf + to - from, MADV_POPULATE_WRITE) != 0 &&
      errno == EINVAL)
    to = r->cap; /* not this kernel: the producer faults them in */
  r->populated = to;
}

void ringfile_remove(void)
{
  pthread_mutex_lock(&rf_lock);
  while (spare_state == SPARE_MAKING) /* it uses the file's descriptor */
    pthread_cond_wait(&spare_made, &rf_lock);
  if (spare_state == SPARE_READY) {
    munmap(spare_map, (size_t)rf_hdr->slot_size);
    spare_map = NULL;
    spare_state = SPARE_NONE;
  }
  if (rf_hdr) {
    atomic_store(&rf_hdr->state, RINGFILE_DONE);
    pt_payload_file_remove(); /* first: a payload file is never left without its ring file */
    unlink(rf_path);
    /* The mapping stays: late threads may still hold their rings. */
    close(rf_fd);
    rf_fd = -1;
    rf_hdr = NULL;
    atomic_store(&rf_hdr_signals, NULL);
  }
  pthread_mutex_unlock(&rf_lock);
}

void ringfile_note_signal(int signo)
{
  ringfile_hdr *h = atomic_load(&rf_hdr_signals);
  if (h)
    atomic_store(&h->ending_signal, signo);
}

void ringfile_fork_lock(void) { pthread_mutex_lock(&rf_lock); }
void ringfile_fork_unlock(void) { pthread_mutex_unlock(&rf_lock); }

/* Under rf_lock: the file and its rings forgotten. Their slots stay
 * mapped, unused: threads may still hold them. */
static void forget_file(void)
{
  if (spare_state == SPARE_READY && rf_hdr)
    munmap(spare_map, (size_t)rf_hdr->slot_size);
  spare_map = NULL;
  spare_state = SPARE_NONE;
  if (rf_fd >= 0)
    close(rf_fd); /* a forked child's: the parent's lock is the parent's */
  rf_fd = -1;
  rf_hdr = NULL;
  atomic_store(&rf_hdr_signals, NULL);
  rf_path[0] = 0;
  rf_warned = false;
  free_rings = NULL;
  atomic_store(&shim_rings, NULL);
}

void ringfile_fork_child(void)
{
  /* The child writes only into rings of its own file. */
  forget_file();
  spare_made = (pthread_cond_t)PTHREAD_COND_INITIALIZER; /* waiters of the parent's */
  pthread_mutex_unlock(&rf_lock);
}

void ringfile_forget(void)
{
  pthread_mutex_lock(&rf_lock);
  forget_file();
  pthread_mutex_unlock(&rf_lock);
}

bool ringfile_payload_path(const char *ring, char *out, size_t n)
{
  const char *at = NULL;
  for (const char *q = ring; (q = strstr(q, "-rings.")); q++)
    at = q;
  if (!at)
    return false;
  int w = snprintf(out, n, "%.*s-payloads.%s", (int)(at - ring), ring, at + strlen("-rings."));
  return w > 0 && (size_t)w < n;
}
