/*
 * test_payload: the payload file's room (session/payload.c), through the
 * calls the shim and the writer make: pt_payload_copy on the application's
 * thread, pt_payload_view / free / drop on the writer's, pt_payload_committed
 * at a commit, and pt_payload_salvage_scan as a salvager walks the file of
 * a process that is gone.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "recorder.h"
#include "testutil.h"

#define MIB ((uint64_t)1 << 20)

static unsigned char *pattern(uint64_t size, unsigned seed)
{
  unsigned char *p = malloc(size);
  cr_assert_not_null(p);
  for (uint64_t i = 0; i < size; i++)
    p[i] = (unsigned char)(i * 7 + seed);
  return p;
}

static char *payload_file(void)
{
  char *path = tu_temp_path("-payloads.1");
  pt_payload_use_file(path);
  return path;
}

static off_t file_length(const char *path)
{
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "%s", path);
  return st.st_size;
}

/* The writer's side of a stored payload: viewed, freed, committed. */
static void store(uint64_t token)
{
  const void *v = pt_payload_view(token);
  cr_assert_not_null(v);
  pt_payload_free(v);
}

/* A payload whose view could not be had is dropped, and dropped again
 * when a second reader of its record fails too (an encoder printing the
 * call later did): its region went back twice, and the next two payloads
 * were given the same room, one over the other. */
Test(payload, a_region_dropped_twice_is_given_back_once)
{
  char *path = payload_file();
  unsigned char *src = pattern(2 * MIB, 1);
  uint64_t a = pt_payload_copy(src, 2 * MIB);
  cr_assert(a & 1, "not in the payload file: %#llx", (unsigned long long)a);
  pt_payload_drop(a);
  pt_payload_drop(a);
  pt_payload_committed();
  uint64_t b = pt_payload_copy(src, 2 * MIB), c = pt_payload_copy(src, 2 * MIB);
  cr_assert(b & 1 && c & 1);
  cr_assert_neq(b, c, "two payloads in flight share the room at %#llx", (unsigned long long)b);
  store(b);
  store(c);
  pt_payload_committed();
  pt_payload_file_remove();
  free(src);
  free(path);
}

/* Room stored and committed beyond what the pool keeps (4 regions, 64
 * MiB) is punched and taken again: the same payloads in flight a second
 * time leave the file as long as the first time (it grew by each round). */
Test(payload, punched_room_is_taken_again)
{
  char *path = payload_file();
  unsigned char *src = pattern(20 * MIB, 2);
  uint64_t t[6];
  off_t first = 0;
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 6; i++)
      cr_assert((t[i] = pt_payload_copy(src, 20 * MIB)) & 1);
    if (!round)
      first = file_length(path);
    cr_assert_leq(file_length(path), first, "round %d: %lld bytes, first %lld", round,
                  (long long)file_length(path), (long long)first);
    for (int i = 0; i < 6; i++)
      store(t[i]);
    pt_payload_committed();
  }
  pt_payload_file_remove();
  free(src);
  free(path);
}

/* The file as a salvager finds it after room was freed, joined and split
 * again: every region still waiting is found, with its bytes; those
 * stored, dropped or free are not. */
Test(payload, the_walk_over_joined_and_split_room_finds_every_waiting_payload)
{
  char *path = payload_file();
  unsigned char *big = pattern(20 * MIB, 3), *small = pattern(3 * MIB, 4);
  uint64_t t[6];
  for (int i = 0; i < 6; i++)
    cr_assert((t[i] = pt_payload_copy(big, 20 * MIB)) & 1);
  for (int i = 0; i < 6; i++)
    store(t[i]);
  pt_payload_committed(); /* 3 kept in the pool, the others punched and joined */
  uint64_t w[8];
  for (int i = 0; i < 8; i++) /* the pool's, then the joined room split */
    cr_assert((w[i] = pt_payload_copy(small, 3 * MIB - (uint64_t)i)) & 1);
  store(w[1]);
  pt_payload_drop(w[2]);
  pt_payload_committed();
  int fd = open(path, O_RDONLY);
  cr_assert_geq(fd, 0);
  off_t len = file_length(path);
  const unsigned char *m = mmap(NULL, (size_t)len, PROT_READ, MAP_SHARED, fd, 0);
  cr_assert_neq(m, MAP_FAILED);
  pt_salvaged_payload found[16];
  int n = pt_payload_salvage_scan(m, (uint64_t)len, found, 16);
  cr_assert_eq(n, 6, "%d payloads waiting found, not 6", n);
  for (int i = 0; i < 8; i++) {
    int k = 0;
    while (k < n && found[k].token != w[i])
      k++;
    if (i == 1 || i == 2) {
      cr_assert_eq(k, n, "payload %d (stored or dropped) found waiting", i);
      continue;
    }
    cr_assert_lt(k, n, "payload %d not found", i);
    cr_assert_eq(found[k].size, 3 * MIB - (uint64_t)i);
    cr_assert_eq(memcmp(found[k].data, small, found[k].size), 0, "payload %d's bytes", i);
  }
  munmap((void *)m, (size_t)len);
  close(fd);
  for (int i = 0; i < 8; i++)
    if (i != 1 && i != 2)
      store(w[i]);
  pt_payload_committed();
  pt_payload_file_remove();
  free(big);
  free(small);
  free(path);
}

static uint64_t free_mib(const char *dir)
{
  struct statvfs v;
  cr_assert_eq(statvfs(dir, &v), 0);
  return (uint64_t)v.f_bavail * v.f_frsize / MIB;
}

/* Punched room takes the disk's blocks again: a payload goes there only
 * while the disk keeps 64 MiB for the database, as for room past the
 * file's end (it went into punched room on a disk with 3 MiB free, and
 * filled it). */
Test(payload, punched_room_is_taken_again_only_where_the_disk_has_room)
{
  char dir[32];
  tu_small_tmpfs(dir, "160m");
  char path[64], fill[64];
  snprintf(path, sizeof path, "%s/db-payloads.1", dir);
  snprintf(fill, sizeof fill, "%s/filler", dir);
  pt_payload_use_file(path);
  unsigned char *src = pattern(3 * MIB, 5);
  uint64_t t[12];
  for (int i = 0; i < 12; i++)
    cr_assert((t[i] = pt_payload_copy(src, 3 * MIB)) & 1);
  for (int i = 0; i < 12; i++)
    store(t[i]);
  pt_payload_committed(); /* 4 kept in the pool, 8 punched */
  int f = open(fill, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  cr_assert_geq(f, 0);
  static char block[1 << 20];
  memset(block, 1, sizeof block);
  while (free_mib(dir) > 20 && write(f, block, sizeof block) > 0)
    ;
  close(f);
  unsigned char *big = pattern(6 * MIB, 6); /* larger than any pooled region */
  uint64_t before = free_mib(dir);
  uint64_t b = pt_payload_copy(big, 6 * MIB);
  cr_assert(b && !(b & 1), "a payload went into the payload file with %llu MiB free",
            (unsigned long long)before);
  pt_payload_free(pt_payload_view(b));
  cr_assert_geq(free_mib(dir) + 1, before);
  pt_payload_committed();
  pt_payload_file_remove();
  free(big);
  free(src);
  tu_small_tmpfs_gone(dir);
}

/* Bytes at a bad address (a call given host data at 0x40) are no copy,
 * and no fault: write(2) finds them unreadable. The file stays in use:
 * taken for a full disk, it was turned off for the rest of the session,
 * and the copy into process memory that followed faulted in the shim. */
Test(payload, bytes_at_a_bad_address_are_no_copy_and_the_file_stays)
{
  char *path = payload_file();
  cr_assert_eq(pt_payload_copy((const void *)(uintptr_t)64, 2 * MIB), 0);
  unsigned char *src = pattern(2 * MIB, 3);
  uint64_t a = pt_payload_copy(src, 2 * MIB);
  cr_assert(a & 1, "not in the payload file: %#llx", (unsigned long long)a);
  const void *v = pt_payload_view(a);
  cr_assert_not_null(v);
  cr_assert_eq(memcmp(v, src, 2 * MIB), 0);
  pt_payload_free(v);
  pt_payload_committed();
  /* The bad copy's room went back: the file holds the one payload. */
  cr_assert_leq(file_length(path), (off_t)(3 * MIB));
  pt_payload_file_remove();
  free(src);
  free(path);
}
