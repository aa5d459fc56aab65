/*
 * sqlite_ext.c: the entry of libpitrace_sqlite.so, the SQLite extension
 * that gives the sqlite3 shell pitrace_calls, through which the calls view
 * (and the pi_calls, pi_args and data views on it) reads version-2 chunks:
 * `pitrace sql FILE` loads it, or `.load libpitrace_sqlite` by hand.
 * chunk_sql.c, built into the extension too, holds the function itself.
 */
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1

#include "chunk.h"

__attribute__((visibility("default"))) int sqlite3_pitracesqlite_init(
    sqlite3 *db, char **err, const sqlite3_api_routines *api)
{
  (void)err;
  SQLITE_EXTENSION_INIT2(api);
  return pt_sqlite_register(db);
}
