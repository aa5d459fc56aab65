/*
 * schema.h: the session database's schema (schema.c, docs/schema.md): its
 * version and the SQL that creates its tables and views, for whatever
 * writes a session database (the recorder's writer, pitrace extract).
 */
#ifndef PT_SCHEMA_H
#define PT_SCHEMA_H

/* The schema version this build writes and reads. */
#define PT_SCHEMA_VERSION 1

/* Creates the tables and views (IF NOT EXISTS: several sessions share one
 * file). */
extern const char shim_schema_sql[];

#endif /* PT_SCHEMA_H */
