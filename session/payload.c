/*
 * payload.c: the memory a large payload is copied into on the
 * application's thread (the shim, for SYCL_PI_RECORD_DATA=all) and freed
 * from on the writer's, once stored.
 *
 * Why not malloc: the copy is the floor of recording data, and for a
 * payload of megabytes most of it is not the copy but faulting in fresh
 * pages (bench_copyhash: 48 MiB into fresh 4 KiB pages 20.5 ms on the
 * 2-core machine, into memory already touched 2.6 ms). So payloads of
 * PAYLOAD_BIG or more go into their own mapping, in whole 2 MiB pages
 * where the kernel gives them (MADV_HUGEPAGE: one fault and one clear a
 * 2 MiB page, 4.0 ms for the same 48 MiB), and up to POOL_BYTES of them
 * freed are kept for the next payloads (a program that moves the same
 * buffers every frame touches no fresh page after its first). Smaller
 * payloads come from malloc, whose own free lists reuse their memory.
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

#include "recorder.h"

#if defined(__SANITIZE_ADDRESS__)
#define PAYLOAD_MALLOC_ONLY 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PAYLOAD_MALLOC_ONLY 1
#endif
#endif

#define HUGE_PAGE (2u << 20)
#define PAYLOAD_BIG (1u << 20)       /* from here on, a mapping of its own */
#define POOL_MAX 4                   /* mappings kept for reuse */
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

#ifndef PAYLOAD_MALLOC_ONLY
/* A fresh mapping of at least len bytes (a multiple of HUGE_PAGE) that
 * starts on a 2 MiB boundary, so that all of it can be whole pages. */
static void *map_aligned(size_t len)
{
  size_t over = len + HUGE_PAGE;
  unsigned char *m = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    return NULL;
  uintptr_t at = ((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  size_t before = at - (uintptr_t)m;
  if (before)
    munmap(m, before);
  if (over - before - len)
    munmap((unsigned char *)at + len, over - before - len);
  /* Where transparent huge pages are off, this fails and 4 KiB pages
   * serve as before. */
  (void)madvise((void *)at, len, MADV_HUGEPAGE);
  return (void *)at;
}
#endif

void *pt_payload_alloc(uint64_t size)
{
  if (size > SIZE_MAX - sizeof(payload_hdr) - HUGE_PAGE)
    return NULL;
  size_t need = sizeof(payload_hdr) + (size_t)size;
#ifndef PAYLOAD_MALLOC_ONLY
  if (size >= PAYLOAD_BIG) {
    payload_hdr *h = NULL;
    pthread_mutex_lock(&pool_lock);
    unsigned best = POOL_MAX;
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
      size_t len = (need + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1);
      if (!(h = map_aligned(len)))
        return NULL;
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
