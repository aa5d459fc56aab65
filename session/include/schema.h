/*
 * schema.h: the session database's schema (schema.c, docs/schema.md): its
 * version, the SQL that creates its tables and views (and upgrades a
 * version-1 file), and how payloads are
 * stored, for whatever writes a session database (the recorder's writer,
 * pitrace extract).
 */
#ifndef PT_SCHEMA_H
#define PT_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sqlite3 sqlite3;

/* The schema version this build writes and reads. */
#define PT_SCHEMA_VERSION 2

/* Creates the tables and views (IF NOT EXISTS: several sessions share one
 * file). */
extern const char shim_schema_sql[];
/* Turns a version-1 file into a version-2 one that still holds its
 * version-1 sessions (the calls view reads both), for a writer that opens
 * one: run in the write transaction, after shim_schema_sql. */
extern const char pt_schema_upgrade_sql[];

/* Why SQLite's write on db failed, into why: its message, and the cause
 * its "disk I/O error" or "database or disk is full" does not name (the
 * error number it kept, or else the file size limit (ulimit -f) if one is
 * set: SQLite keeps no errno for a write the limit cut short, and rolls
 * the file back before this is asked, so its size says nothing). Returns
 * why. For every writer of a session database (the recorder, extract). */
const char *pt_sqlite_write_error(sqlite3 *db, char *why, size_t n);

/* Creates the tables and views and the API description the views read
 * (pi_api, pi_params, pi_enums) where they are missing, in db's open
 * write transaction; false with the reason in err. A file that says
 * (pitrace_meta: schema_sql) it was made by this very schema is left as it
 * is, without running the SQL. */
bool pt_schema_create(sqlite3 *db, char *err, size_t errn);
/* Whether db's sessions table has the parent columns (parent_pid,
 * parent_session): files of recorders before them do not. */
bool pt_schema_has_parents(sqlite3 *db);
/* In a file of such a recorder, in the open write transaction: adds them
 * (NULL in its sessions) and makes its pi_sessions view again with them
 * (the schema's SQL, which makes only what is missing); false when SQLite
 * failed. */
bool pt_schema_add_parents(sqlite3 *db);
/* The schema version db says it holds (pitrace_meta), 0 when none. */
int pt_schema_stored_version(sqlite3 *db);
/* Whether db holds another program's tables and no pitrace schema: what
 * nothing of pitrace may write into (a mistyped SYCL_PI_RECORD naming an
 * application's own database); err then says so in a phrase. */
bool pt_schema_foreign(sqlite3 *db, char *err, size_t errn);

/* A new session database, empty, holding what pt_schema_create makes,
 * with a rollback journal (writer_db.c says why not WAL): made when this
 * library was built (make_template.c), so that a recording into a new file
 * copies it instead of creating the schema and the description statement
 * by statement (milliseconds on every recorded run's start). */
extern const unsigned char pt_schema_template[];
extern const size_t pt_schema_template_size;

/* The page size of a new session database. Payloads (buffers of many
 * megabytes) go into blobs through SQLite's page cache a page at a time:
 * on the GPU host, when the recorder wrote through a WAL, 48 MB took
 * 104-154 ms to store with 4 KiB pages and 80 ms with 16 KiB (73 with 32
 * KiB, 54 + 21 to checkpoint with 64 KiB), which every recording with
 * data waits for at its end. 16 KiB keeps an empty session database
 * under half a megabyte. */
#define PT_PAGE_SIZE 16384
#define PT_PAGE_SIZE_SQL "PRAGMA page_size=16384;"

/* Payloads up to this many bytes are stored in their call (or data row);
 * larger ones once, in blobs, by the key pt_blob_key gives. */
#define PT_INLINE_DATA 64
#define PT_BLOB_KEY 16

/* The blobs key of a payload: its XXH3-128 hash, high half first. */
void pt_blob_key(const void *bytes, size_t size, unsigned char key[PT_BLOB_KEY]);

#endif /* PT_SCHEMA_H */
