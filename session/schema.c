/*
 * schema.c: the SQL schema of a pitrace session database, version 2
 * (docs/schema.md explains every table and view), and the upgrade of a
 * version-1 file to it. Tables hold compact data; the pi_* views give
 * readable names and values in sqlite3 (`pitrace sql`: version-2 chunks are
 * read through pitrace_calls, chunk_sql.c). Created with IF NOT EXISTS, so
 * several sessions share one file.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <xxhash.h>

#include "pi_api.h"
#include "schema.h"

/* What version 2 adds to version 1: the binary chunks and the calls view
 * that reads them too. */
#define CALLS_V2_SQL                                                                      \
  "CREATE TABLE IF NOT EXISTS call_chunks(session INTEGER, id INTEGER, first_seq INTEGER,\n" \
  "  last_seq INTEGER, ncalls INTEGER, calls BLOB, PRIMARY KEY(session, id)) WITHOUT ROWID;\n" \
  "CREATE VIEW IF NOT EXISTS calls AS\n"                                                   \
  "  SELECT ch.session, json_extract(j.value, '$[0]') AS seq,\n"                          \
  "    json_extract(j.value, '$[1]') AS thread, json_extract(j.value, '$[2]') AS plugin,\n" \
  "    json_extract(j.value, '$[3]') AS api, json_extract(j.value, '$[4]') AS result,\n"  \
  "    json_extract(j.value, '$[5]') AS start_ns, json_extract(j.value, '$[6]') AS dur_ns,\n" \
  "    json_extract(j.value, '$[7]') AS args, json_extract(j.value, '$[8]') AS stack,\n"  \
  "    json_extract(j.value, '$[9]') AS data\n"                                           \
  "  FROM chunks ch, json_each(ch.calls) j\n"                                             \
  "  UNION ALL\n"                                                                         \
  "  SELECT cc.session, c.seq, c.thread, c.plugin, c.api, c.result, c.start_ns, c.dur_ns,\n" \
  "    c.args, c.stack, c.data\n"                                                         \
  "  FROM call_chunks cc, pitrace_calls(cc.calls, cc.session, cc.id) c\n"                 \
  "  UNION ALL\n"                                                                         \
  "  SELECT session, seq, thread, plugin, api, NULL, start_ns, NULL, args, stack, data\n" \
  "  FROM inflight;\n"

const char shim_schema_sql[] =
    "CREATE TABLE IF NOT EXISTS pitrace_meta(key TEXT PRIMARY KEY, value TEXT);\n"
    "INSERT OR IGNORE INTO pitrace_meta VALUES ('format', 'pitrace session');\n"
    "INSERT OR IGNORE INTO pitrace_meta VALUES ('schema_version', '2');\n"
    /* One process run. */
    "CREATE TABLE IF NOT EXISTS sessions(\n"
    "  id INTEGER PRIMARY KEY, label TEXT, pid INTEGER, command TEXT, cwd TEXT, host TEXT,\n"
    "  start_unix_ns INTEGER, end_unix_ns INTEGER, duration_ns INTEGER,\n"
    "  pi_version TEXT, env TEXT, ended TEXT, signal INTEGER, exit_status INTEGER,\n"
    "  incomplete_reason TEXT, data_mode TEXT, filter TEXT, calls INTEGER,\n"
    "  schema_version INTEGER, parent_pid INTEGER, parent_session INTEGER);\n"
    "CREATE TABLE IF NOT EXISTS plugins(session INTEGER, idx INTEGER, name TEXT, path TEXT,\n"
    "  version TEXT, backend TEXT, PRIMARY KEY(session, idx)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS threads(session INTEGER, idx INTEGER, tid INTEGER,\n"
    "  PRIMARY KEY(session, idx)) WITHOUT ROWID;\n"
    /* Calls, in chunks. Version 2: call_chunks, each row a binary chunk
     * (chunk.c) with its lowest and highest seq and its count in plain
     * columns, read in SQL through pitrace_calls. Version 1 (files of
     * older recorders): chunks, each row a JSON array of calls [seq,
     * thread, plugin, api, result, start_ns, dur_ns, args, stack, data].
     * A session's chunks are all in the table of its schema_version; a
     * file upgraded from version 1 holds both. Calls that had not
     * returned at the last commit are in inflight. The calls view unpacks
     * all three. */
    "CREATE TABLE IF NOT EXISTS chunks(session INTEGER, id INTEGER, calls TEXT,\n"
    "  PRIMARY KEY(session, id)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS inflight(session INTEGER, seq INTEGER, thread INTEGER,\n"
    "  plugin INTEGER, api INTEGER, start_ns INTEGER, args TEXT, stack INTEGER, data TEXT,\n"
    "  PRIMARY KEY(session, seq)) WITHOUT ROWID;\n"
    CALLS_V2_SQL
    "CREATE TABLE IF NOT EXISTS handles(session INTEGER, id INTEGER, kind TEXT,\n"
    "  created_seq INTEGER, created INTEGER, created_by TEXT, released_seq INTEGER,\n"
    "  released_by TEXT,\n"
    "  PRIMARY KEY(session, id)) WITHOUT ROWID;\n"
    /* Payloads up to 64 bytes live in their call (the calls' data
     * element); larger ones, and data captured later (readback), are rows
     * here, their content once in blobs by content hash. The data view
     * shows both. */
    "CREATE TABLE IF NOT EXISTS data_rows(session INTEGER, seq INTEGER, position INTEGER,\n"
    "  role TEXT, idx INTEGER, size INTEGER, hash BLOB, content BLOB, captured_seq INTEGER,\n"
    "  stored INTEGER, PRIMARY KEY(session, seq, position, role, idx)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS blobs(hash BLOB PRIMARY KEY, size INTEGER, content BLOB);\n"
    "CREATE TABLE IF NOT EXISTS notes(session INTEGER, seq INTEGER, idx INTEGER, kind TEXT,\n"
    "  api TEXT, kernel TEXT, device TEXT, symbol TEXT, image TEXT, symbolic_id TEXT,\n"
    "  numeric_ids TEXT, value BLOB, native INTEGER, text TEXT,\n"
    "  PRIMARY KEY(session, seq, idx)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS stacks(session INTEGER, id INTEGER, frames TEXT,\n"
    "  PRIMARY KEY(session, id)) WITHOUT ROWID;\n"
    /* While a session records: what its writer knew at its last commit
     * and how far it had read each ring, so that the calls left in the
     * ring file of a process that died are salvaged from there. */
    "CREATE TABLE IF NOT EXISTS recorder_state(session INTEGER, part INTEGER, state BLOB,\n"
    "  PRIMARY KEY(session, part)) WITHOUT ROWID;\n"
    /* The API description, for the views. */
    /* Device times of device commands (SYCL_PI_RECORD_PROFILE=1): start_ns
     * and end_ns on the session's clock (NULL when the device clock could
     * not be mapped), device_*_ns as the device gave them. */
    "CREATE TABLE IF NOT EXISTS device_times(session INTEGER, seq INTEGER, api INTEGER,\n"
    "  queue INTEGER, device INTEGER, start_ns INTEGER, end_ns INTEGER,\n"
    "  device_start_ns INTEGER, device_end_ns INTEGER,\n"
    "  PRIMARY KEY(session, seq)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS device_clocks(session INTEGER, device INTEGER,\n"
    "  device_ns0 INTEGER, host_ns0 INTEGER, device_ns1 INTEGER, host_ns1 INTEGER,\n"
    "  PRIMARY KEY(session, device)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS pi_api(id INTEGER PRIMARY KEY, name TEXT, grp TEXT);\n"
    "CREATE TABLE IF NOT EXISTS pi_params(api INTEGER, position INTEGER, name TEXT,\n"
    "  direction TEXT, type TEXT, kind TEXT, elem TEXT, obj TEXT, enum TEXT, flags INTEGER,\n"
    "  PRIMARY KEY(api, position)) WITHOUT ROWID;\n"
    "CREATE TABLE IF NOT EXISTS pi_enums(type TEXT, value INTEGER, name TEXT,\n"
    "  PRIMARY KEY(type, value)) WITHOUT ROWID;\n"
    /* Readable views. */
    "CREATE VIEW IF NOT EXISTS data AS\n"
    "  SELECT r.session, r.seq, r.position, r.role, r.idx, r.size, r.stored, r.captured_seq,\n"
    "    r.hash, coalesce(r.content, b.content) AS content,\n"
    "    hex(coalesce(r.content, b.content)) AS hex\n"
    "  FROM data_rows r LEFT JOIN blobs b ON b.hash = r.hash\n"
    "  UNION ALL\n"
    "  SELECT c.session, c.seq, json_extract(d.value, '$[0]'), json_extract(d.value, '$[1]'),\n"
    "    json_extract(d.value, '$[2]'), json_extract(d.value, '$[3]'),\n"
    "    length(json_extract(d.value, '$[4]')) / 2, NULL, NULL, NULL,\n"
    "    json_extract(d.value, '$[4]')\n"
    "  FROM calls c, json_each(c.data) d WHERE c.data IS NOT NULL;\n"
    "CREATE VIEW IF NOT EXISTS pi_sessions AS\n"
    "  SELECT s.id AS session, s.label, s.pid, s.command, s.host, s.ended, s.signal,\n"
    "    s.incomplete_reason, s.calls, s.duration_ns,\n"
    "    (SELECT group_concat(p.backend || ':' || p.name, ', ') FROM plugins p\n"
    "       WHERE p.session = s.id) AS plugins, s.parent_pid, s.parent_session\n"
    "  FROM sessions s;\n"
    "CREATE VIEW IF NOT EXISTS pi_calls AS\n"
    "  SELECT c.session, c.seq, c.thread, a.name AS api,\n"
    "    CASE WHEN c.result IS NULL THEN NULL\n"
    "         ELSE coalesce(r.name, c.result) END AS result,\n"
    "    c.start_ns, c.start_ns + c.dur_ns AS end_ns, c.plugin, c.stack\n"
    "  FROM calls c JOIN pi_api a ON a.id = c.api\n"
    "  LEFT JOIN pi_enums r ON r.type = 'pi_result' AND r.value = c.result;\n"
    "CREATE VIEW IF NOT EXISTS pi_args AS\n"
    "  SELECT c.session, c.seq, p.position, p.name, p.direction, p.type,\n"
    "    CASE\n"
    "      WHEN j.type = 'null' AND p.kind NOT IN ('bytes', 'strings', 'blobs', 'hostptr')\n"
    "        THEN 'NULL'\n"
    "      WHEN p.elem IN ('bool', 'cbool') AND j.type = 'integer' THEN\n"
    "        CASE j.value WHEN 0 THEN 'false' WHEN 1 THEN 'true' ELSE j.value END\n"
    "      WHEN p.kind IN ('handle', 'handles') AND j.type = 'integer' THEN\n"
    "        CASE WHEN j.value = 0 THEN 'NULL' ELSE p.obj || '#' || j.value END\n"
    "      WHEN p.kind IN ('handle', 'handles') AND j.type = 'array' THEN\n"
    "        '[' || coalesce((SELECT group_concat(p.obj || '#' || e.value, ', ')\n"
    "                         FROM json_each(j.value) e), '') || ']'\n"
    "      WHEN p.enum IS NOT NULL AND j.type = 'integer' THEN\n"
    "        coalesce((SELECT e.name FROM pi_enums e WHERE e.type = p.enum\n"
    "                  AND e.value = j.value),\n"
    "                 CASE WHEN p.flags = 1 THEN\n"
    "                   (SELECT group_concat(e.name, '|') FROM pi_enums e\n"
    "                    WHERE e.type = p.enum AND e.value > 0\n"
    "                      AND (e.value & (e.value - 1)) = 0\n"
    "                      AND (j.value & e.value) = e.value)\n"
    "                   || CASE WHEN j.value & ~(SELECT coalesce(sum(e.value), 0)\n"
    "                        FROM pi_enums e WHERE e.type = p.enum AND e.value > 0\n"
    "                          AND (e.value & (e.value - 1)) = 0) <> 0\n"
    "                      THEN printf('|0x%x', j.value & ~(SELECT coalesce(sum(e.value), 0)\n"
    "                        FROM pi_enums e WHERE e.type = p.enum AND e.value > 0\n"
    "                          AND (e.value & (e.value - 1)) = 0)) ELSE '' END\n"
    "                 END,\n"
    "                 printf('0x%x', j.value))\n"
    "      WHEN p.kind IN ('bytes', 'strings', 'blobs', 'hostptr') THEN\n"
    "        coalesce((SELECT CASE WHEN p.kind = 'strings' AND d.content IS NOT NULL\n"
    "                    THEN printf('%d bytes: \"%s\"', d.size,\n"
    "                       replace(substr(CAST(d.content AS TEXT), 1, 60), char(10), '\\n'))\n"
    "                    ELSE printf('%d bytes (%s): %s', d.size, d.role, substr(d.hex, 1, 32))\n"
    "                    END\n"
    "                  FROM data d WHERE d.session = c.session AND d.seq = c.seq\n"
    "                    AND d.position = p.position ORDER BY d.role, d.idx LIMIT 1),\n"
    "                 CASE WHEN j.type = 'null' THEN 'NULL'\n"
    "                      WHEN p.kind = 'hostptr' AND j.type = 'integer'\n"
    "                        THEN printf('0x%x', j.value)\n"
    "                      WHEN j.type = 'integer' THEN '(not captured)'\n"
    "                      ELSE j.value END)\n"
    "      WHEN (p.elem = 'ptr' OR p.kind IN ('usmptr', 'usmref', 'fnptr'))\n"
    "           AND j.type = 'integer' THEN\n"
    "        CASE WHEN j.value = 0 THEN 'NULL' WHEN p.kind = 'fnptr' THEN 'function'\n"
    "             ELSE printf('0x%x', j.value) END\n"
    "      ELSE j.value\n"
    "    END AS value\n"
    "  FROM calls c JOIN pi_params p ON p.api = c.api\n"
    "  JOIN json_each(c.args) j ON j.key = p.position;\n"
    "CREATE VIEW IF NOT EXISTS pi_device_times AS\n"
    "  SELECT d.session, d.seq, a.name AS api, 'queue#' || d.queue AS queue,\n"
    "    'device#' || d.device AS device, d.start_ns, d.end_ns,\n"
    "    d.device_end_ns - d.device_start_ns AS device_ns,\n"
    "    CASE WHEN d.start_ns IS NULL THEN 'device' ELSE 'session' END AS clock\n"
    "  FROM device_times d JOIN pi_api a ON a.id = d.api;\n"
    "CREATE VIEW IF NOT EXISTS pi_handles AS\n"
    "  SELECT h.session, h.kind || '#' || h.id AS handle, h.kind, h.id,\n"
    "    h.created_seq, CASE h.created WHEN 1 THEN 'created' ELSE 'first seen' END AS origin,\n"
    "    h.created_by, h.released_seq, h.released_by\n"
    "  FROM handles h;\n"
    "CREATE VIEW IF NOT EXISTS pi_link_decisions AS\n"
    "  SELECT n.session, n.seq, n.api AS before_api,\n"
    "    n.kind, n.kernel, n.device, n.symbol, n.image, n.text\n"
    "  FROM notes n WHERE n.kind IN ('link', 'symbol', 'odr', 'cache');\n"
    "CREATE VIEW IF NOT EXISTS pi_spec_constants AS\n"
    "  SELECT n.session, n.seq, n.kernel, n.device, n.symbolic_id, n.numeric_ids,\n"
    "    hex(n.value) AS value_hex, length(n.value) AS size,\n"
    "    CASE n.native WHEN 1 THEN 'native' ELSE 'emulated' END AS how, n.text\n"
    "  FROM notes n WHERE n.kind = 'spec_constant';\n";

const char pt_schema_upgrade_sql[] =
    "DROP VIEW IF EXISTS calls;\n" CALLS_V2_SQL
    "UPDATE pitrace_meta SET value = '2' WHERE key = 'schema_version';\n";

void pt_blob_key(const void *bytes, size_t size, unsigned char key[PT_BLOB_KEY])
{
  XXH128_hash_t h = XXH3_128bits(bytes, size);
  memcpy(key, &h.high64, 8);
  memcpy(key + 8, &h.low64, 8);
}

/* The static tables the views read: the API description itself (pi_api,
 * pi_params, pi_enums), from the one description (runtime/api/pi.api). */
static bool write_description(sqlite3 *db)
{
  sqlite3_stmt *a = NULL, *p = NULL, *en = NULL;
  bool ok =
      sqlite3_prepare_v2(db, "INSERT INTO pi_api(id, name, grp) VALUES (?,?,?)", -1, &a,
                         NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "INSERT INTO pi_params(api, position, name, direction, type, "
                             "kind, elem, obj, enum, flags) VALUES (?,?,?,?,?,?,?,?,?,?)",
                         -1, &p, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO pi_enums(type, value, name) VALUES (?,?,?)",
                         -1, &en, NULL) == SQLITE_OK;
  static const char *const elems[] = {"", "u32", "i32", "u64", "size", "bool", "cbool",
                                      "native", "ptr", "string", "enum", "flags", "handle",
                                      "props", "bytes"};
  static const char *const kinds[] = {"scalar", "handle", "handles", "string", "strings",
                                      "bytes", "array", "info", "props", "binaries",
                                      "blobs", "properties", "image_format", "image_desc",
                                      "mem_obj_property", "fnptr", "hostptr", "usmptr",
                                      "usmref"};
  static const char *const dirs[] = {"in", "out", "inout"};
  for (uint32_t id = 0; ok && id < PI_API_COUNT; id++) {
    const pi_api_desc *d = &pi_api_table[id];
    sqlite3_bind_int(a, 1, (int)id);
    sqlite3_bind_text(a, 2, d->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(a, 3, d->group, -1, SQLITE_STATIC);
    ok = sqlite3_step(a) == SQLITE_DONE && sqlite3_reset(a) == SQLITE_OK;
    for (unsigned i = 0; ok && i < d->nparams; i++) {
      const pi_param_desc *pd = &d->params[i];
      sqlite3_clear_bindings(p);
      sqlite3_bind_int(p, 1, (int)id);
      sqlite3_bind_int(p, 2, (int)i);
      sqlite3_bind_text(p, 3, pd->name, -1, SQLITE_STATIC);
      sqlite3_bind_text(p, 4, dirs[pd->dir], -1, SQLITE_STATIC);
      sqlite3_bind_text(p, 5, pd->ctype, -1, SQLITE_STATIC);
      sqlite3_bind_text(p, 6, kinds[pd->kind], -1, SQLITE_STATIC);
      if (pd->vt)
        sqlite3_bind_text(p, 7, elems[pd->vt], -1, SQLITE_STATIC);
      if (pd->obj)
        sqlite3_bind_text(p, 8, pi_object_kind_name(pd->obj), -1, SQLITE_STATIC);
      else if (pd->creates)
        sqlite3_bind_text(p, 8, pi_object_kind_name(pd->creates), -1, SQLITE_STATIC);
      if (pd->en && pd->kind != PI_PK_INFO) {
        sqlite3_bind_text(p, 9, pd->en->name, -1, SQLITE_STATIC);
        sqlite3_bind_int(p, 10, pd->en->is_flags);
      }
      ok = sqlite3_step(p) == SQLITE_DONE && sqlite3_reset(p) == SQLITE_OK;
    }
  }
  for (size_t i = 0; ok && i < pi_enum_table_count; i++) {
    const pi_enum_desc *d = pi_enum_table[i];
    for (unsigned j = 0; ok && j < d->count; j++) {
      sqlite3_bind_text(en, 1, d->name, -1, SQLITE_STATIC);
      sqlite3_bind_int64(en, 2, d->entries[j].value);
      sqlite3_bind_text(en, 3, d->entries[j].name, -1, SQLITE_STATIC);
      ok = sqlite3_step(en) == SQLITE_DONE && sqlite3_reset(en) == SQLITE_OK;
    }
  }
  sqlite3_finalize(a);
  sqlite3_finalize(p);
  sqlite3_finalize(en);
  return ok;
}

/* The value pitrace_meta's schema_sql holds in a file whose tables and
 * views shim_schema_sql made, and that holds the description. */
static void schema_stamp(char out[17])
{
  snprintf(out, 17, "%016llx",
           (unsigned long long)XXH3_64bits(shim_schema_sql, sizeof shim_schema_sql - 1));
}

/* Whether `sql` gives a row. */
static bool has_row(sqlite3 *db, const char *sql)
{
  sqlite3_stmt *q = NULL;
  bool has =
      sqlite3_prepare_v2(db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW;
  sqlite3_finalize(q);
  return has;
}

bool pt_schema_has_parents(sqlite3 *db)
{
  return has_row(db, "SELECT 1 FROM pragma_table_info('sessions') WHERE name = 'parent_pid'");
}

bool pt_schema_add_parents(sqlite3 *db)
{
  if (!has_row(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'") ||
      pt_schema_has_parents(db))
    return true;
  /* The view made again with them at once: an older recorder, which
   * takes this file's schema for its own, would not make it. */
  return sqlite3_exec(db, "ALTER TABLE sessions ADD COLUMN parent_pid INTEGER;"
                          "ALTER TABLE sessions ADD COLUMN parent_session INTEGER;"
                          "DROP VIEW IF EXISTS pi_sessions;", NULL, NULL, NULL) == SQLITE_OK &&
         sqlite3_exec(db, shim_schema_sql, NULL, NULL, NULL) == SQLITE_OK;
}

bool pt_schema_create(sqlite3 *db, char *err, size_t errn)
{
  char stamp[17];
  schema_stamp(stamp);
  sqlite3_stmt *q = NULL;
  bool current = false;
  if (sqlite3_prepare_v2(db, "SELECT value = ? FROM pitrace_meta WHERE key = 'schema_sql'", -1,
                         &q, NULL) == SQLITE_OK) {
    sqlite3_bind_text(q, 1, stamp, -1, SQLITE_STATIC);
    current = sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 1;
  }
  sqlite3_finalize(q);
  if (current) /* the template, or a file this schema was made in */
    return true;
  if (pt_schema_foreign(db, err, errn))
    return false;
  q = NULL;
  bool ok = pt_schema_add_parents(db) &&
            sqlite3_exec(db, shim_schema_sql, NULL, NULL, NULL) == SQLITE_OK &&
            sqlite3_prepare_v2(db, "SELECT count(*) FROM pi_api", -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW;
  bool described = ok && sqlite3_column_int(q, 0) > 0;
  sqlite3_finalize(q);
  ok = ok && (described || write_description(db));
  q = NULL;
  ok = ok &&
       sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO pitrace_meta VALUES ('schema_sql', ?)",
                          -1, &q, NULL) == SQLITE_OK &&
       sqlite3_bind_text(q, 1, stamp, -1, SQLITE_STATIC) == SQLITE_OK &&
       sqlite3_step(q) == SQLITE_DONE;
  sqlite3_finalize(q);
  if (!ok)
    snprintf(err, errn, "creating the schema: %s", sqlite3_errmsg(db));
  return ok;
}

bool pt_schema_foreign(sqlite3 *db, char *err, size_t errn)
{
  sqlite3_stmt *q = NULL;
  bool foreign = false;
  if (sqlite3_prepare_v2(db, "SELECT (SELECT count(*) FROM sqlite_master WHERE name = "
                             "'pitrace_meta'), (SELECT name FROM sqlite_master WHERE type = "
                             "'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' LIMIT 1)",
                         -1, &q, NULL) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int(q, 0) == 0 &&
      sqlite3_column_type(q, 1) != SQLITE_NULL) {
    foreign = true;
    snprintf(err, errn, "another program's SQLite database: it holds table '%s' and no pitrace "
             "session; record to another file", (const char *)sqlite3_column_text(q, 1));
  }
  sqlite3_finalize(q);
  return foreign;
}

int pt_schema_stored_version(sqlite3 *db)
{
  sqlite3_stmt *v = NULL;
  int version = 0;
  if (sqlite3_prepare_v2(db, "SELECT value FROM pitrace_meta WHERE key='schema_version'", -1,
                         &v, NULL) == SQLITE_OK && sqlite3_step(v) == SQLITE_ROW)
    version = sqlite3_column_int(v, 0);
  sqlite3_finalize(v);
  return version;
}

const char *pt_sqlite_write_error(sqlite3 *db, char *why, size_t n)
{
  int rc = sqlite3_errcode(db) & 0xff, err = sqlite3_system_errno(db); /* primary code */
  struct rlimit lim;
  if (rc != SQLITE_IOERR && rc != SQLITE_FULL)
    snprintf(why, n, "%s", sqlite3_errmsg(db));
  else if (err)
    snprintf(why, n, "%s: %s", sqlite3_errmsg(db), strerror(err));
  else if (getrlimit(RLIMIT_FSIZE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    snprintf(why, n, "%s; the file size limit (ulimit -f) is %llu bytes", sqlite3_errmsg(db),
             (unsigned long long)lim.rlim_cur);
  else
    snprintf(why, n, "%s", sqlite3_errmsg(db));
  return why;
}
