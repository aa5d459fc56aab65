/*
 * fuzz_salvage: salvaging a damaged ring file (session/writer.c:
 * writer_salvage, what pitrace does to the rings of a recording process
 * that died). The input is a ring file, or "PLD1", the ring file's length
 * (u32, little-endian), the ring file and the payload file beside it (the
 * large payloads a process that died left, which its ring's records name
 * by token); beside them lies a fresh copy of a valid database whose
 * session is still "running", as a killed recording leaves it (the seeds:
 * the ring file and database of a recording that ended in _exit, and the
 * ring and payload files of one that ended in _exit with payloads
 * waiting, rings cut to a few KB, from fuzz/make_seeds.sh). The database
 * is $PITRACE_FUZZ_SALVAGE_DB, by default the one make_seeds.sh wrote
 * into the build tree.
 *
 * Checks: no crash, no sanitizer report, no leak; a failed salvage says
 * why; a salvage that succeeded leaves a database that pt_open opens and
 * whose every session pt_load reads.
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"
#include "session.h"
#include "recorder.h"

#ifndef FUZZ_SALVAGE_DB
#define FUZZ_SALVAGE_DB ""
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned char *base_db;
static size_t base_size;
static char db_path[512], ring_path[600], payload_path[700];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
  (void)argc;
  (void)argv;
  const char *src = getenv("PITRACE_FUZZ_SALVAGE_DB");
  if (!src || !*src)
    src = FUZZ_SALVAGE_DB;
  FILE *f = fopen(src, "rb");
  struct stat st;
  if (!f || fstat(fileno(f), &st) != 0 || !(base_db = malloc((size_t)st.st_size + 1)) ||
      fread(base_db, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
    fprintf(stderr, "fuzz_salvage: cannot read the database '%s' (run fuzz/make_seeds.sh, or "
                    "set PITRACE_FUZZ_SALVAGE_DB)\n", src);
    exit(2);
  }
  fclose(f);
  base_size = (size_t)st.st_size;
  snprintf(db_path, sizeof db_path, "%s/s.db", fuzz_scratch());
  snprintf(ring_path, sizeof ring_path, "%s-rings.1.fuzz", db_path);
  if (!ringfile_payload_path(ring_path, payload_path, sizeof payload_path)) {
    fprintf(stderr, "fuzz_salvage: no payload file's name for %s\n", ring_path);
    exit(2);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_remove_db(db_path);
  fuzz_write_file(db_path, base_db, base_size);
  /* A ring file with its payload file, or a ring file alone. */
  uint32_t ring_len = 0;
  bool pair = size >= 8 && memcmp(data, "PLD1", 4) == 0;
  if (pair)
    memcpy(&ring_len, data + 4, 4);
  if (pair && ring_len <= size - 8) {
    fuzz_write_file(ring_path, data + 8, ring_len);
    fuzz_write_file(payload_path, data + 8 + ring_len, size - 8 - ring_len);
  } else {
    fuzz_write_file(ring_path, data, size);
  }
  char err[1024] = "";
  int n = writer_salvage(db_path, NULL, NULL, err, sizeof err);
  if (n < 0 && !err[0])
    abort();
  if (n > 0) {
    pt_db db;
    if (!pt_open(db_path, false, &db, err, sizeof err)) {
      fprintf(stderr, "fuzz_salvage: the salvaged database does not open: %s\n", err);
      abort();
    }
    size_t ns = 0;
    pt_session_info *s = pt_sessions(&db, &ns, err, sizeof err);
    if (!s) {
      fprintf(stderr, "fuzz_salvage: the salvaged database lists no session: %s\n", err);
      abort();
    }
    for (size_t i = 0; i < ns; i++) {
      pt_calls calls;
      if (!pt_load(&db, s[i].id, &calls, err, sizeof err)) {
        fprintf(stderr, "fuzz_salvage: session %lld of the salvaged database does not load: "
                        "%s\n", (long long)s[i].id, err);
        abort();
      }
      pt_calls_free(&calls);
    }
    free(s);
    pt_close(&db);
  }
  unlink(ring_path);
  unlink(payload_path);
  fuzz_remove_db(db_path);
  return 0;
}
