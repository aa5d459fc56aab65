/*
 * payload.c: the memory a large payload is copied into on the
 * application's thread (the shim, for SYCL_PI_RECORD_DATA=all) and freed
 * from on the writer's, once stored.
 *
 * Why not malloc alone: the copy is the floor of recording data, and for
 * a payload of megabytes most of it is not the copy but faulting in fresh
 * pages (bench_copyhash: 48 MiB into fresh pages 20.5 ms on the 2-core
 * machine, into memory already touched 2.6 ms). So payloads of
 * PAYLOAD_BIG or more go into mappings of their own, and up to POOL_MAX of
 * them freed (POOL_BYTES) are kept for the next payloads: a program that
 * moves a buffer of the same size again copies it into memory already
 * touched (vadd 4194304: its third 16 MiB payload, the read, 0.8 ms
 * instead of 6). That also leaves the application's malloc as it was
 * (glibc raises its mmap threshold when a large block is freed). Smaller
 * payloads come from malloc, whose free lists reuse their memory.
 *
 * Not done: asking for 2 MiB pages (MADV_HUGEPAGE). On the 2-core VM a
 * fresh 16 MiB copy took 1.6 ms instead of 6, but 6 of 40 recorded runs of
 * vadd 4194304 took 70 ms longer, a copy stalling for up to 43 ms (no
 * compaction counted: the host backing the guest's memory, it seems);
 * the mean was no better (125 ms against 128).
 *
 * Where a ring file is kept (ringfile.c), large payloads are written into
 * regions of a payload file beside it (DB-payloads.PID.XXXXXX), so that
 * they outlive the process as its records do: a process that ends with
 * _exit or is killed while payloads wait for its writer leaves them there,
 * and the salvager stores them with its calls (before the file, such a
 * session's replay stopped at the first call whose data was over 64 KiB:
 * "recorded only in part"). Each region begins with its header (the token
 * the records give it, its size, whether it waits to be stored), regions
 * follow one another, the writer reads them through one mapping of the
 * file, and a stored one is given back only after the commit that stored
 * it (until then a salvage reads its record again); then it is kept for
 * reuse or its pages punched out of the file, its offsets free for the
 * next payloads (a steady stream from several threads, some region always
 * between its copy and its commit, grew the file by everything written:
 * 328 MiB apparent for 384 MiB written by 4 threads; now the file is as
 * long as what is in flight). Less than 64 MiB free, the file size limit
 * or a failed write sends payloads back to process memory.
 *
 * Under AddressSanitizer payloads outside the payload file come from
 * malloc, so that a read past one is still found.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "recorder.h"
#include "session.h"

#if defined(__SANITIZE_ADDRESS__)
#define PAYLOAD_MALLOC_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAYLOAD_MALLOC_ONLY 1
#endif
#endif

#define PAYLOAD_BIG (1u << 20)        /* from here on, a mapping of its own */
#define POOL_MAX 4                    /* mappings (regions) kept for reuse */
#define POOL_BYTES ((size_t)64 << 20) /* and their bytes, at most */
/* The payload file begins again from nothing when nothing in it waits and
 * it has grown past this (regions are taken one after another; a stored
 * one's pages go back to the disk, not its offsets). */
#define FILE_RESTART ((uint64_t)1 << 30)
/* A payload's token in the payload file: its region's offset + 1, odd
 * (offsets are pages); a copy in process memory is its address, even
 * (malloc's and mmap's alignment, and a 64-byte header). Not a high bit:
 * on AArch64 a tagged pointer (HWASan, MTE) has its top byte set. */
static bool file_token(uint64_t token)
{
  return token & 1u;
}

/* In front of every payload: how its memory was had, so that the writer
 * frees it the same way; in the payload file, also what a salvager needs
 * to find it. 64 bytes keep the payload 16-byte aligned. */
#define PAYLOAD_MAGIC 0x31646c6f6c796170ULL /* "payl0ld1" */
typedef struct payload_hdr {
  uint64_t magic;    /* PAYLOAD_MAGIC in a region of the payload file */
  uint64_t map_len;  /* the mapping's (the region's) length from here; 0: malloc */
  uint64_t file_off; /* the region's offset in the payload file + 1; 0: not in it */
  uint64_t size;     /* the payload's bytes */
  uint64_t token;    /* what the records call it (pt_payload_copy) */
  uint64_t live;     /* 1 from its copy until it is stored and committed;
                        2: dropped (its view could not be had), not stored */
  uint64_t pad[2];
} payload_hdr;
_Static_assert(sizeof(payload_hdr) == 64, "payload_hdr is not 64 bytes");

/* Mappings of process memory kept for reuse (pool), regions of the
 * payload file kept for reuse (fpool), and regions stored since the last
 * commit (retired: until the commit a salvage reads their records again);
 * all under pool_lock. */
typedef struct region {
  uint64_t off, len;
} region;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static payload_hdr *pool[POOL_MAX];
static unsigned npool;
static size_t pool_bytes;
static region fpool[POOL_MAX];
static unsigned nfpool;
static region *retired;
static size_t nretired, cap_retired;
/* Regions stored and committed whose pages went back to the disk: the
 * file's free extents, by offset, neighbours joined, taken again (the
 * lowest that holds the payload, split) before the file grows. An
 * extent's first header has the extent's length, so that a salvager's
 * walk from the first region goes past it whole. Under pool_lock. */
static region *freel;
static size_t nfreel, cap_freel;

/* The payload file: beside the ring file, so that a process that ends
 * without a word (_exit, SIGKILL) leaves its large payloads where the
 * salvager finds them, as its rings leave its records. Made at the first
 * large payload; given up (`pf_off`) when it cannot be written (a full
 * disk, the file size limit), after which payloads are in process memory. */
static char pf_path[4300];
static int pf_fd = -1;
static bool pf_off;
static uint64_t pf_end;  /* where the next region begins */
static unsigned pf_live; /* regions waiting to be stored or committed */

void pt_payload_use_file(const char *path)
{
  pthread_mutex_lock(&pool_lock);
  snprintf(pf_path, sizeof pf_path, "%s", path ? path : "");
  pf_off = false;
  pthread_mutex_unlock(&pool_lock);
}

/* The disk room the payload file leaves to the session's database: below
 * it, payloads go into process memory (and a stored region's pages go
 * back to the disk rather than into the pool). */
#define FILE_ROOM_KEPT ((uint64_t)64 << 20)

static bool file_room(uint64_t len)
{
  struct statvfs v;
  return pf_fd >= 0 && fstatvfs(pf_fd, &v) == 0 &&
         (uint64_t)v.f_bavail * v.f_frsize >= len + FILE_ROOM_KEPT;
}

/* A header for free space at `off` (`len` bytes): a salvager's walk goes
 * past it. */
static bool put_free_header(uint64_t off, uint64_t len)
{
  payload_hdr f = {.magic = PAYLOAD_MAGIC, .map_len = len, .file_off = off + 1};
  return pwrite(pf_fd, &f, sizeof f, (off_t)off) == (ssize_t)sizeof f;
}

/* The lowest free extent that holds `len` bytes, split: its first `len`
 * bytes into *out (its header is the caller's to write); false when none
 * does or the rest's header cannot be written. The rest's header goes
 * first: until the caller's is written, the extent's old one still spans
 * both. */
static bool take_free(uint64_t len, region *out)
{
  for (size_t i = 0; i < nfreel; i++) {
    region e = freel[i];
    if (e.len < len)
      continue;
    if (e.len > len) {
      if (!put_free_header(e.off + len, e.len - len))
        return false;
      freel[i] = (region){e.off + len, e.len - len};
    } else {
      memmove(freel + i, freel + i + 1, (nfreel - i - 1) * sizeof *freel);
      nfreel--;
    }
    *out = (region){e.off, len};
    return true;
  }
  return false;
}

/* A region nobody waits for any more (its header says so), its offsets
 * freed: kept with its pages for the next payload of its size, or its
 * pages punched out of the file (its header page kept) and its offsets
 * joined to the free extents. */
static void free_region(region r)
{
  size_t bytes = 0;
  for (unsigned i = 0; i < nfpool; i++)
    bytes += fpool[i].len;
  if (nfpool < POOL_MAX && bytes + r.len <= POOL_BYTES && file_room(POOL_BYTES)) {
    fpool[nfpool++] = r;
    return;
  }
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  if (r.len > page)
    fallocate(pf_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)(r.off + page),
              (off_t)(r.len - page));
  size_t i = 0;
  while (i < nfreel && freel[i].off < r.off)
    i++;
  /* Joined to the extent before it, then to the one after: each join is
   * one header's length, written before the lists change (a salvager
   * walking meanwhile reads either length right). */
  if (i > 0 && freel[i - 1].off + freel[i - 1].len == r.off &&
      put_free_header(freel[i - 1].off, freel[i - 1].len + r.len)) {
    freel[i - 1].len += r.len;
    if (i < nfreel && freel[i - 1].off + freel[i - 1].len == freel[i].off &&
        put_free_header(freel[i - 1].off, freel[i - 1].len + freel[i].len)) {
      freel[i - 1].len += freel[i].len;
      memmove(freel + i, freel + i + 1, (nfreel - i - 1) * sizeof *freel);
      nfreel--;
    }
    return;
  }
  if (i < nfreel && r.off + r.len == freel[i].off && put_free_header(r.off, r.len + freel[i].len)) {
    freel[i] = (region){r.off, r.len + freel[i].len};
    return;
  }
  region *v = pt_grow(freel, &cap_freel, nfreel, sizeof *v);
  if (!v)
    return; /* no memory to keep it: its offsets are not reused */
  freel = v;
  memmove(freel + i + 1, freel + i, (nfreel - i) * sizeof *freel);
  freel[i] = r;
  nfreel++;
}

static size_t page_round(size_t n)
{
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return (n + page - 1) & ~(page - 1);
}

/* A region of the payload file of at least `len` bytes (a pooled one, or
 * the next); false when the file cannot have one. Under pool_lock. */
static bool take_region(uint64_t len, region *out)
{
  unsigned best = POOL_MAX;
  for (unsigned i = 0; i < nfpool; i++)
    if (fpool[i].len >= len && (best == POOL_MAX || fpool[i].len < fpool[best].len))
      best = i;
  if (best < POOL_MAX) {
    *out = fpool[best];
    fpool[best] = fpool[--nfpool];
    return true;
  }
  if (!pf_path[0] || pf_off)
    return false;
  /* Punched room takes the disk's blocks again: the room kept for the
   * database is looked at first, as for a region past the end. */
  if (nfreel && file_room(len) && take_free(len, out)) {
    atomic_fetch_add_explicit(&shim_disk_taken, len, memory_order_relaxed); /* punched */
    return true;
  }
  if (pf_fd < 0) {
    /* A new file, never one found there (a link or a file someone
     * else made, in a directory others may write into). */
    pf_fd = open(pf_path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (pf_fd < 0) {
      pf_off = true;
      return false;
    }
  }
  if (!pt_fsize_allows(pf_end + len)) {
    pf_off = true; /* a write past it would raise SIGXFSZ in the application */
    return false;
  }
  if (!file_room(len))
    return false; /* for now: the disk may have room again later */
  atomic_fetch_add_explicit(&shim_disk_taken, len, memory_order_relaxed);
  *out = (region){pf_end, len};
  pf_end += len;
  return true;
}

/* The payload is written in pieces of this size: a larger write has the
 * page cache take large folios, which on the VMs here now and then come
 * from memory the host has not backed yet (3 payloads of 16 MiB, each
 * process new: 10 ms, but 66 to 114 ms in 3 of 12 processes, written
 * whole; 11 to 12 ms every time in 64 KiB pieces; 33 ms in 4 KiB ones). */
#define WRITE_PIECE ((size_t)64 << 10)

/* Writes a payload into a region of the payload file, its header first
 * (under the lock: a salvager walks the regions from the first by their
 * lengths); its token, or 0 when the file could not take it or src could
 * not be read (*unreadable: a bad address, which write(2) finds without a
 * fault; the file stays in use). Writes into
 * the file's page cache, not a copy into a shared mapping: 3 payloads of
 * 16 MiB in 12 ms on the 2-core machine's ext4, where mappings of the
 * file took 26 ms (space made with posix_fallocate, then populated) and
 * process memory 18 (bench_copyhash's figures are these, in one run).
 * Space is not made beforehand: writes into blocks that posix_fallocate
 * made took three times as long (unwritten extents); a full disk fails
 * the write instead (delayed allocation reserves the blocks), and the
 * payload goes into process memory. */
static uint64_t copy_to_file(const void *src, uint64_t size, bool *unreadable)
{
  uint64_t len = page_round(sizeof(payload_hdr) + (size_t)size);
  region r = {0, 0};
  pthread_mutex_lock(&pool_lock);
  bool ok = take_region(len, &r);
  payload_hdr h = {.magic = PAYLOAD_MAGIC, .map_len = r.len, .file_off = r.off + 1,
                   .size = size, .token = r.off + 1, .live = 1};
  /* The header under the lock, before the next region can be taken: a
   * salvager walks the regions from the first by their lengths. */
  if (ok && pwrite(pf_fd, &h, sizeof h, (off_t)r.off) != (ssize_t)sizeof h) {
    pf_off = true;
    ok = false;
  }
  /* A descriptor of its own for the writes outside the lock: the
   * session's end may close the file's meanwhile (a late thread's call),
   * and a file the application opens could take its number. */
  int fd = ok ? fcntl(pf_fd, F_DUPFD_CLOEXEC, 0) : -1;
  if (fd >= 0) {
    pf_live++;
  } else if (ok) { /* no descriptor (the process's limit): the region back */
    static const uint64_t zero = 0;
    if (pwrite(pf_fd, &zero, sizeof zero, (off_t)(r.off + offsetof(payload_hdr, live))) ==
        (ssize_t)sizeof zero)
      free_region(r);
  }
  pthread_mutex_unlock(&pool_lock);
  if (fd < 0)
    return 0;
  const char *p = src;
  uint64_t done = 0;
  while (done < size) {
    size_t piece = size - done < WRITE_PIECE ? (size_t)(size - done) : WRITE_PIECE;
    ssize_t n = pwrite(fd, p + done, piece, (off_t)(r.off + sizeof h + done));
    if (n <= 0) {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 && errno == EFAULT) {
        /* The caller's bytes are not there (a call given a bad address):
         * none kept, and not the file's fault; the region back. */
        close(fd);
        static const uint64_t zero = 0;
        pthread_mutex_lock(&pool_lock);
        if (pwrite(pf_fd, &zero, sizeof zero, (off_t)(r.off + offsetof(payload_hdr, live))) ==
            (ssize_t)sizeof zero)
          free_region(r);
        if (pf_live)
          pf_live--;
        pthread_mutex_unlock(&pool_lock);
        *unreadable = true;
        return 0;
      }
      /* A full disk, or the file cut back: not again; the region waits
       * for nobody (no record names it), its space not reused. */
      close(fd);
      pthread_mutex_lock(&pool_lock);
      pf_off = true;
      if (pf_live) /* none when the session ended meanwhile */
        pf_live--;
      pthread_mutex_unlock(&pool_lock);
      return 0;
    }
    done += (uint64_t)n;
  }
  close(fd);
  return h.token;
}

/* A copy in process memory (pt_payload_copy when there is no payload
 * file): its token is its address. */
static uint64_t copy_to_memory(const void *src, uint64_t size)
{
  size_t need = sizeof(payload_hdr) + (size_t)size;
  payload_hdr *h = NULL;
#ifndef PAYLOAD_MALLOC_ONLY
  if (size >= PAYLOAD_BIG) {
    pthread_mutex_lock(&pool_lock);
    unsigned best = POOL_MAX; /* the smallest that holds it */
    for (unsigned i = 0; i < npool; i++)
      if (pool[i]->map_len >= need && (best == POOL_MAX || pool[i]->map_len < pool[best]->map_len))
        best = i;
    if (best < POOL_MAX) {
      h = pool[best];
      pool[best] = pool[--npool];
      pool_bytes -= h->map_len;
    }
    pthread_mutex_unlock(&pool_lock);
    if (!h) {
      size_t len = page_round(need);
      /* Its pages made at once (MAP_POPULATE), not a fault each as the copy
       * reaches them: 48 MiB 19.5 ms instead of 20.9 on the 2-core VM. */
      void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                     -1, 0);
      if (m == MAP_FAILED)
        return 0;
      h = m;
      h->map_len = len;
    }
  }
#endif
  if (!h) {
    h = malloc(need);
    if (!h)
      return 0;
    h->map_len = 0;
  }
  h->file_off = 0;
  h->size = size;
  memcpy(h + 1, src, (size_t)size);
  return h->token = (uint64_t)(uintptr_t)(h + 1);
}

uint64_t pt_payload_copy(const void *src, uint64_t size)
{
  if (size > SIZE_MAX / 2)
    return 0;
  bool unreadable = false;
  uint64_t t = copy_to_file(src, size, &unreadable);
  return t || unreadable ? t : copy_to_memory(src, size);
}

/* The writer's window onto the payload file: one mapping of its first
 * WINDOW bytes, made once (past the file's end it is only address space),
 * through which a region is read where it lies, without a mapping of its
 * own each time: a region used again is read through page table entries
 * its last payload made (bench_copyhash: three 16 MiB payloads reused,
 * 12.8 ms with a mapping made and populated for each, 9.3 with the
 * window). A region past it (freed room is taken again, and the file
 * begins again from nothing once it passes 1 GiB with nothing waiting)
 * gets a mapping of its own, as every region does under an address space
 * limit too small for a window (window_size). Under pool_lock; the pages
 * are only read where a region's bytes were written. */
#define WINDOW ((uint64_t)4 << 30)
static unsigned char *window;
static uint64_t window_len;
static int window_fd = -1;

/* The window's size: address space counts against `ulimit -v`, whose
 * room is the application's: a sixteenth of it at most (none under 64
 * MiB: then each region is mapped on its own). */
static uint64_t window_size(void)
{
  struct rlimit l;
  if (getrlimit(RLIMIT_AS, &l) != 0 || l.rlim_cur == RLIM_INFINITY)
    return WINDOW;
  uint64_t w = ((uint64_t)l.rlim_cur / 16) & ~(((uint64_t)1 << 20) - 1);
  return w > WINDOW ? WINDOW : w < ((uint64_t)64 << 20) ? 0 : w;
}

static bool in_window(const void *p)
{
  return window && (const unsigned char *)p >= window &&
         (const unsigned char *)p < window + window_len;
}

const void *pt_payload_view(uint64_t token)
{
  if (!file_token(token))
    return (const void *)(uintptr_t)token;
  uint64_t off = token - 1;
  pthread_mutex_lock(&pool_lock);
  int fd = pf_fd;
  if (fd >= 0 && window_fd != fd) {
    if (window)
      munmap(window, window_len);
    window_len = window_size();
    void *m = window_len ? mmap(NULL, window_len, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
    window = m == MAP_FAILED ? NULL : m;
    window_fd = fd; /* tried once for this file */
  }
  unsigned char *w = window;
  uint64_t wlen = window ? window_len : 0;
  pthread_mutex_unlock(&pool_lock);
  if (fd < 0)
    return NULL;
  payload_hdr h;
  if (w && off + sizeof h <= wlen)
    memcpy(&h, w + off, sizeof h);
  else if (pread(fd, &h, sizeof h, (off_t)off) != (ssize_t)sizeof h)
    return NULL;
  if (h.token != token || h.live != 1)
    return NULL; /* not this copy's (its room given back): never viewed twice */
  if (w && off + sizeof h + h.size <= wlen)
    return w + off + sizeof h;
  /* In the page cache since its write: mapped without a copy. */
  size_t len = page_round(sizeof h + (size_t)h.size);
  void *m = mmap(NULL, len, PROT_READ, MAP_SHARED | MAP_POPULATE, fd, (off_t)off);
  return m == MAP_FAILED ? NULL : (const payload_hdr *)m + 1;
}

/* A region the writer is done with: it waits for the commit. Under
 * pool_lock. */
static void retire(region r)
{
  region *v = pt_grow(retired, &cap_retired, nretired, sizeof *v);
  if (v) {
    retired = v;
    retired[nretired++] = r;
  } else if (pf_live) {
    pf_live--; /* no memory to keep it: its space is not reused */
  }
}

void pt_payload_free(const void *p)
{
  if (!p)
    return;
  payload_hdr *h = (payload_hdr *)p - 1;
  if (h->file_off) { /* a view of the payload file: its region waits for the commit */
    region r = {h->file_off - 1, h->map_len};
    pthread_mutex_lock(&pool_lock);
    if (!in_window(p))
      munmap(h, page_round(sizeof *h + (size_t)h->size));
    retire(r);
    pthread_mutex_unlock(&pool_lock);
    return;
  }
  if (!h->map_len) {
    free(h);
    return;
  }
  pthread_mutex_lock(&pool_lock);
  if (npool < POOL_MAX && pool_bytes + h->map_len <= POOL_BYTES) {
    pool[npool++] = h;
    pool_bytes += h->map_len;
    h = NULL;
  }
  pthread_mutex_unlock(&pool_lock);
  if (h)
    munmap(h, h->map_len);
}

/* A region stored and committed: marked so for a salvager, then kept for
 * reuse (its pages stay in the page cache: the next payload of its size
 * is written over them) or its pages punched out of the file (its header
 * kept: a salvager's walk goes past it). Under pool_lock. */
static void region_done(region r)
{
  static const uint64_t zero = 0;
  if (pf_live)
    pf_live--;
  if (pf_fd < 0)
    return;
  if (pwrite(pf_fd, &zero, sizeof zero, (off_t)(r.off + offsetof(payload_hdr, live))) ==
      (ssize_t)sizeof zero)
    free_region(r);
}

/* A dropped region's header says so (live 2: not stored, its record
 * taken as without the payload, by a salvager too), so that a second drop
 * of the same token gives nothing back twice. */
void pt_payload_drop(uint64_t token)
{
  if (!file_token(token))
    return; /* a copy in memory always has its view */
  static const uint64_t dropped = 2;
  payload_hdr h;
  pthread_mutex_lock(&pool_lock);
  if (pf_fd >= 0 && pread(pf_fd, &h, sizeof h, (off_t)(token - 1)) == (ssize_t)sizeof h &&
      h.magic == PAYLOAD_MAGIC && h.token == token && h.live == 1 &&
      pwrite(pf_fd, &dropped, sizeof dropped,
             (off_t)(token - 1 + offsetof(payload_hdr, live))) == (ssize_t)sizeof dropped)
    retire((region){token - 1, h.map_len});
  pthread_mutex_unlock(&pool_lock);
}

void pt_payload_discard(uint64_t token)
{
  const void *v = pt_payload_view(token);
  if (v)
    pt_payload_free(v);
  else
    pt_payload_drop(token);
}

void pt_payload_committed(void)
{
  pthread_mutex_lock(&pool_lock);
  for (size_t i = 0; i < nretired; i++)
    region_done(retired[i]);
  nretired = 0;
  /* Nothing in the file waits, and it has grown long: begun again. */
  if (!pf_live && pf_end >= FILE_RESTART && pf_fd >= 0 && ftruncate(pf_fd, 0) == 0) {
    pf_end = 0;
    nfpool = 0;
    nfreel = 0;
  }
  pthread_mutex_unlock(&pool_lock);
}

void pt_payload_trim(void)
{
  pt_payload_committed();
  pthread_mutex_lock(&pool_lock);
  while (npool) {
    payload_hdr *h = pool[--npool];
    munmap(h, h->map_len);
  }
  pool_bytes = 0;
  pthread_mutex_unlock(&pool_lock);
}

void pt_payload_file_remove(void)
{
  pthread_mutex_lock(&pool_lock);
  if (pf_fd >= 0) {
    unlink(pf_path);
    close(pf_fd);
  }
  pf_fd = -1;
  pf_path[0] = 0;
  pf_end = 0;
  pf_live = 0;
  nfpool = nretired = nfreel = 0;
  if (window)
    munmap(window, window_len);
  window = NULL;
  window_fd = -1;
  pthread_mutex_unlock(&pool_lock);
}

void pt_payload_fork_lock(void) { pthread_mutex_lock(&pool_lock); }
bool pt_payload_fork_trylock(void) { return pthread_mutex_trylock(&pool_lock) == 0; }
void pt_payload_fork_unlock(void) { pthread_mutex_unlock(&pool_lock); }

void pt_payload_fork_child(void)
{
  /* The parent's payloads and file are the parent's: forgotten here (the
   * file not removed). */
  npool = 0;
  pool_bytes = 0;
  nfpool = nretired = 0;
  pt_payload_fork_forget();
  pthread_mutex_unlock(&pool_lock);
}

/* Under pool_lock, held through the fork by the forking thread (or the
 * child's only thread), so that no other thread was halfway through
 * closing the file or moving the window. */
void pt_payload_fork_forget(void)
{
  nfreel = 0;
  if (pf_fd >= 0)
    close(pf_fd);
  pf_fd = -1;
  pf_path[0] = 0;
  pf_off = false;
  pf_end = 0;
  pf_live = 0;
  if (window)
    munmap(window, window_len);
  window = NULL;
  window_fd = -1;
}

/* ---- Salvage ------------------------------------------------------------------ */

int pt_payload_salvage_scan(const unsigned char *base, uint64_t len, pt_salvaged_payload *out,
                            int max)
{
  int n = 0;
  for (uint64_t off = 0; off + sizeof(payload_hdr) <= len;) {
    const payload_hdr *h = (const payload_hdr *)(base + off);
    if (h->magic != PAYLOAD_MAGIC || h->map_len < sizeof *h || h->map_len % 4096 ||
        h->file_off != off + 1)
      break; /* a region begun as the process died, or damage: none further is known */
    /* The last region may end before its length does (its bytes are
     * written, not its room made). */
    if (h->live == 1 && h->size <= h->map_len - sizeof *h && h->size <= len - off - sizeof *h) {
      if (n < max)
        out[n] = (pt_salvaged_payload){h->token, h->size, (const unsigned char *)(h + 1)};
      n++;
    }
    if (h->map_len > len - off)
      break;
    off += h->map_len;
  }
  return n;
}
