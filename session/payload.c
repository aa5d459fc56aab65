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
 * Under AddressSanitizer everything comes from malloc, so that a read past
 * a payload is still found.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "recorder.h"

#if defined(__SANITIZE_ADDRESS__)
#define PAYLOAD_MALLOC_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAYLOAD_MALLOC_ONLY 1
#endif
#endif

#define PAYLOAD_BIG (1u << 20)        /* from here on, a mapping of its own */
#define POOL_MAX 4                    /* mappings kept for reuse */
#define POOL_BYTES ((size_t)64 << 20) /* and their bytes, at most */

/* In front of every payload: how its memory was had, so that the writer
 * frees it the same way. 16 bytes keep the payload 16-byte aligned. */
typedef struct payload_hdr {
  uint64_t map_len; /* the mapping's length (it starts at the header); 0: malloc */
  uint64_t pad;
} payload_hdr;

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static payload_hdr *pool[POOL_MAX];
static unsigned npool;
static size_t pool_bytes;

void *pt_payload_alloc(uint64_t size)
{
  if (size > SIZE_MAX / 2)
    return NULL;
  size_t need = sizeof(payload_hdr) + (size_t)size;
#ifndef PAYLOAD_MALLOC_ONLY
  if (size >= PAYLOAD_BIG) {
    payload_hdr *h = NULL;
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
      size_t page = (size_t)sysconf(_SC_PAGESIZE);
      size_t len = (need + page - 1) & ~(page - 1);
      /* Its pages made at once (MAP_POPULATE), not a fault each as the copy
       * reaches them: 48 MiB 19.5 ms instead of 20.9 on the 2-core VM. */
      void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                     -1, 0);
      if (m == MAP_FAILED)
        return NULL;
      h = m;
      h->map_len = len;
    }
    return h + 1;
  }
#endif
  payload_hdr *h = malloc(need);
  if (!h)
    return NULL;
  h->map_len = 0;
  return h + 1;
}

void pt_payload_free(void *p)
{
  if (!p)
    return;
  payload_hdr *h = (payload_hdr *)p - 1;
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

void pt_payload_trim(void)
{
  pthread_mutex_lock(&pool_lock);
  while (npool) {
    payload_hdr *h = pool[--npool];
    munmap(h, h->map_len);
  }
  pool_bytes = 0;
  pthread_mutex_unlock(&pool_lock);
}

void pt_payload_fork_lock(void) { pthread_mutex_lock(&pool_lock); }
void pt_payload_fork_unlock(void) { pthread_mutex_unlock(&pool_lock); }
