/*
 * ex_write.c: the repro of `pitrace extract` as a new session database,
 * written through the session library (session_out.h, which alone knows
 * the storage format): one session, one thread, the calls renumbered from
 * 1 with their payloads (the recorded ones', or those of the writes and
 * reads made up around the launch) and the handles they create. Written
 * beside the target and renamed over it once complete.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ex.h"
#include "pitrace_cli.h"
#include "session_out.h"

typedef struct wr {
  ex *x;
  const char *path; /* -o: named in what went wrong (the file written is beside it) */
  int64_t *newseq;  /* orig call index -> seq in the repro */
} wr;

/* The repro could not be written (a full disk, a file size limit: `why`
 * says which): named by -o, as the file written beside it goes. */
static bool write_failed(wr *w, const char *why)
{
  return ex_fail(w->x, "cannot write the repro %s: %s; whatever it held is left as it was",
                 w->path, why);
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_string(pi_sbuf *b, const char *s)
{
  pi_sbuf_puts(b, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\')
      pi_sbuf_printf(b, "\\%c", c);
    else if (c < 0x20)
      pi_sbuf_printf(b, "\\u%04x", c);
    else
      pi_sbuf_put(b, s, 1);
  }
  pi_sbuf_puts(b, "\"");
}

void ex_json(pi_sbuf *b, const pt_json *j)
{
  if (!j) {
    pi_sbuf_puts(b, "null");
    return;
  }
  switch (j->type) {
  case PJ_NULL: pi_sbuf_puts(b, "null"); return;
  case PJ_BOOL: pi_sbuf_puts(b, j->u.i ? "true" : "false"); return;
  case PJ_INT: pi_sbuf_printf(b, "%lld", (long long)j->u.i); return;
  case PJ_REAL: pi_sbuf_printf(b, "%.17g", j->u.d); return;
  case PJ_STRING: json_string(b, j->u.s); return;
  default:
    pi_sbuf_puts(b, j->type == PJ_ARRAY ? "[" : "{");
    for (uint32_t k = 0; k < j->n; k++) { /* an object's items: key, value, ... */
      pi_sbuf_puts(b, k == 0 ? "" : (j->type == PJ_OBJECT && k % 2) ? ":" : ",");
      ex_json(b, j->u.items[k]);
    }
    pi_sbuf_puts(b, j->type == PJ_ARRAY ? "]" : "}");
  }
}

/* ---- The repro ------------------------------------------------------------------------ */

/* Adds call k of the repro, numbered seq: a recorded one with its payload
 * rows, or a made-up one with its payload. */
static bool add_call(wr *w, pt_out *o, size_t k, int64_t seq)
{
  const ex_call *c = &w->x->out[k];
  const pt_call *oc = c->orig, *l = &w->x->s->calls.v[w->x->launch];
  pi_sbuf args, data;
  pi_sbuf_init(&args, NULL, 0);
  pi_sbuf_init(&data, NULL, 0);
  if (c->args)
    pi_sbuf_puts(&args, c->args);
  else
    ex_json(&args, oc->args);
  if (oc && oc->data)
    ex_json(&data, oc->data);
  pt_chunk_call cc = {.seq = seq, .plugin = (oc ? oc : l)->plugin, .api = c->api,
                      .result = oc ? oc->result : 0, .start_ns = oc ? oc->start_ns : c->start_ns,
                      .dur_ns = oc ? oc->dur_ns : 0, .stack = -1, .args = args.p,
                      .args_len = args.len, .data = data.p, .data_len = data.len};
  pt_out_payload made = {c->data_pos, c->data_role, c->data, c->data_size};
  bool ok = pt_out_call(o, &cc, oc ? oc->seq : -1, &made);
  pi_sbuf_free(&args);
  pi_sbuf_free(&data);
  return ok || write_failed(w, pt_out_error(o));
}

static bool write_calls(wr *w, pt_out *o)
{
  bool ok = true;
  for (size_t k = 0; ok && k < w->x->nout; k++) {
    int64_t seq = (int64_t)k + 1;
    if (w->x->out[k].orig)
      w->newseq[w->x->out[k].orig - w->x->s->calls.v] = seq;
    ok = add_call(w, o, k, seq);
  }
  return ok;
}

/* The handles the repro's calls create, created by them. */
static bool write_handles(wr *w, pt_out *o)
{
  const ex *x = w->x;
  for (size_t id = 1; id < x->ncreator; id++) {
    size_t c = x->creator[id];
    if (c && w->newseq[c - 1] && !pt_out_handle(o, id, w->newseq[c - 1]))
      return write_failed(w, pt_out_error(o));
  }
  return true;
}

/* The repro into `tmp` (an empty file). A recording whose payload's blob
 * is gone gives no repro that cannot replay, but the reason. */
static bool write_all(wr *w, const char *tmp, int kernel)
{
  const ex *x = w->x;
  const pt_call *l = &x->s->calls.v[x->launch];
  char label[4400], err[1200];
  snprintf(label, sizeof label, "extract: kernel launch %d (seq %lld) of %.4000s session %lld",
           kernel, (long long)l->seq, x->s->db.path, (long long)x->s->id);
  pt_out *o = pt_out_create(tmp, x->s->db.path, x->s->id, label, (int64_t)x->nout, l->thread,
                            err, sizeof err);
  if (!o)
    return write_failed(w, err);
  bool ok = write_calls(w, o) && write_handles(w, o);
  if (ok) {
    int64_t seq = 0;
    unsigned pos = 0;
    char role[16];
    pt_out_status st = pt_out_finish(o, &seq, &pos, role);
    const ex_call *c = seq >= 1 && (size_t)seq <= w->x->nout ? &w->x->out[seq - 1] : NULL;
    if (st == PT_OUT_ERROR)
      ok = write_failed(w, pt_out_error(o));
    else if (st == PT_OUT_BLOB_GONE && c && c->orig)
      ok = (rp_payload_problem(w->x->s, c->orig, pos, role, RP_DATA_MISSING_BLOB, w->x->err,
                               sizeof w->x->err), false);
    else if (st == PT_OUT_BLOB_GONE)
      ok = ex_fail(w->x, "%s is damaged: a payload's blob is gone", w->x->s->db.path);
  }
  pt_out_free(o);
  return ok;
}

/* The repro into dest (path, or the file a link at path names): written
 * beside it and renamed over it once complete, so that a failed extract
 * leaves whatever it held. */
static bool write_beside(ex *x, const char *path, const char *dest, int kernel)
{
  size_t n = strlen(dest) + sizeof ".tmp-XXXXXX", len, most;
  char *tmp = malloc(n);
  if (!tmp)
    return ex_fail(x, "out of memory");
  snprintf(tmp, n, "%s.tmp-XXXXXX", dest);
  if (!pt_path_openable(tmp, &len, &most)) {
    free(tmp);
    return ex_fail(x, "-o %s: the repro is written beside it by a path %zu characters long, "
                   "and SQLite opens files by paths of up to %zu; name a shorter one", path,
                   len, most);
  }
  wr w = {.x = x, .path = path, .newseq = calloc(x->s->calls.n + 1, sizeof *w.newseq)};
  int fd = w.newseq ? pt_tmp_make(tmp) : -1; /* removed by a signal until it is in place */
  if (fd < 0) {
    bool nomem = !w.newseq;
    free(tmp);
    free(w.newseq);
    return nomem ? ex_fail(x, "out of memory")
                 : ex_fail(x, "cannot write beside %s: %s", path, strerror(errno));
  }
  close(fd);
  bool ok = write_all(&w, tmp, kernel);
  if (ok && rename(tmp, dest) != 0)
    ok = ex_fail(x, "cannot write %s: %s", path, strerror(errno));
  if (!ok)
    unlink(tmp);
  pt_tmp_unguard();
  free(tmp);
  free(w.newseq);
  return ok;
}

bool ex_write(ex *x, const char *path, int kernel)
{
  /* The same file under another name (./s.db, a link) is the session too. */
  struct stat in, out;
  if (stat(x->s->db.path, &in) == 0 && stat(path, &out) == 0 && in.st_dev == out.st_dev &&
      in.st_ino == out.st_ino)
    return ex_fail(x, "-o %s is the session being extracted from: name another file", path);
  /* One of pitrace's descriptors leads to a file, but the repro renamed
   * over its name replaced the link (as root, /dev/stdout itself). */
  if (pt_own_fd(path) >= 0)
    return ex_fail(x, "-o %s is one of pitrace's descriptors, not a file: name a file for the "
                   "repro", path);
  /* The repro is renamed over PATH: what is there must be a file (a
   * device such as /dev/null was replaced by a regular file before). */
  if (stat(path, &out) == 0 && !S_ISREG(out.st_mode))
    return ex_fail(x, "-o %s is %s, not a file: name a file for the repro", path,
                   S_ISDIR(out.st_mode) ? "a directory" : "a device, pipe or socket");
  /* A link to a file: that file is written and the link stays, as report
   * and export write one (the repro replaced the link). */
  struct stat lst;
  char *target = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode) && stat(path, &out) == 0
                     ? realpath(path, NULL)
                     : NULL;
  bool ok = write_beside(x, path, target ? target : path, kernel);
  free(target);
  return ok;
}
