/*
 * viewer_diff.c: `pitrace diff`: compares two sessions call by call.
 *
 * The application's calls are aligned on their API and, for info queries,
 * the query (per thread when both sessions have as many threads, else
 * globally; viewer_align.c). Handles compare by correspondence: the
 * objects that aligned calls created (out-handles, the arrays of
 * piPlatformsGet and piDevicesGet) are paired, A's with B's, and a handle
 * first seen as an argument pairs with the one the other side passed
 * there; two handles are equal when they are such a pair, and a handle
 * paired with another object is a difference that names both objects by
 * the calls that made them. Raw addresses, native handles, the
 * application's callbacks and their user data, and timings (durations,
 * profiling info, device timers) never count. Reported: calls
 * only in one session, calls found out of order, argument, result and
 * info-query differences, data differences (first differing byte), and
 * differences in the runtime's notes (link decisions, spec constants).
 * Calls that a recorded `pitrace replay` made itself (marked by its
 * `replay` notes: its clean-up of what the application never released,
 * its data checks) and teardowns present in one session only are listed
 * but are no differences. --ignore and --only filter by API and kind.
 *
 * Neither session is held: a first pass over each (vw_iter) keeps a few
 * bytes per call (its key, thread, seq) and what the pairing of handles
 * needs (the handles each call made, which call made each handle, the
 * devices' names); the alignment gives rows of call indexes; a second
 * pass reads the calls of each row by seq (pt_seek, or the loaded calls)
 * and compares them.
 */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pirt.h"
#include "pitrace_viewer.h"
#include "viewer_common.h"

static const char usage[] =
    "usage: pitrace diff A.db B.db [--session-a N] [--session-b N] [--json] [--no-info]\n"
    "                  [--tolerance X [--f64]] [--ignore PATTERNS] [--only PATTERNS]\n"
    "       pitrace diff DIR-A DIR-B [OPTIONS]   (record directories: sessions paired by\n"
    "                                            command, then by program)\n"
    "\n"
    "Compares two sessions call by call: calls present in only one, argument,\n"
    "result and info-query differences, read-back and other data differences (the\n"
    "first differing byte), and differences in link decisions and spec constants.\n"
    "Handles compare by what they correspond to (the objects aligned calls made),\n"
    "not by id; addresses, callbacks and timings never count. Calls a recorded\n"
    "replay made itself (its clean-up, its data checks) and a teardown in one\n"
    "session only are listed (=) but are no differences. When both sessions have\n"
    "device times (pitrace record --profile), a table after the summary compares\n"
    "them per kernel (launches timed, device total and mean in A and B, B/A of the\n"
    "means): shown, never counted. Exit status: 0 same, 1 different, 2 bad input.\n"
    "\n"
    "  --session-a N, --session-b N   the sessions (default: each file's last)\n"
    "  --json        the comparison as JSON\n"
    "  --no-info     leave out info queries (*GetInfo results and the calls)\n"
    "  --tolerance X compare data read back from the devices as 32-bit floats (64-bit\n"
    "                with --f64): equal when |a - b| <= X * max(1, |a|, |b|), as replay\n"
    "                does (other data, the application's own, stays bitwise)\n"
    "  --ignore PATTERNS  leave out the differences that match (not shown, not counted)\n"
    "  --only PATTERNS    keep only the differences that match\n"
    "\n"
    "PATTERNS: comma-separated; each is a KIND, an API glob ('piEnqueue*',\n"
    "'*GetInfo') or API:KIND. Both options may be repeated. KIND is one of\n"
    "  only-in-a, only-in-b  a call in one session only\n"
    "  order      a call found in both, but not where the other calls align it\n"
    "  args       an argument (handles, values, out-values)\n"
    "  result     the result\n"
    "  info       an info query's answer or its size\n"
    "  data       buffer contents, read-backs, sources, binaries\n"
    "  note       the runtime's notes (link decisions, cache, spec constants)\n"
    "  replay     a call the recorded replay made itself (never counted)\n"
    "  teardown   piTearDown in one session only (never counted)\n";

typedef struct diff_row {
  int32_t ia, ib; /* call indexes, -1 for a gap */
  bool moved;     /* a pair found apart from where the alignment put them */
  bool kept;      /* moved, but only among other threads' calls (order_kept) */
  bool gone;      /* a gap row whose call moved into another row */
} diff_row;

/* What the first pass keeps of each call: its alignment key, and its
 * thread with OWN set for a call a replay made itself, RUNTIME for one
 * the runtime makes on its own (discovery, its error queries, the
 * teardown), CALLBACK for the first call of an event callback on its
 * thread; TID() is the thread. */
#define OWN 0x80000000u
#define RUNTIME 0x40000000u
#define CALLBACK 0x20000000u
#define TID(t) ((t) & ~(OWN | RUNTIME | CALLBACK))
typedef struct call_key {
  uint32_t key, thread;
} call_key;

/* A handle a call made through a parameter (one per handle, by call). */
typedef struct made_ref {
  uint32_t call;
  uint16_t api;
  uint8_t param, kind;
  int64_t id;
} made_ref;

/* Where the calls' seqs stop counting up by one: call `index` has `seq`. */
typedef struct seq_jump {
  size_t index;
  int64_t seq;
} seq_jump;

/* One session as the diff sees it between its two passes. */
typedef struct side {
  vw_session *s;
  char letter;    /* 'A' or 'B' */
  size_t n;       /* calls */
  call_key *ck;   /* by call index (seq order) */
  size_t capck;
  seq_jump *jumps;
  size_t njumps, capjumps;
  made_ref *made; /* by call */
  size_t nmade, capmade;
  vw_map maker;   /* handle id -> MAKER(call index, api, made) of the call that
                     made it (or first named it) */
  vw_map name;    /* device id -> index in names */
  char **names;   /* the devices' recorded names (copies) */
  size_t nnames, capnames;
  pt_seek *seek;  /* the second pass's reads, when the calls are not loaded */
} side;

/* A maker map value: the call, its API, whether it made the handle (else
 * it only named it first). */
#define MAKER(call, api, made) ((int64_t)(call) << 17 | (int64_t)(api) << 1 | (made))
#define MAKER_CALL(v) ((size_t)((v) >> 17))
#define MAKER_API(v) ((uint32_t)((v) >> 1 & 0xffff))

typedef struct dctx {
  vw_session *a, *b;
  side sa, sb;
  const vw_diff_opts *o; /* no_info, tolerance (read-back data as floats
                            within it; < 0: bitwise), f64, the filter */
  vw_diff *d;
  diff_row *rows;
  size_t nrows, caprows;
  vw_map ab, ba;          /* A handle id <-> B handle id: corresponding objects */
  vw_map explained;       /* A id << 32 | B id -> A's seq where explain_objects
                             said why they differ: later, a reference to it */
  bool bind;              /* comparing may pair handles first seen there */
  bool failed;            /* a call could not be read: d->why says why */
} dctx;

/* ---- Items ------------------------------------------------------------------------ */

const char *vw_diff_kind_name(vw_diff_kind k)
{
  static const char *const names[VD_KINDS] = {"only_a", "only_b", "argument", "result", "info",
                                              "data",   "note",   "order",    "replay", "teardown"};
  return k < VD_KINDS ? names[k] : "?";
}

/* The --ignore/--only word of a kind. */
static const char *kind_word(vw_diff_kind k)
{
  static const char *const words[VD_KINDS] = {"only-in-a", "only-in-b", "args",   "result",
                                              "info",      "data",      "note",   "order",
                                              "replay",    "teardown"};
  return k < VD_KINDS ? words[k] : "?";
}

bool vw_diff_counts(vw_diff_kind k) { return k != VD_REPLAY && k != VD_TEARDOWN; }

/* A copy of s among d's texts; NULL when memory ran out. */
static const char *keep_text(vw_diff *d, const char *s)
{
  return *s ? pt_json_arena_copy(&d->texts, s, strlen(s)) : "";
}

/* `what` among d's texts, shared with an item before it that said the
 * same (most say one of a few things: "call", a parameter's name). */
static const char *keep_what(vw_diff *d, const char *what)
{
  for (unsigned i = 0; i < 4; i++)
    if (d->whats[i] && strcmp(d->whats[i], what) == 0)
      return d->whats[i];
  const char *k = keep_text(d, what);
  if (k)
    d->whats[d->next_what++ % 4] = k;
  return k;
}

static void add(vw_diff *d, vw_diff_kind kind, const pt_call *ca, const pt_call *cb,
                const char *what, const char *a, const char *b)
{
  vw_diff_item *v = pt_grow(d->v, &d->cap, d->n, sizeof *v);
  if (!v)
    return;
  d->v = v;
  const char *kw = keep_what(d, what), *ka = keep_text(d, a ? a : ""),
             *kb = keep_text(d, b ? b : "");
  if (!kw || !ka || !kb)
    return;
  d->v[d->n++] = (vw_diff_item){kind, ca ? ca->seq : -1, cb ? cb->seq : -1,
                                ca ? ca->api : cb->api, kw, ka, kb};
  d->count[kind]++;
}

void vw_diff_free(vw_diff *d)
{
  pt_json_arena_free(&d->texts);
  free(d->v);
  memset(d, 0, sizeof *d);
}

size_t vw_diff_total(const vw_diff *d)
{
  size_t n = 0;
  for (int k = 0; k < VD_KINDS; k++)
    n += vw_diff_counts((vw_diff_kind)k) ? d->count[k] : 0;
  return n;
}

/* ---- Filters ------------------------------------------------------------------------ */

struct vw_diff_term {
  char *glob; /* API name pattern, or NULL: any */
  int kind;   /* vw_diff_kind, or -1: any */
};

static int parse_kind(const char *s, size_t n)
{
  for (int k = 0; k < VD_KINDS; k++)
    if ((strlen(kind_word((vw_diff_kind)k)) == n && strncmp(kind_word((vw_diff_kind)k), s, n) == 0) ||
        (strlen(vw_diff_kind_name((vw_diff_kind)k)) == n &&
         strncmp(vw_diff_kind_name((vw_diff_kind)k), s, n) == 0))
      return k;
  return -1;
}

bool vw_diff_terms_parse(const char *option, const char *text, vw_diff_term **terms, size_t *n,
                         char *err, size_t errn)
{
  const char *p = text;
  do {
    const char *end = strchr(p, ','), *colon;
    size_t len = end ? (size_t)(end - p) : strlen(p);
    vw_diff_term t = {NULL, -1};
    colon = memchr(p, ':', len);
    size_t glen = colon ? (size_t)(colon - p) : len;
    if (colon) {
      t.kind = parse_kind(colon + 1, len - glen - 1);
      if (t.kind < 0) {
        snprintf(err, errn, "%s '%.*s': unknown kind '%.*s' (pitrace diff --help lists them)",
                 option, (int)len, p, (int)(len - glen - 1), colon + 1);
        return false;
      }
    } else if ((t.kind = parse_kind(p, len)) >= 0) {
      glen = 0;
    } else if (len == 0 || (strncmp(p, "pi", 2) != 0 && !memchr(p, '*', len) &&
                           !memchr(p, '?', len) && !memchr(p, '[', len))) {
      snprintf(err, errn, "%s '%.*s': neither a kind (only-in-a, only-in-b, order, args, "
               "result, info, data, note, replay, teardown) nor an API pattern (pi..., *...)",
               option, (int)len, p);
      return false;
    }
    if (glen && !(t.glob = strndup(p, glen)))
      return false;
    if (t.glob && !pi_api_glob(t.glob, NULL)) { /* a misspelt name left out nothing: "same" */
      snprintf(err, errn, "%s '%.*s': '%s' matches no PI function", option, (int)len, p, t.glob);
      free(t.glob);
      return false;
    }
    vw_diff_term *v = realloc(*terms, (*n + 1) * sizeof *v);
    if (!v) {
      free(t.glob);
      return false;
    }
    *terms = v;
    (*terms)[(*n)++] = t;
    p = end ? end + 1 : NULL;
  } while (p);
  return true;
}

void vw_diff_terms_free(vw_diff_term *terms, size_t n)
{
  for (size_t i = 0; i < n; i++)
    free(terms[i].glob);
  free(terms);
}

static bool term_match(const vw_diff_term *t, size_t n, vw_diff_kind kind, uint32_t api)
{
  char name[32];
  for (size_t i = 0; i < n; i++)
    if ((t[i].kind < 0 || t[i].kind == (int)kind) &&
        (!t[i].glob || fnmatch(t[i].glob, vw_api_name(api, name), 0) == 0))
      return true;
  return false;
}

/* Whether term t of --only keeps anything that --ignore's terms do not
 * leave out: some kind and some API it matches that no ignore term does. */
static bool only_term_keeps(const vw_diff_term *t, const vw_diff_term *ignore, size_t nignore)
{
  bool api_ok[PI_API_COUNT];
  if (t->glob)
    pi_api_glob(t->glob, api_ok);
  for (int k = 0; k < VD_KINDS; k++)
    for (uint32_t a = 0; (t->kind < 0 || t->kind == k) && a < PI_API_COUNT; a++)
      if ((!t->glob || api_ok[a]) && !term_match(ignore, nignore, (vw_diff_kind)k, a))
        return true;
  return false;
}

/* Whether vw_diff_filter keeps an item of `kind` on a call to `api`. */
static bool filter_keeps(const vw_diff_opts *o, vw_diff_kind kind, uint32_t api)
{
  return (!o->nonly || term_match(o->only, o->nonly, kind, api)) &&
         !term_match(o->ignore, o->nignore, kind, api);
}

void vw_diff_filter(vw_diff *d, const vw_diff_opts *o)
{
  size_t w = 0;
  memset(d->count, 0, sizeof d->count);
  for (size_t i = 0; i < d->n; i++) {
    vw_diff_item *it = &d->v[i];
    if (!filter_keeps(o, it->kind, it->api)) {
      d->ignored++; /* its texts stay among the diff's until it is freed */
      continue;
    }
    d->count[it->kind]++;
    d->v[w++] = *it;
  }
  d->n = w;
}

/* ---- Alignment -------------------------------------------------------------------- */

/* The info parameter of an API, or -1. */
static int info_param(const pi_api_desc *api)
{
  for (unsigned i = 0; i < api->nparams; i++)
    if (api->params[i].kind == PI_PK_INFO)
      return (int)i;
  return -1;
}

/* What aligns: the API, and an info query's query (two runs that ask
 * different things of a device differ in calls, not in arguments). */
static uint32_t align_key(const pt_call *c)
{
  uint32_t k = c->api * 0x9e3779b1u;
  const pi_api_desc *api = pi_api_get(c->api);
  int q = api ? info_param(api) : -1;
  if (q >= 0 && api->params[q].query >= 0) {
    uint64_t v = (uint64_t)vw_arg_int(c, (unsigned)api->params[q].query);
    k ^= (uint32_t)(v * 0x85ebca77u) ^ (uint32_t)(v >> 32) ^ 0x5bd1e995u;
  }
  return k;
}

/* Room for `more` rows: grown to what is needed, not doubled (a row per
 * call of two large sessions). */
static bool reserve_rows(dctx *x, size_t more)
{
  if (x->nrows + more <= x->caprows)
    return true;
  diff_row *v = realloc(x->rows, (x->nrows + more) * sizeof *v);
  if (!v)
    return false;
  x->rows = v;
  x->caprows = x->nrows + more;
  return true;
}

static void push_row(dctx *x, int64_t ia, int64_t ib)
{
  x->rows[x->nrows++] = (diff_row){(int32_t)ia, (int32_t)ib, false, false, false};
}

/* Rows for the calls at positions [*pa, upto) of ia (the replay's own,
 * skipped by the alignment), then *pa = upto. */
static void rows_before(dctx *x, const uint32_t *ia, size_t *pa, size_t upto, bool in_a)
{
  for (; *pa < upto; (*pa)++)
    push_row(x, in_a ? (int64_t)ia[*pa] : -1, in_a ? -1 : (int64_t)ia[*pa]);
}

static bool is_own(const side *sd, size_t i) { return sd->ck[i].thread & OWN; }

/* The keys of the calls ia[0..n) that a replay did not make itself, into
 * k (their positions in ia into f, NULL when all are kept); *nk set. */
static bool keys_of(const side *sd, const uint32_t *ia, size_t n, uint32_t **k, uint32_t **f,
                    size_t *nk)
{
  size_t own = 0;
  for (size_t i = 0; i < n; i++)
    own += is_own(sd, ia[i]);
  *k = malloc((n ? n : 1) * sizeof **k);
  *f = own ? malloc((n ? n : 1) * sizeof **f) : NULL;
  if (!*k || (own && !*f))
    return false;
  *nk = 0;
  for (size_t i = 0; i < n; i++)
    if (!is_own(sd, ia[i])) {
      if (*f)
        (*f)[*nk] = (uint32_t)i;
      (*k)[(*nk)++] = sd->ck[ia[i]].key;
    }
  return true;
}

/* Position i of keys_of's positions (i itself when all were kept). */
static uint32_t pos_at(const uint32_t *f, size_t i) { return f ? f[i] : (uint32_t)i; }

/* Aligns the calls ia[0..na) of A with ib[0..nb) of B into rows. Calls a
 * replay made itself take no part: they get rows of their own where they
 * are. */
static bool align_part(dctx *x, const uint32_t *ia, size_t na, const uint32_t *ib, size_t nb)
{
  uint32_t *ka = NULL, *kb = NULL, *fa = NULL, *fb = NULL;
  size_t nfa = 0, nfb = 0;
  int32_t *m = NULL;
  bool ok = keys_of(&x->sa, ia, na, &ka, &fa, &nfa) && keys_of(&x->sb, ib, nb, &kb, &fb, &nfb) &&
            (m = malloc((nfa ? nfa : 1) * sizeof *m)) && vw_align(ka, nfa, kb, nfb, m);
  free(ka);
  free(kb);
  size_t matched = 0;
  for (size_t i = 0; ok && i < nfa; i++)
    matched += m[i] >= 0;
  ok = ok && reserve_rows(x, na + nb - matched);
  size_t j = 0, pa = 0, pb = 0;
  for (size_t i = 0; ok && i < nfa; i++) {
    for (; m[i] >= 0 && j < (size_t)m[i]; j++) { /* B's calls before the match */
      rows_before(x, ib, &pb, pos_at(fb, j), false);
      push_row(x, -1, (int64_t)ib[pb++]);
    }
    rows_before(x, ia, &pa, pos_at(fa, i), true);
    if (m[i] >= 0) {
      rows_before(x, ib, &pb, pos_at(fb, j), false);
      push_row(x, (int64_t)ia[pa++], (int64_t)ib[pb++]);
      j++;
    } else {
      push_row(x, (int64_t)ia[pa++], -1);
    }
  }
  for (; ok && j < nfb; j++) {
    rows_before(x, ib, &pb, pos_at(fb, j), false);
    push_row(x, -1, (int64_t)ib[pb++]);
  }
  if (ok) {
    rows_before(x, ia, &pa, na, true);
    rows_before(x, ib, &pb, nb, false);
  }
  free(fa);
  free(fb);
  free(m);
  return ok;
}

/* The session's call indexes grouped by thread (each in sequence order):
 * order[start[t]..start[t+1]) for the t-th thread; first, in thread order,
 * the *napp threads with calls of the application's, then those with only
 * calls a recorded replay made itself (its clean-up and data checks, on a
 * thread of its own: no thread of the recording's). With `callbacks`,
 * the threads whose first call is in an event callback (the
 * implementation's, which runs callbacks on whichever of them is free)
 * count as one, the first of them: which one ran a callback differs from
 * run to run (OpenCV's kernel releases in its callbacks swapped threads,
 * and kernels, between two runs of one program). */
/* The thread of call i as by_thread counts it: its number, or with `rank`
 * (the nrank numbers present, sorted), its place among them. */
static uint32_t thread_at(const side *sd, size_t i, const uint32_t *rank, size_t nrank)
{
  uint32_t t = TID(sd->ck[i].thread);
  if (!rank)
    return t;
  size_t lo = 0, hi = nrank;
  while (hi - lo > 1)
    if (rank[lo + (hi - lo) / 2] <= t)
      lo += (hi - lo) / 2;
    else
      hi = lo + (hi - lo) / 2;
  return (uint32_t)lo;
}

static int u32_cmp(const void *l, const void *r);

static uint32_t *by_thread(const side *sd, bool callbacks_as_one, size_t **start, size_t *nt,
                           size_t *napp)
{
  uint32_t max = 0;
  for (size_t i = 0; i < sd->n; i++)
    max = TID(sd->ck[i].thread) > max ? TID(sd->ck[i].thread) : max;
  /* Thread numbers index the arrays below. A recording numbers its threads
   * from 1 (a forked child's from its parent's), never far past its calls;
   * a damaged session's (thread 4294967295) took gigabytes and seconds.
   * Far past them, the threads count by their place among those present. */
  uint32_t *rank = NULL;
  size_t nrank = 0;
  if (max > sd->n + 64) {
    rank = malloc(sd->n * sizeof *rank);
    if (!rank)
      return NULL;
    for (size_t i = 0; i < sd->n; i++)
      rank[i] = TID(sd->ck[i].thread);
    qsort(rank, sd->n, sizeof *rank, u32_cmp);
    for (size_t i = 0; i < sd->n; i++)
      if (!nrank || rank[nrank - 1] != rank[i])
        rank[nrank++] = rank[i];
    max = (uint32_t)nrank - 1;
  }
  size_t *next = calloc((size_t)max + 2, sizeof *next);
  bool *app = calloc((size_t)max + 2, sizeof *app);
  uint32_t *order = malloc((sd->n ? sd->n : 1) * sizeof *order);
  uint32_t *into = malloc(((size_t)max + 2) * sizeof *into); /* the thread each counts as */
  *start = calloc((size_t)max + 2, sizeof **start);
  if (!next || !app || !order || !into || !*start) {
    free(rank);
    free(next);
    free(app);
    free(order);
    free(into);
    free(*start);
    return NULL;
  }
  /* A first thread with only the runtime's own calls is counted as the
   * next thread with the application's: a recorded replay's main thread
   * discovers the devices, and its worker for the recording's first
   * thread (which discovered them there) makes the rest. Counted apart,
   * the sessions had different numbers of threads and were aligned
   * globally, where two threads' calls that swapped places paired the
   * wrong calls (OpenCV from Python, on a loaded machine). */
  bool *runtime_only = calloc((size_t)max + 2, sizeof *runtime_only);
  if (!runtime_only) {
    free(rank);
    free(next);
    free(app);
    free(order);
    free(into);
    free(*start);
    return NULL;
  }
  for (uint32_t t = 0; t <= max; t++)
    runtime_only[t] = true, into[t] = UINT32_MAX; /* not seen yet */
  uint32_t callbacks = UINT32_MAX; /* the first thread that began in a callback */
  for (size_t i = 0; i < sd->n; i++) {
    uint32_t t = thread_at(sd, i, rank, nrank);
    app[t] |= !(sd->ck[i].thread & OWN);
    runtime_only[t] &= (sd->ck[i].thread & (OWN | RUNTIME)) != 0;
    if (into[t] == UINT32_MAX && (sd->ck[i].thread & CALLBACK) && callbacks == UINT32_MAX)
      callbacks = t;
    if (into[t] == UINT32_MAX)
      into[t] = callbacks_as_one && (sd->ck[i].thread & CALLBACK) ? callbacks : t;
  }
  for (uint32_t t = 0; t <= max; t++)
    if (into[t] != UINT32_MAX && into[t] != t) {
      app[into[t]] |= app[t];
      runtime_only[into[t]] &= runtime_only[t];
      app[t] = false;
    }
  uint32_t from = UINT32_MAX, to = UINT32_MAX;
  for (uint32_t t = 0; t <= max && to == UINT32_MAX; t++)
    if (app[t] && from == UINT32_MAX)
      from = runtime_only[t] ? t : max + 1; /* the first: folded only when runtime's only */
    else if (app[t] && from <= max)
      to = t;
  free(runtime_only);
  if (to != UINT32_MAX)
    into[from] = to, app[from] = false;
  for (size_t i = 0; i < sd->n; i++)
    next[into[thread_at(sd, i, rank, nrank)]]++;
  size_t pos = 0;
  *nt = *napp = 0;
  for (int own_only = 0; own_only < 2; own_only++)
    for (uint32_t t = 0; t <= max; t++) { /* threads that made calls, in order */
      if (!next[t] || app[t] == own_only)
        continue;
      (*start)[(*nt)++] = pos;
      *napp += !own_only;
      size_t count = next[t];
      next[t] = pos; /* where the thread's next call goes */
      pos += count;
    }
  (*start)[*nt] = pos;
  for (size_t i = 0; i < sd->n; i++)
    order[next[into[thread_at(sd, i, rank, nrank)]]++] = (uint32_t)i;
  free(rank);
  free(next);
  free(app);
  free(into);
  return order;
}

/* Whether any call of the session began an event callback. */
static bool ran_callbacks(const side *sd)
{
  for (size_t i = 0; i < sd->n; i++)
    if (sd->ck[i].thread & CALLBACK)
      return true;
  return false;
}

static int u32_cmp(const void *l, const void *r)
{
  uint32_t a = *(const uint32_t *)l, b = *(const uint32_t *)r;
  return a < b ? -1 : a > b;
}

/* The keys of the application's calls ia[0..n) of one thread,
 * sorted (a NULL result: out of memory). */
static uint32_t *sorted_keys(const side *sd, const uint32_t *ia, size_t n, size_t *nk)
{
  uint32_t *k, *f;
  if (!keys_of(sd, ia, n, &k, &f, nk)) {
    free(k);
    free(f);
    return NULL;
  }
  free(f);
  qsort(k, *nk, sizeof *k, u32_cmp);
  return k;
}

/* How many calls two threads have in common, by what aligns (two sorted
 * key lists). */
static size_t overlap(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
  size_t i = 0, j = 0, n = 0;
  while (i < na && j < nb)
    if (a[i] == b[j])
      n++, i++, j++;
    else if (a[i] < b[j])
      i++;
    else
      j++;
  return n;
}

typedef struct thread_pair {
  size_t common;
  uint32_t a, b;
} thread_pair;

/* Most calls in common first; of equals, a thread with its own number,
 * then in thread order. */
static int pair_cmp(const void *l, const void *r)
{
  const thread_pair *p = l, *q = r;
  if (p->common != q->common)
    return p->common > q->common ? -1 : 1;
  if ((p->a == p->b) != (q->a == q->b))
    return p->a == p->b ? -1 : 1;
  if (p->a != q->a)
    return p->a < q->a ? -1 : 1;
  return p->b < q->b ? -1 : p->b > q->b;
}

/* Which of B's n application threads each of A's pairs with, into to[]:
 * the pairs with the most calls in common first. Two runs of one program
 * number their threads in the order each made its first call, which two
 * threads that start together can swap (a replay's workers for a
 * recording's threads did, on a loaded machine, and every call of the two
 * threads differed). Past 64 threads, in thread order. */
static bool pair_threads(const side *sa, const uint32_t *oa, const size_t *ta, const side *sb,
                         const uint32_t *ob, const size_t *tb, size_t n, uint32_t *to)
{
  for (size_t t = 0; t < n; t++)
    to[t] = (uint32_t)t;
  if (n > 64)
    return true;
  uint32_t *ka[64] = {0}, *kb[64] = {0};
  size_t na[64], nb[64];
  thread_pair *p = malloc(n * n * sizeof *p);
  bool ok = p != NULL;
  for (size_t t = 0; ok && t < n; t++) {
    ka[t] = sorted_keys(sa, oa + ta[t], ta[t + 1] - ta[t], &na[t]);
    kb[t] = sorted_keys(sb, ob + tb[t], tb[t + 1] - tb[t], &nb[t]);
    ok = ka[t] && kb[t];
  }
  if (ok) {
    for (size_t t = 0; t < n; t++)
      for (size_t u = 0; u < n; u++)
        p[t * n + u] = (thread_pair){overlap(ka[t], na[t], kb[u], nb[u]), (uint32_t)t,
                                     (uint32_t)u};
    qsort(p, n * n, sizeof *p, pair_cmp);
    uint64_t used_a = 0, used_b = 0;
    for (size_t k = 0; k < n * n; k++)
      if (!(used_a >> p[k].a & 1) && !(used_b >> p[k].b & 1)) {
        to[p[k].a] = p[k].b;
        used_a |= 1ull << p[k].a;
        used_b |= 1ull << p[k].b;
      }
  }
  for (size_t t = 0; t < n; t++) {
    free(ka[t]);
    free(kb[t]);
  }
  free(p);
  return ok;
}

/* Aligns the two sessions' calls into rows: thread by thread when both
 * have the same number of threads with the application's calls (more than
 * one: a recorded replay's threads follow the recording's, and how calls
 * of different threads interleave is no difference), else globally, in
 * sequence order. The threads with only a replay's own calls align with
 * nothing. */
static bool align(dctx *x)
{
  size_t *sa, *sb, nta, ntb, appa, appb;
  /* The callback threads count as one when both sessions ran callbacks
   * through the front end: a recorded replay makes the calls of the
   * recording's callback threads on a worker for each, outside any
   * callback. */
  bool fold = ran_callbacks(&x->sa) && ran_callbacks(&x->sb);
  uint32_t *oa = by_thread(&x->sa, fold, &sa, &nta, &appa);
  uint32_t *ob = by_thread(&x->sb, fold, &sb, &ntb, &appb);
  bool ok = oa && ob;
  x->d->per_thread = ok && appa == appb && appa > 1;
  if (ok && !x->d->per_thread) { /* globally, in sequence order */
    nta = ntb = appa = appb = 1;
    sa[0] = sb[0] = 0;
    sa[1] = x->sa.n;
    sb[1] = x->sb.n;
    for (size_t i = 0; i < x->sa.n; i++)
      oa[i] = (uint32_t)i;
    for (size_t i = 0; i < x->sb.n; i++)
      ob[i] = (uint32_t)i;
  }
  uint32_t *to = ok ? malloc((appa ? appa : 1) * sizeof *to) : NULL;
  ok = to && pair_threads(&x->sa, oa, sa, &x->sb, ob, sb, appa, to);
  for (size_t t = 0; ok && t < appa; t++)
    ok = align_part(x, oa + sa[t], sa[t + 1] - sa[t], ob + sb[to[t]], sb[to[t] + 1] - sb[to[t]]);
  free(to);
  for (size_t t = appa; ok && t < nta; t++)
    ok = align_part(x, oa + sa[t], sa[t + 1] - sa[t], NULL, 0);
  for (size_t t = appb; ok && t < ntb; t++)
    ok = align_part(x, NULL, 0, ob + sb[t], sb[t + 1] - sb[t]);
  if (oa) {
    free(oa);
    free(sa);
  }
  if (ob) {
    free(ob);
    free(sb);
  }
  return ok;
}

/* ---- The replay's own calls --------------------------------------------------------- */

/* The note by which a recorded replay says it made call c itself, or NULL. */
static const pt_note *replay_note(const vw_session *s, const pt_call *c)
{
  size_t n;
  const pt_note *v = vw_notes_of(s, c->seq, &n);
  for (size_t k = 0; k < n; k++)
    if (strcmp(v[k].kind, pi_note_kind_name(PIRT_NOTE_REPLAY)) == 0)
      return &v[k];
  return NULL;
}

/* Whether call c is the first of an event callback on its thread. */
static bool callback_note(const vw_session *s, const pt_call *c)
{
  size_t n;
  const pt_note *v = vw_notes_of(s, c->seq, &n);
  for (size_t k = 0; k < n; k++)
    if (strcmp(v[k].kind, pi_note_kind_name(PIRT_NOTE_CALLBACK)) == 0)
      return true;
  return false;
}

/* ---- Handles and what they correspond to -------------------------------------------- */

/* Whether parameter i belongs to an info query (the result, its sizes). */
static bool is_info(const pi_api_desc *api, unsigned i)
{
  int q = info_param(api);
  return q >= 0 && ((int)i == q || (int)i == api->params[q].size_ret ||
                    (int)i == api->params[q].count.ref);
}

typedef struct ref {
  uint8_t kind;
  int64_t id;
} ref;

typedef struct refs {
  ref v[64]; /* enough for any one parameter here; more are not paired */
  size_t n;
} refs;

static void refs_add(refs *r, uint8_t kind, int64_t id)
{
  if (id && r->n < sizeof r->v / sizeof *r->v)
    r->v[r->n++] = (ref){kind, id};
}

/* The handles (and USM and mapped pointers) parameter i of c names, in
 * order; none for the out-values of a call that did not succeed. */
static void param_refs(const pi_api_desc *api, unsigned i, const pt_call *c, refs *r)
{
  const pi_param_desc *p = &api->params[i];
  const pt_json *j = pt_json_at(c->args, i);
  r->n = 0;
  if (!j || (p->dir != PI_DIR_IN && !(c->returned && c->result == PI_SUCCESS)))
    return;
  if (j->type == PJ_STRING && p->kind != PI_PK_STRING) {
    pt_ref ref;
    for (const char *s = j->u.s; *s;)
      if (pt_ref_parse(s, &ref)) {
        refs_add(r, ref.obj, ref.id);
        s += ref.len;
      } else {
        s++;
      }
  } else if (p->kind == PI_PK_HANDLE && j->type == PJ_INT) {
    refs_add(r, p->obj, j->u.i);
  } else if (p->kind == PI_PK_HANDLES && j->type == PJ_ARRAY) {
    for (uint32_t k = 0; k < j->n; k++)
      refs_add(r, p->obj, pt_json_int(j->u.items[k], 0));
  }
}

/* Parameters through which a call makes objects: out-values that are no
 * info-query answers. */
static bool makes(const pi_api_desc *api, unsigned i)
{
  return api->params[i].dir != PI_DIR_IN && !is_info(api, i);
}

/* ---- The first pass: what is kept of each call ------------------------------------- */

/* The seq of call i. */
static int64_t seq_of(const side *sd, size_t i)
{
  size_t lo = 0, hi = sd->njumps; /* the last jump at or before i */
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (sd->jumps[mid].index <= i)
      lo = mid;
    else
      hi = mid;
  }
  return sd->jumps[lo].seq + (int64_t)(i - sd->jumps[lo].index);
}

/* Which call made each handle: the first that returned it, else the first
 * that passed it; the handles each call made, for pairing; which name
 * each device told first. */
static bool note_makers(side *sd, size_t ci, const pt_call *c)
{
  const pi_api_desc *api = pi_api_get(c->api), *dev = pi_api_get(PI_API_piDeviceGetInfo);
  int q = dev ? info_param(dev) : -1;
  if (!api)
    return true;
  if (q >= 0 && c->api == PI_API_piDeviceGetInfo && c->returned && c->result == PI_SUCCESS &&
      vw_arg_int(c, (unsigned)dev->params[q].query) == PI_DEVICE_INFO_NAME) {
    const pt_json *v = pt_json_at(c->args, (unsigned)q);
    int64_t seen;
    if (v && v->type == PJ_STRING && !vw_map_get(&sd->name, vw_arg_int(c, 0), &seen)) {
      char **names = pt_grow(sd->names, &sd->capnames, sd->nnames, sizeof *names);
      if (!names || !(names[sd->nnames] = strdup(v->u.s)))
        return false;
      sd->names = names;
      vw_map_put(&sd->name, vw_arg_int(c, 0), (int64_t)sd->nnames++);
    }
  }
  for (unsigned i = 0; i < api->nparams; i++) {
    bool made = makes(api, i);
    refs r;
    param_refs(api, i, c, &r);
    for (size_t k = 0; k < r.n; k++) {
      int64_t v;
      bool has = vw_map_get(&sd->maker, r.v[k].id, &v);
      if (made ? !has || !(v & 1) : !has)
        vw_map_put(&sd->maker, r.v[k].id, MAKER(ci, c->api, made));
      if (!made)
        continue;
      made_ref *m = pt_grow(sd->made, &sd->capmade, sd->nmade, sizeof *m);
      if (!m)
        return false;
      sd->made = m;
      m[sd->nmade++] = (made_ref){(uint32_t)ci, (uint16_t)c->api, (uint8_t)i, r.v[k].kind,
                                  r.v[k].id};
    }
  }
  return true;
}

/* Keeps what the alignment and the pairing need of call ci. */
static bool note_call(side *sd, size_t ci, const pt_call *c)
{
  call_key *ck = pt_grow(sd->ck, &sd->capck, ci, sizeof *ck);
  if (!ck)
    return false;
  sd->ck = ck;
  bool runtime = c->api == PI_API_piPlatformsGet || c->api == PI_API_piDevicesGet ||
                 c->api == PI_API_piPlatformGetInfo || c->api == PI_API_piDeviceGetInfo ||
                 c->api == PI_API_piPluginGetLastError || c->api == PI_API_piTearDown;
  ck[ci] = (call_key){align_key(c), TID(c->thread) | (replay_note(sd->s, c) ? OWN : 0) |
                                        (runtime ? RUNTIME : 0) |
                                        (callback_note(sd->s, c) ? CALLBACK : 0)};
  if (!ci || seq_of(sd, ci - 1) + 1 != c->seq) {
    seq_jump *j = pt_grow(sd->jumps, &sd->capjumps, sd->njumps, sizeof *j);
    if (!j)
      return false;
    sd->jumps = j;
    j[sd->njumps++] = (seq_jump){ci, c->seq};
  }
  return note_makers(sd, ci, c);
}

/* The first pass over a session's calls. False with the reason in why, or
 * with why empty when vw_iter_open has told it. */
static bool first_pass(side *sd, char *why, size_t whyn)
{
  vw_iter it;
  if (!vw_iter_open("diff", sd->s, &it))
    return false;
  bool ok = true;
  const pt_call *c;
  for (sd->n = 0; ok && (c = vw_iter_next(&it)); sd->n++)
    ok = note_call(sd, sd->n, c);
  if (!ok)
    snprintf(why, whyn, "out of memory comparing the sessions");
  else if (it.err[0])
    snprintf(why, whyn, "%s", it.err);
  ok = ok && !it.err[0];
  it.err[0] = 0; /* told by the caller */
  vw_iter_close("diff", &it);
  return ok;
}

static void side_free(side *sd)
{
  free(sd->ck);
  free(sd->jumps);
  free(sd->made);
  vw_map_free(&sd->maker);
  vw_map_free(&sd->name);
  for (size_t i = 0; i < sd->nnames; i++)
    free(sd->names[i]);
  free(sd->names);
  if (sd->seek) {
    pt_seek_close(sd->seek); /* its statements before the connection they are on */
    vw_session_release(sd->s);
  }
}

/* Call i of a side, read by its seq; NULL after the reason in x->d->why.
 * Valid until the side's next call_at. */
static const pt_call *call_at(dctx *x, side *sd, int64_t i)
{
  char *why = x->d->why;
  size_t whyn = sizeof x->d->why;
  if (!sd->seek) {
    if (!(sd->seek = pt_seek_open(vw_db(sd->s), sd->s->id, why, whyn))) {
      x->failed = true;
      return NULL;
    }
    vw_session_hold(sd->s); /* the seek reads through its connection */
  }
  int64_t seq = seq_of(sd, (size_t)i);
  const pt_call *c = pt_seek_call(sd->seek, seq, why, whyn);
  if (!c && !why[0])
    snprintf(why, whyn, "%s changed while it was read: call %lld of session %lld went missing",
             sd->s->path, (long long)seq, (long long)sd->s->id);
  x->failed |= !c;
  return c;
}

/* The handles call i made, from its first (*n of them; NULL when none). */
static const made_ref *made_by(const side *sd, size_t i, size_t *n)
{
  size_t lo = 0, hi = sd->nmade;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (sd->made[mid].call < i)
      lo = mid + 1;
    else
      hi = mid;
  }
  for (*n = 0; lo + *n < sd->nmade && sd->made[lo + *n].call == i; (*n)++)
    ;
  return *n ? &sd->made[lo] : NULL;
}

/* Pairs handle a of A with handle b of B when neither has a partner yet. */
static void pair(dctx *x, const ref *a, const ref *b)
{
  int64_t v;
  if (a->kind == b->kind && !vw_map_get(&x->ab, a->id, &v) && !vw_map_get(&x->ba, b->id, &v)) {
    vw_map_put(&x->ab, a->id, b->id);
    vw_map_put(&x->ba, b->id, a->id);
  }
}

/* Pairs the handles of two aligned calls, position by position: those they
 * make (`made_only`), or all of them. */
static void pair_call(dctx *x, const pt_call *ca, const pt_call *cb, bool made_only)
{
  const pi_api_desc *api = pi_api_get(ca->api);
  if (!api || ca->api != cb->api)
    return;
  for (unsigned i = 0; i < api->nparams; i++) {
    if (made_only && !makes(api, i))
      continue;
    refs ra, rb;
    param_refs(api, i, ca, &ra);
    param_refs(api, i, cb, &rb);
    for (size_t k = 0; k < ra.n && k < rb.n; k++)
      pair(x, &ra.v[k], &rb.v[k]);
  }
}

/* pair_call(made_only) from what the first pass kept of calls ia and ib. */
static void pair_made(dctx *x, size_t ia, size_t ib)
{
  size_t na, nb;
  const made_ref *a = made_by(&x->sa, ia, &na), *b = made_by(&x->sb, ib, &nb);
  if (!a || !b || a->api != b->api)
    return;
  for (size_t i = 0, j = 0; i < na; i++) { /* the k-th handle of a parameter with the k-th */
    while (j < nb && b[j].param < a[i].param)
      j++;
    size_t k = 0; /* a[i]'s place among its parameter's */
    while (k < i && a[i - k - 1].param == a[i].param)
      k++;
    size_t jb = j + k;
    if (jb < nb && b[jb].param == a[i].param)
      pair(x, &(ref){a[i].kind, a[i].id}, &(ref){b[jb].kind, b[jb].id});
  }
}

/* A's handles print as their B partners, so that text compares. */
static void text_a(pi_sbuf *b, uint8_t kind, int64_t id, int64_t off, void *ctx)
{
  const dctx *x = ctx;
  int64_t v;
  if (vw_map_get(&x->ab, id, &v))
    pi_sbuf_printf(b, "%s#%lld", pi_object_kind_name(kind), (long long)v);
  else
    pi_sbuf_printf(b, "%s#A%lld", pi_object_kind_name(kind), (long long)id);
  if (off)
    pi_sbuf_printf(b, "+%lld", (long long)off);
}

static void text_b(pi_sbuf *b, uint8_t kind, int64_t id, int64_t off, void *ctx)
{
  const dctx *x = ctx;
  int64_t v;
  pi_sbuf_printf(b, "%s#%s%lld", pi_object_kind_name(kind), vw_map_get(&x->ba, id, &v) ? "" : "B",
                 (long long)id);
  if (off)
    pi_sbuf_printf(b, "+%lld", (long long)off);
}

/* "mem#6 (made by A 21 piMemBufferCreate)"; a device's recorded name too. */
static void describe(pi_sbuf *b, const side *sd, const ref *r)
{
  int64_t v;
  char name[32];
  pi_sbuf_printf(b, "%c's %s#%lld", sd->letter, pi_object_kind_name(r->kind), (long long)r->id);
  if (vw_map_get(&sd->maker, r->id, &v))
    pi_sbuf_printf(b, " (made by %c %lld %s", sd->letter, (long long)seq_of(sd, MAKER_CALL(v)),
                   vw_api_name(MAKER_API(v), name));
  else
    pi_sbuf_puts(b, " (never made");
  if (r->kind == PI_OBJ_DEVICE && vw_map_get(&sd->name, r->id, &v))
    pi_sbuf_printf(b, ": %s", sd->names[v]);
  pi_sbuf_puts(b, ")");
}

/* Why parameter i names different objects on the two sides: the first
 * handle that does not correspond, both objects by the calls that made
 * them, and what each corresponds to. False when no handle explains it. */
static bool explain_objects(pi_sbuf *b, dctx *x, const pi_api_desc *api, unsigned i,
                            const pt_call *ca, const pt_call *cb)
{
  refs ra, rb;
  param_refs(api, i, ca, &ra);
  param_refs(api, i, cb, &rb);
  for (size_t k = 0; k < ra.n && k < rb.n; k++) {
    int64_t pa, pb, at;
    bool has_a = vw_map_get(&x->ab, ra.v[k].id, &pa), has_b = vw_map_get(&x->ba, rb.v[k].id, &pb);
    if (has_a && pa == rb.v[k].id)
      continue;
    /* The same two objects once more (a program that picked another
     * platform names it in each call): said once, then referred to. */
    int64_t key = (int64_t)((uint64_t)ra.v[k].id << 32 ^ (uint64_t)rb.v[k].id);
    if (vw_map_get(&x->explained, key, &at)) {
      pi_sbuf_printf(b, ": different objects, as at A %lld", (long long)at);
      return true;
    }
    /* Referred to only from where it is shown (--ignore, --only). */
    if (x->bind && filter_keeps(x->o, is_info(api, i) ? VD_INFO : VD_ARG, ca->api))
      vw_map_put(&x->explained, key, ca->seq);
    pi_sbuf_puts(b, ": different objects: ");
    describe(b, &x->sa, &ra.v[k]);
    pi_sbuf_puts(b, " vs ");
    describe(b, &x->sb, &rb.v[k]);
    if (has_a)
      pi_sbuf_printf(b, "; A's corresponds to B's %s#%lld", pi_object_kind_name(ra.v[k].kind),
                     (long long)pa);
    else
      pi_sbuf_puts(b, "; A's corresponds to nothing in B");
    if (has_b)
      pi_sbuf_printf(b, ", B's to A's %s#%lld", pi_object_kind_name(rb.v[k].kind), (long long)pb);
    else
      pi_sbuf_puts(b, ", B's to nothing in A");
    return true;
  }
  return false;
}

/* ---- Comparing one pair of calls -------------------------------------------------- */

/* Values that are timings (the outputs of a `timing` API): never
 * differences. */
static bool is_timing(const pi_api_desc *api, unsigned i)
{
  return (api->flags & PI_API_F_TIMING) && api->params[i].dir != PI_DIR_IN;
}

/* A callback of the application, or the user data beside it: a replay
 * cannot pass the application's (it passes none, or one of its own), and
 * two runs' code addresses mean nothing to each other. */
static bool is_callback(const pi_api_desc *api, unsigned i)
{
  return api->params[i].kind == PI_PK_FNPTR ||
         (i > 0 && api->params[i - 1].kind == PI_PK_FNPTR && api->params[i].vt == PI_VT_PTR);
}

static void param_label(pi_sbuf *b, const pi_api_desc *api, unsigned i, const pt_call *c)
{
  int q = info_param(api);
  pi_sbuf_puts(b, api->params[i].name);
  if (q >= 0 && is_info(api, i)) {
    pi_sbuf_puts(b, " (");
    pi_format_enum(b, api->params[api->params[q].query].en,
                   vw_arg_int(c, (unsigned)api->params[q].query));
    pi_sbuf_puts(b, ")");
  }
}

static void compare_param(dctx *x, const pi_api_desc *api, unsigned i, const pt_call *ca,
                          const pt_call *cb)
{
  if (is_timing(api, i) || is_callback(api, i) || (x->o->no_info && is_info(api, i)))
    return;
  /* Without the bytes of a small payload (a kernel argument's value):
   * compare_data compares them, as data, and only where both sessions
   * recorded them. */
  vw_textopt ra = {text_a, x, true, 4096, 1u << 20, true};
  vw_textopt rb = {text_b, x, true, 4096, 1u << 20, true};
  pi_sbuf na, nb, ta, tb, what;
  char sa[512], sb[512]; /* most values fit: no allocation */
  pi_sbuf_init(&na, sa, sizeof sa);
  pi_sbuf_init(&nb, sb, sizeof sb);
  vw_arg_text(&na, &ra, api, i, ca);
  vw_arg_text(&nb, &rb, api, i, cb);
  if (strcmp(na.p, nb.p) != 0) {
    vw_textopt show = {NULL, NULL, false, 16, 200, false};
    pi_sbuf_init(&ta, NULL, 0);
    pi_sbuf_init(&tb, NULL, 0);
    pi_sbuf_init(&what, NULL, 0);
    vw_arg_text(&ta, &show, api, i, ca);
    vw_arg_text(&tb, &show, api, i, cb);
    param_label(&what, api, i, ca);
    explain_objects(&what, x, api, i, ca, cb);
    add(x->d, is_info(api, i) ? VD_INFO : VD_ARG, ca, cb, what.p, ta.p, tb.p);
    pi_sbuf_free(&ta);
    pi_sbuf_free(&tb);
    pi_sbuf_free(&what);
  }
  pi_sbuf_free(&na);
  pi_sbuf_free(&nb);
}

/* Up to 8 bytes at `off`, in hex. */
static void hex_at(char *out, size_t n, const unsigned char *p, size_t len, size_t off)
{
  size_t w = 0;
  *out = 0;
  for (size_t k = off; k < len && k < off + 8 && w + 4 < n; k++)
    w += (size_t)snprintf(out + w, n - w, "%s%02x", k > off ? " " : "", p[k]);
  if (!*out)
    snprintf(out, n, "(ends)");
}

/* A source's text around `off` (some of what comes before it, more of
 * what follows), quoted, with its escapes, "..." where it is cut. */
static void text_at(char *out, size_t n, const unsigned char *p, size_t len, size_t off)
{
  size_t from = off > 16 ? off - 16 : 0, to = off + 24 < len ? off + 24 : len, w = 0;
  w += (size_t)snprintf(out, n, "%s\"", from ? "..." : "");
  for (size_t k = from; k < to && w + 8 < n; k++) {
    unsigned char c = p[k];
    if (c == '\n' || c == '\t' || c == '"' || c == '\\')
      w += (size_t)snprintf(out + w, n - w, "\\%c", c == '\n' ? 'n' : c == '\t' ? 't' : c);
    else if (c < 0x20 || c >= 0x7f)
      w += (size_t)snprintf(out + w, n - w, "\\x%02x", c);
    else
      out[w++] = (char)c;
  }
  snprintf(out + w, n - w, "\"%s", to < len ? "..." : "");
}

/* Compares a payload; false when neither side recorded one in that role. */
static bool compare_payload(dctx *x, const pi_param_desc *p, unsigned i, const char *role,
                            unsigned idx, const pt_call *ca, const pt_call *cb)
{
  size_t ga, fa, gb, fb;
  unsigned char *da = pt_data(vw_db(x->a), x->a->id, ca, i, role, idx, &ga, &fa);
  unsigned char *db = pt_data(vw_db(x->b), x->b->id, cb, i, role, idx, &gb, &fb);
  if (!da && !db)
    return false;
  if (!da || !db) /* a payload or none is one role's answer: counted once */
    x->d->data_only[da ? 0 : 1]++;
  size_t n = ga < gb ? ga : gb, off = 0;
  char what[320], a[96], b[96], elem[24] = "";
  if (idx)
    snprintf(elem, sizeof elem, " #%u", idx);
  /* A device's results (read back) may differ in their last bits between
   * devices: within --tolerance as floats, the same. */
  bool result = strcmp(role, "out") == 0 || strcmp(role, "readback") == 0;
  pt_data_diff dd;
  if (da && db && x->o->tolerance >= 0 && result && fa == fb && ga == gb) {
    if (!pt_data_compare(da, db, n, x->o->tolerance, x->o->f64, &dd)) {
      size_t at = dd.first * dd.width, ew = at + dd.width <= n ? dd.width : n - at;
      snprintf(what, sizeof what, "%s%s (%s, %zu bytes): %zu of %zu %zu-byte floats differ "
               "beyond the tolerance, the first at byte %zu (element %zu)", p->name, elem, role,
               fa, dd.count, dd.elems, dd.width, at, dd.first);
      pt_data_elem_text(a, sizeof a, da + at, ew);
      pt_data_elem_text(b, sizeof b, db + at, ew);
      add(x->d, VD_DATA, ca, cb, what, a, b);
    }
  } else {
    while (da && db && off < n && da[off] == db[off])
      off++;
    if (da && db && (off < n || fa != fb)) {
      if (p->kind == PI_PK_STRINGS) { /* a program's source: text, placed by line */
        size_t line = 1, col = 1;
        for (size_t k = 0; k < off; k++, col++)
          if (da[k] == '\n')
            line++, col = 0;
        snprintf(what, sizeof what, "%s%s (%s, %zu and %zu bytes): first difference at byte %zu "
                 "(line %zu, column %zu)", p->name, elem, role, fa, fb, off, line, col);
        text_at(a, sizeof a, da, ga, off);
        text_at(b, sizeof b, db, gb, off);
      } else {
        snprintf(what, sizeof what, "%s%s (%s, %zu and %zu bytes): first difference at byte %zu "
                 "(32-bit element %zu)", p->name, elem, role, fa, fb, off, off / 4);
        hex_at(a, sizeof a, da, ga, off);
        hex_at(b, sizeof b, db, gb, off);
      }
      add(x->d, VD_DATA, ca, cb, what, a, b);
    }
  }
  free(da);
  free(db);
  return true;
}

/* Payloads of a parameter: buffers, host memory, sources, binaries. */
static void compare_data(dctx *x, const pi_api_desc *api, const pt_call *ca, const pt_call *cb)
{
  static const char *const in[] = {"in", NULL}, *const out[] = {"out", "readback", NULL},
                           *const any[] = {"in", "out", "readback", NULL};
  for (unsigned i = 0; i < api->nparams; i++) {
    const pi_param_desc *p = &api->params[i];
    bool many = p->kind == PI_PK_STRINGS || p->kind == PI_PK_BLOBS || p->kind == PI_PK_BINARIES;
    if (!many && p->kind != PI_PK_BYTES && p->kind != PI_PK_HOSTPTR && p->kind != PI_PK_USMPTR)
      continue;
    const char *const *roles = p->kind == PI_PK_USMPTR ? any : p->dir == PI_DIR_IN ? in : out;
    int64_t n = many ? (p->count.ref >= 0 ? vw_arg_int(ca, (unsigned)p->count.ref) : 1) : 1;
    for (int64_t k = 0; k < n && k < 64; k++) /* the first role recorded counts */
      for (int r = 0; roles[r] && !compare_payload(x, p, i, roles[r], (unsigned)k, ca, cb); r++)
        ;
  }
}

/* Whether a note of `kind` is an answer of the implementation the front
 * end had outside PI (its image formats), which differs as the devices
 * do: an info difference, left out with --no-info as info queries are. */
static bool info_note(const char *kind)
{
  return strcmp(kind, pi_note_kind_name(PIRT_NOTE_IMAGE_FORMATS)) == 0;
}

/* The runtime's notes before a call, without a replay's own markers. */
static const pt_note *next_note(const dctx *x, const pt_note *v, size_t n, size_t *k)
{
  /* Nor where a callback began: when the implementation ran it, not a
   * decision (docs/notes.md). */
  while (*k < n && (strcmp(v[*k].kind, pi_note_kind_name(PIRT_NOTE_REPLAY)) == 0 ||
                    strcmp(v[*k].kind, pi_note_kind_name(PIRT_NOTE_CALLBACK)) == 0 ||
                    (x->o->no_info && info_note(v[*k].kind))))
    (*k)++;
  return *k < n ? &v[(*k)++] : NULL;
}

/* Whether two notes' texts say the same but for the devices they name (a
 * link decision, a cache result on PoCL's device and on rusticl's): each
 * text with its own note's device name left out. */
static bool same_text(const pt_note *p, const pt_note *q)
{
  if (strcmp(p->text, q->text) == 0)
    return true;
  const char *dp = p->device ? p->device : "", *dq = q->device ? q->device : "";
  size_t lp = strlen(dp), lq = strlen(dq);
  if (!lp || !lq || strcmp(dp, dq) == 0)
    return false;
  const char *a = p->text, *b = q->text;
  for (;;) {
    bool da = strncmp(a, dp, lp) == 0, db = strncmp(b, dq, lq) == 0;
    if (da != db)
      return false;
    if (da) {
      a += lp, b += lq;
      continue;
    }
    if (*a != *b)
      return false;
    if (!*a)
      return true;
    a++, b++;
  }
}

static void compare_notes(dctx *x, const pt_call *ca, const pt_call *cb)
{
  size_t na, nb, ka = 0, kb = 0;
  const pt_note *a = vw_notes_of(x->a, ca->seq, &na), *b = vw_notes_of(x->b, cb->seq, &nb);
  for (;;) {
    const pt_note *p = next_note(x, a, na, &ka), *q = next_note(x, b, nb, &kb);
    if (!p && !q)
      break;
    if (p && q && strcmp(p->kind, q->kind) == 0 && same_text(p, q) &&
        strcmp(p->value_hex, q->value_hex) == 0)
      continue;
    const char *kind = (p ? p : q)->kind;
    add(x->d, info_note(kind) ? VD_INFO : VD_NOTE, ca, cb, kind, p ? p->text : "(none)",
        q ? q->text : "(none)");
  }
}

/* Whether parameter i of two calls tried as the same call (same_call)
 * names handles they made, as many on each side, none paired yet: the
 * handles a call makes correspond when the calls do, and are paired once
 * they are found to (find_moves), as those of aligned calls are before. */
static bool made_unpaired(const dctx *x, const pi_api_desc *api, unsigned i, const pt_call *ca,
                          const pt_call *cb)
{
  if (!makes(api, i))
    return false;
  refs ra, rb;
  param_refs(api, i, ca, &ra);
  param_refs(api, i, cb, &rb);
  int64_t v;
  bool unpaired = ra.n && ra.n == rb.n;
  for (size_t k = 0; unpaired && k < ra.n; k++)
    unpaired = ra.v[k].kind == rb.v[k].kind && !vw_map_get(&x->ab, ra.v[k].id, &v) &&
               !vw_map_get(&x->ba, rb.v[k].id, &v);
  return unpaired;
}

static void compare_pair(dctx *x, const pt_call *ca, const pt_call *cb)
{
  x->d->matched++;
  if (x->bind)
    pair_call(x, ca, cb, false);
  compare_notes(x, ca, cb);
  if (ca->returned != cb->returned || (ca->returned && ca->result != cb->result))
    add(x->d, VD_RESULT, ca, cb, "", vw_result_name(ca), vw_result_name(cb));
  const pi_api_desc *api = pi_api_get(ca->api);
  if (!api || (x->o->no_info && info_param(api) >= 0))
    return;
  for (unsigned i = 0; i < api->nparams; i++)
    if (x->bind || !made_unpaired(x, api, i, ca, cb))
      compare_param(x, api, i, ca, cb);
  compare_data(x, api, ca, cb);
}

static void only_in_one(dctx *x, const pt_call *c, bool in_a, bool own)
{
  const pi_api_desc *api = pi_api_get(c->api);
  if (x->o->no_info && api && info_param(api) >= 0 && !own)
    return;
  pi_sbuf t;
  pi_sbuf_init(&t, NULL, 0);
  char name[32];
  pi_sbuf_printf(&t, "%s(", vw_api_name(c->api, name));
  if (api)
    vw_args_text(&t, NULL, api, c);
  pi_sbuf_printf(&t, ") = %s", vw_result_name(c));
  const pt_note *why = own ? replay_note(in_a ? x->a : x->b, c) : NULL;
  vw_diff_kind kind = own                            ? VD_REPLAY
                      : c->api == PI_API_piTearDown ? VD_TEARDOWN
                      : in_a                        ? VD_ONLY_A
                                                    : VD_ONLY_B;
  add(x->d, kind, in_a ? c : NULL, in_a ? NULL : c,
      why                    ? why->text
      : kind == VD_TEARDOWN ? "teardown, in one session only: not the application's call"
                            : "call",
      t.p, "");
  pi_sbuf_free(&t);
}

/* Whether two calls the alignment left apart are the same call: the same
 * key and nothing that differs (no new pairs of handles tried). */
static bool same_call(dctx *x, const pt_call *ca, const pt_call *cb)
{
  vw_diff *keep = x->d, scratch;
  memset(&scratch, 0, sizeof scratch);
  x->d = &scratch;
  x->bind = false;
  compare_pair(x, ca, cb);
  x->d = keep;
  x->bind = true;
  bool same = vw_diff_total(&scratch) == 0;
  vw_diff_free(&scratch);
  return same;
}

typedef struct gap {
  uint32_t key, row;
} gap;

static int gap_cmp(const void *p, const void *q)
{
  const gap *a = p, *b = q;
  return a->key != b->key ? (a->key < b->key ? -1 : 1) : (a->row > b->row) - (a->row < b->row);
}

/* The first of g[i..] whose row is not gone (n when none): `next` skips
 * those that are, halving the paths it follows (a key's rows only in B
 * are tried in order by every call of A with that key, and the ones
 * matched already would otherwise be walked past again each time). */
static size_t live_from(size_t *next, size_t i)
{
  while (next[i] != i) {
    next[i] = next[next[i]];
    i = next[i];
  }
  return i;
}

/* Calls in one session only that the other has elsewhere (the order
 * differs): each of A's is paired with the first of B's with the same key
 * that compares equal, trying a few. */
/* How far kept_in looks for a call's neighbours of its own thread. */
#define KEPT_WINDOW 256

/* The partner (in the other session, by `partner`) of the nearest call of
 * thread t of side sd before (dir -1) or after (dir +1) its call i that has
 * one: 1 found (in *j), 0 none (the thread begins or ends there), -1 none
 * within KEPT_WINDOW calls. */
static int neighbour(const side *sd, const int32_t *partner, size_t i, uint32_t t, int dir,
                     size_t *j)
{
  size_t k = i;
  for (size_t n = 0; dir < 0 ? k > 0 : k + 1 < sd->n;) {
    k = dir < 0 ? k - 1 : k + 1;
    if (++n > KEPT_WINDOW)
      return -1;
    if (TID(sd->ck[k].thread) == t && partner[k] >= 0) {
      *j = (size_t)partner[k];
      return 1;
    }
  }
  return 0;
}

/* Whether call i of side sd, paired with call j of the other side, keeps
 * its place among its own thread's calls there: its nearest neighbours of
 * its thread that have partners have them on the same sides of j. */
static bool kept_in(const side *sd, const int32_t *partner, size_t i, size_t j)
{
  uint32_t t = TID(sd->ck[i].thread);
  size_t before = 0, after = 0;
  int b = neighbour(sd, partner, i, t, -1, &before), a = neighbour(sd, partner, i, t, +1, &after);
  return (b == 0 || (b == 1 && before < j)) && (a == 0 || (a == 1 && after > j));
}

/* Whether a call found apart from where the alignment put it (A's ia, B's
 * ib) keeps its place among the calls of its own thread, in A's threads
 * and in B's (a2b, b2a: the aligned calls' partners). Threads interleave
 * differently from run to run (a recorded replay's do: it follows each
 * thread's calls in order, not the order between threads), so a call that
 * moved only among other threads' calls is no difference. */
static bool order_kept(const dctx *x, const int32_t *a2b, const int32_t *b2a, size_t ia, size_t ib)
{
  return kept_in(&x->sa, a2b, ia, ib) && kept_in(&x->sb, b2a, ib, ia);
}

static void find_moves(dctx *x)
{
  size_t n = 0;
  for (size_t r = 0; r < x->nrows; r++)
    n += x->rows[r].ia < 0 && !is_own(&x->sb, (size_t)x->rows[r].ib);
  gap *g = n ? malloc(n * sizeof *g) : NULL;
  size_t *next = g ? malloc((n + 1) * sizeof *next) : NULL;
  if (!next) {
    free(g);
    return;
  }
  n = 0;
  for (size_t r = 0; r < x->nrows; r++)
    if (x->rows[r].ia < 0 && !is_own(&x->sb, (size_t)x->rows[r].ib))
      g[n++] = (gap){x->sb.ck[x->rows[r].ib].key, (uint32_t)r};
  qsort(g, n, sizeof *g, gap_cmp);
  for (size_t i = 0; i <= n; i++)
    next[i] = i;
  /* Each aligned call of A's partner in B (order_kept); without memory,
   * every move is reported, as before. */
  int32_t *a2b = malloc((x->sa.n ? x->sa.n : 1) * sizeof *a2b);
  int32_t *b2a = a2b ? malloc((x->sb.n ? x->sb.n : 1) * sizeof *b2a) : NULL;
  if (b2a) {
    for (size_t i = 0; i < x->sa.n; i++)
      a2b[i] = -1;
    for (size_t i = 0; i < x->sb.n; i++)
      b2a[i] = -1;
    for (size_t r = 0; r < x->nrows; r++)
      if (x->rows[r].ia >= 0 && x->rows[r].ib >= 0) {
        a2b[x->rows[r].ia] = x->rows[r].ib;
        b2a[x->rows[r].ib] = x->rows[r].ia;
      }
  }
  for (size_t r = 0; r < x->nrows && !x->failed; r++) {
    diff_row *w = &x->rows[r];
    if (w->ib >= 0 || is_own(&x->sa, (size_t)w->ia))
      continue;
    uint32_t key = x->sa.ck[w->ia].key;
    size_t lo = 0, hi = n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (g[mid].key < key)
        lo = mid + 1;
      else
        hi = mid;
    }
    const pt_call *ca = NULL; /* read once a call of B may be it */
    for (int tries = 0; (lo = live_from(next, lo)) < n && g[lo].key == key && tries < 8; lo++) {
      diff_row *o = &x->rows[g[lo].row];
      tries++;
      const pt_call *cb;
      if ((!ca && !(ca = call_at(x, &x->sa, w->ia))) || !(cb = call_at(x, &x->sb, o->ib)))
        break;
      if (same_call(x, ca, cb)) {
        w->ib = o->ib;
        w->moved = o->gone = true;
        w->kept = b2a && order_kept(x, a2b, b2a, (size_t)w->ia, (size_t)o->ib);
        next[lo] = lo + 1;
        pair_call(x, ca, cb, true);
        break;
      }
    }
  }
  free(a2b);
  free(b2a);
  free(next);
  free(g);
}

static void report_move(dctx *x, const pt_call *ca, const pt_call *cb)
{
  char a[48], b[48];
  snprintf(a, sizeof a, "A %lld", (long long)ca->seq);
  snprintf(b, sizeof b, "B %lld", (long long)cb->seq);
  add(x->d, VD_ORDER, ca, cb, "the same call, out of the order the other calls align in", a, b);
}

bool vw_diff_compute(vw_session *a, vw_session *b, const vw_diff_opts *o, vw_diff *d)
{
  memset(d, 0, sizeof *d);
  dctx x = {.a = a, .b = b, .sa = {.s = a, .letter = 'A'}, .sb = {.s = b, .letter = 'B'},
            .o = o, .d = d,
            .bind = true};
  bool ok = first_pass(&x.sa, d->why, sizeof d->why) && first_pass(&x.sb, d->why, sizeof d->why);
  bool told = !ok && !d->why[0];
  d->calls_a = x.sa.n;
  d->calls_b = x.sb.n;
  ok = ok && align(&x);
  if (ok) {
    /* The objects aligned calls made correspond, whatever their ids. */
    for (size_t r = 0; r < x.nrows; r++)
      if (x.rows[r].ia >= 0 && x.rows[r].ib >= 0)
        pair_made(&x, (size_t)x.rows[r].ia, (size_t)x.rows[r].ib);
    find_moves(&x);
  }
  for (size_t r = 0; ok && !x.failed && r < x.nrows; r++) {
    const diff_row *w = &x.rows[r];
    if (w->gone)
      continue;
    const pt_call *ca = w->ia >= 0 ? call_at(&x, &x.sa, w->ia) : NULL;
    const pt_call *cb = w->ib >= 0 ? call_at(&x, &x.sb, w->ib) : NULL;
    if (x.failed)
      break;
    if (w->moved && !w->kept)
      report_move(&x, ca, cb);
    if (ca && cb)
      compare_pair(&x, ca, cb);
    else if (ca || cb)
      only_in_one(&x, ca ? ca : cb, ca != NULL, ca ? is_own(&x.sa, (size_t)w->ia)
                                                   : is_own(&x.sb, (size_t)w->ib));
  }
  ok = ok && !x.failed;
  if (!ok && !d->why[0] && !told)
    snprintf(d->why, sizeof d->why, "out of memory comparing the sessions");
  if (!ok) { /* the differences found before it failed go: only why stays */
    char why[sizeof d->why];
    memcpy(why, d->why, sizeof why);
    vw_diff_free(d);
    memcpy(d->why, why, sizeof why);
  }
  free(x.rows);
  side_free(&x.sa);
  side_free(&x.sb);
  vw_map_free(&x.ab);
  vw_map_free(&x.ba);
  vw_map_free(&x.explained);
  return ok;
}

/* ---- Device times per kernel: shown, never a difference ------------------------- */

typedef struct devcmp_row {
  const char *name;         /* NULL: a kernel no piKernelCreate made */
  const vw_dev_stat *a, *b; /* NULL: the kernel has no device time there */
} devcmp_row;

typedef struct devcmp {
  bool has_a, has_b; /* the sessions' device times */
  bool ok;           /* false: out of memory */
  vw_stats sa, sb;
  devcmp_row *rows; /* A's kernels in its order (by launch time), then B's others */
  size_t n;
} devcmp;

static bool same_name(const char *x, const char *y)
{
  return x && y ? strcmp(x, y) == 0 : x == y;
}

static void devcmp_free(devcmp *c)
{
  if (c->has_a && c->has_b) {
    vw_stats_free(&c->sa);
    vw_stats_free(&c->sb);
  }
  free(c->rows);
  memset(c, 0, sizeof *c);
}

/* Per kernel name: the device time of its launches in A and in B, when both
 * sessions have device times. */
static void devcmp_compute(const vw_session *a, const vw_session *b, devcmp *c)
{
  memset(c, 0, sizeof *c);
  c->has_a = a->ndevtimes > 0;
  c->has_b = b->ndevtimes > 0;
  c->ok = true;
  if (!c->has_a || !c->has_b)
    return;
  bool sa = vw_stats_compute("diff", a, &c->sa), sb = vw_stats_compute("diff", b, &c->sb);
  if (!sa || !sb) {
    if (sa)
      vw_stats_free(&c->sa);
    if (sb)
      vw_stats_free(&c->sb);
    c->has_a = c->has_b = false; /* nothing to free */
    c->ok = false;
    return;
  }
  c->rows = calloc(c->sa.nkernels + c->sb.nkernels + 1, sizeof *c->rows);
  if (!c->rows) {
    c->ok = false;
    return;
  }
  for (size_t i = 0; i < c->sa.nkernels; i++) {
    const vw_kernel_stat *k = &c->sa.kernels[i];
    devcmp_row *r = &c->rows[c->n++];
    r->name = k->name;
    r->a = k->dev.count ? &k->dev : NULL;
    for (size_t j = 0; j < c->sb.nkernels; j++)
      if (same_name(c->sb.kernels[j].name, k->name) && c->sb.kernels[j].dev.count)
        r->b = &c->sb.kernels[j].dev;
  }
  for (size_t j = 0; j < c->sb.nkernels; j++) {
    const vw_kernel_stat *k = &c->sb.kernels[j];
    bool in_a = false;
    for (size_t i = 0; i < c->sa.nkernels && !in_a; i++)
      in_a = same_name(c->sa.kernels[i].name, k->name);
    if (!in_a)
      c->rows[c->n++] = (devcmp_row){k->name, NULL, k->dev.count ? &k->dev : NULL};
  }
}

static const char *kernel_name(const char *name)
{
  return name ? name : "(not made by piKernelCreate)";
}

/* B's mean device time over A's; false when either has none. */
/* Whether a side's device times for a kernel are a driver's placeholder
 * (rusticl says 1 ns for every command: stats makes no rate of them). */
static bool untimed(const vw_dev_stat *d)
{
  return d && d->count && d->mean < VW_UNTIMED_NS;
}

static bool devcmp_ratio(const devcmp_row *r, double *ratio)
{
  if (!r->a || !r->b || r->a->total <= 0 || untimed(r->a) || untimed(r->b))
    return false;
  *ratio = ((double)r->b->total / (double)r->b->count) /
           ((double)r->a->total / (double)r->a->count);
  return true;
}

static void json_devstat(pi_sbuf *b, const vw_dev_stat *d)
{
  if (!d)
    pi_sbuf_puts(b, "null");
  else
    pi_sbuf_printf(b, "{\"launches\":%lld,\"total_ns\":%lld,\"mean_ns\":%lld}",
                   (long long)d->count, (long long)d->total, (long long)d->mean);
}

/* "device_times": null when neither session has them; else which have them
 * and, when both do, the kernels. */
static void devcmp_json(pi_sbuf *b, const vw_session *a, const vw_session *b2)
{
  devcmp c;
  devcmp_compute(a, b2, &c);
  pi_sbuf_puts(b, ",\"device_times\":");
  if (!c.ok || (!c.has_a && !c.has_b)) {
    pi_sbuf_puts(b, "null");
    devcmp_free(&c);
    return;
  }
  pi_sbuf_printf(b, "{\"a\":%s,\"b\":%s,\"counted\":false,\"kernels\":[",
                 c.has_a ? "true" : "false", c.has_b ? "true" : "false");
  for (size_t i = 0; i < c.n; i++) {
    const devcmp_row *r = &c.rows[i];
    double ratio;
    pi_sbuf_puts(b, i ? ",{\"kernel\":" : "{\"kernel\":");
    vw_put_json_str(b, kernel_name(r->name));
    pi_sbuf_puts(b, ",\"a\":");
    json_devstat(b, r->a);
    pi_sbuf_puts(b, ",\"b\":");
    json_devstat(b, r->b);
    if (devcmp_ratio(r, &ratio))
      pi_sbuf_printf(b, ",\"ratio\":%.6g}", ratio);
    else
      pi_sbuf_puts(b, ",\"ratio\":null}");
  }
  pi_sbuf_puts(b, "]}");
  devcmp_free(&c);
}

static void print_devcmp(const vw_session *a, const vw_session *b, const vw_colors *k)
{
  devcmp c;
  devcmp_compute(a, b, &c);
  if (!c.ok) {
    printf("device time per kernel: not shown (out of memory)\n");
  } else if (c.has_a != c.has_b) {
    printf("device times: only %s has them (record both with pitrace record --profile to "
           "compare the kernels' device times)\n", c.has_a ? "A" : "B");
  } else if (c.has_a) {
    printf("\n%sdevice time per kernel%s (shown, not compared: timing is never a difference)\n",
           k->bold, k->off);
    printf("%s%-38s %10s %11s %11s %10s %11s %11s %9s%s\n", k->bold, "kernel", "launches A",
           "device A", "mean A", "launches B", "device B", "mean B", "B/A mean", k->off);
    if (!c.n)
      printf("(no kernel launches)\n");
    bool untimed_side[2] = {false, false};
    for (size_t i = 0; i < c.n; i++) {
      const devcmp_row *r = &c.rows[i];
      untimed_side[0] |= untimed(r->a);
      untimed_side[1] |= untimed(r->b);
      char d[4][32], ratio_text[32] = "-";
      double ratio;
      if (devcmp_ratio(r, &ratio))
        snprintf(ratio_text, sizeof ratio_text, "%.3g", ratio);
      printf("%-38s %10lld %11s %11s %10lld %11s %11s %9s\n", kernel_name(r->name),
             r->a ? (long long)r->a->count : 0LL, r->a ? vw_dur(d[0], r->a->total) : "-",
             r->a ? vw_dur(d[1], r->a->mean) : "-", r->b ? (long long)r->b->count : 0LL,
             r->b ? vw_dur(d[2], r->b->total) : "-", r->b ? vw_dur(d[3], r->b->mean) : "-",
             ratio_text);
    }
    if (untimed_side[0] || untimed_side[1])
      printf("%s's device times are under %d ns, shorter than any kernel takes: the driver did "
             "not time its commands (no ratio made from them)\n",
             untimed_side[0] && untimed_side[1] ? "A's and B" : untimed_side[0] ? "A" : "B",
             VW_UNTIMED_NS);
  }
  devcmp_free(&c);
}

/* ---- Output ----------------------------------------------------------------------- */

static void json_side(pi_sbuf *b, const char *key, const vw_session *s, size_t calls)
{
  pi_sbuf_printf(b, "\"%s\":{\"path\":", key);
  vw_put_json_str(b, s->path);
  pi_sbuf_printf(b, ",\"session\":%lld,\"calls\":%zu,\"command\":", (long long)s->id,
                 calls);
  vw_put_json_str(b, s->info.command);
  pi_sbuf_puts(b, "}");
}

void vw_diff_json(pi_sbuf *b, const vw_session *a, const vw_session *b2, const vw_diff *d,
                  const char *paired_by)
{
  pi_sbuf_puts(b, "{");
  if (paired_by)
    pi_sbuf_printf(b, "\"paired_by\":\"%s\",", paired_by);
  json_side(b, "a", a, d->calls_a);
  pi_sbuf_puts(b, ",");
  json_side(b, "b", b2, d->calls_b);
  pi_sbuf_printf(b, ",\"aligned\":\"%s\",\"same\":%s,\"summary\":{\"matched\":%zu",
                 d->per_thread ? "per thread" : "globally", vw_diff_total(d) ? "false" : "true",
                 d->matched);
  for (int k = 0; k < VD_KINDS; k++)
    pi_sbuf_printf(b, ",\"%s\":%zu", vw_diff_kind_name((vw_diff_kind)k), d->count[k]);
  pi_sbuf_printf(b, ",\"ignored\":%zu,\"data_only_a\":%zu,\"data_only_b\":%zu},"
                 "\"differences\":[", d->ignored, d->data_only[0], d->data_only[1]);
  for (size_t i = 0; i < d->n; i++) {
    const vw_diff_item *it = &d->v[i];
    char name[32];
    pi_sbuf_printf(b, "%s{\"kind\":\"%s\",\"counted\":%s,\"seq_a\":%lld,\"seq_b\":%lld,"
                   "\"api\":\"%s\",\"what\":", i ? "," : "", vw_diff_kind_name(it->kind),
                   vw_diff_counts(it->kind) ? "true" : "false", (long long)it->seq_a,
                   (long long)it->seq_b, vw_api_name(it->api, name));
    vw_put_json_str(b, it->what);
    pi_sbuf_puts(b, ",\"a\":");
    vw_put_json_str(b, it->a);
    pi_sbuf_puts(b, ",\"b\":");
    vw_put_json_str(b, it->b);
    pi_sbuf_puts(b, "}");
  }
  pi_sbuf_puts(b, "]");
  devcmp_json(b, a, b2);
  pi_sbuf_puts(b, "}\n");
}

static void print_item(const vw_diff_item *it, const vw_colors *k)
{
  char sa[24] = "", sb[24] = "", name[32];
  if (it->seq_a >= 0)
    snprintf(sa, sizeof sa, "A %lld", (long long)it->seq_a);
  if (it->seq_b >= 0)
    snprintf(sb, sizeof sb, "B %lld", (long long)it->seq_b);
  switch (it->kind) {
  case VD_ONLY_A:
  case VD_ONLY_B: {
    bool a = it->kind == VD_ONLY_A;
    printf("%s%c %-9s %-9s %s%s\n", a ? k->red : k->green, a ? '-' : '+', sa, sb, it->a, k->off);
    return;
  }
  case VD_REPLAY:
  case VD_TEARDOWN: /* listed, not counted */
    printf("%s= %-9s %-9s %s  [%s]%s\n", k->dim, sa, sb, it->a, it->what, k->off);
    return;
  case VD_ORDER:
    printf("%s~%s %-9s %-9s %s: order: %s\n", k->yellow, k->off, sa, sb,
           vw_api_name(it->api, name), it->what);
    return;
  default:
    printf("%s~%s %-9s %-9s %s: %s%s%s: %s%s%s vs %s%s%s\n", k->yellow, k->off, sa, sb,
           vw_api_name(it->api, name), vw_diff_kind_name(it->kind), *it->what ? " " : "",
           it->what, k->red, it->a, k->off, k->green, it->b, k->off);
  }
}

static void print_text(const vw_session *a, const vw_session *b, const vw_diff *d)
{
  vw_colors k = vw_colors_for(stdout);
  /* Each on its line, as sessions prints them (python3 -c "..." has newlines). */
  char ca[sizeof a->info.command], cb[sizeof b->info.command];
  snprintf(ca, sizeof ca, "%s", a->info.command);
  snprintf(cb, sizeof cb, "%s", b->info.command);
  printf("%s--- A: %s session %lld: %s (%zu calls)%s\n", k.bold, a->path, (long long)a->id,
         pt_one_line(ca), d->calls_a, k.off);
  printf("%s+++ B: %s session %lld: %s (%zu calls)%s\n", k.bold, b->path, (long long)b->id,
         pt_one_line(cb), d->calls_b, k.off);
  for (size_t i = 0; i < d->n; i++)
    print_item(&d->v[i], &k);
  printf("summary: %zu matched calls (aligned %s); only in A %zu, only in B %zu; differences: "
         "%zu argument, %zu result, %zu info, %zu data, %zu note, %zu order",
         d->matched, d->per_thread ? "per thread" : "globally", d->count[VD_ONLY_A],
         d->count[VD_ONLY_B], d->count[VD_ARG], d->count[VD_RESULT], d->count[VD_INFO],
         d->count[VD_DATA], d->count[VD_NOTE], d->count[VD_ORDER]);
  if (d->count[VD_REPLAY] || d->count[VD_TEARDOWN])
    printf("; not counted: %zu replay's own, %zu teardown", d->count[VD_REPLAY],
           d->count[VD_TEARDOWN]);
  if (d->ignored)
    printf("; %zu left out by --ignore/--only", d->ignored);
  if (d->data_only[0] || d->data_only[1])
    printf("; not compared: %zu payloads only A recorded, %zu only B (SYCL_PI_RECORD_DATA, "
           "SYCL_PI_RECORD_DATA_CAP)", d->data_only[0], d->data_only[1]);
  printf(": %s\n", vw_diff_total(d) ? "different" : "same");
  print_devcmp(a, b, &k);
}

/* The values of every --ignore or --only (repeatable; pt_parse keeps the
 * last) into terms. False after a one-line error. */
static bool collect_terms(int argc, char **argv, const char *option, vw_diff_term **terms,
                          size_t *n)
{
  size_t len = strlen(option);
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    if (strcmp(argv[i], "--") == 0)
      break;
    if (strcmp(argv[i], option) == 0 && i + 1 < argc)
      v = argv[++i];
    else if (strncmp(argv[i], option, len) == 0 && argv[i][len] == '=')
      v = argv[i] + len + 1;
    else if (argv[i][0] == '-' && argv[i][1] == '-' && strchr(argv[i], '=') == NULL &&
             (strcmp(argv[i], "--session-a") == 0 || strcmp(argv[i], "--session-b") == 0 ||
              strcmp(argv[i], "--ignore") == 0 || strcmp(argv[i], "--only") == 0))
      i++; /* another option's value */
    if (!v)
      continue;
    char err[512];
    if (!*v) {
      pt_verb_error("diff", "%s wants a pattern (pitrace diff --help)", option);
      return false;
    }
    if (!vw_diff_terms_parse(option, v, terms, n, err, sizeof err)) {
      pt_verb_error("diff", "%s", *err ? err : "out of memory");
      return false;
    }
  }
  return true;
}

/* Compares two open sessions and prints the comparison (text, or JSON
 * onto json when not NULL): 0 same, 1 different, 2 could not. */
static int diff_pair(vw_session *a, vw_session *b, const vw_diff_opts *o, pi_sbuf *json,
                     const char *paired_by)
{
  vw_diff d;
  if (!vw_diff_compute(a, b, o, &d)) {
    if (d.why[0]) /* else told */
      pt_verb_error("diff", "%s", d.why);
    return 2;
  }
  vw_diff_filter(&d, o);
  if (json)
    vw_diff_json(json, a, b, &d, paired_by);
  else
    print_text(a, b, &d);
  int rc = vw_diff_total(&d) ? 1 : 0;
  vw_diff_free(&d);
  return rc;
}

/* The session file `path` stands for (itself, or a directory's one), by
 * device and inode; false when there is none to tell. */
static bool file_of(const char *path, struct stat *st)
{
  if (!vw_is_dir(path))
    return stat(path, st) == 0;
  char *name = NULL, err[256];
  size_t n = 0;
  bool ok = pt_session_files(path, &name, 1, &n, err, sizeof err) && n == 1 &&
            stat(name, st) == 0;
  free(n ? name : NULL);
  return ok;
}

/* pitrace diff of two session files (or directories of one each). */
static int diff_files(const char *pa, const char *pb, int64_t sa, int64_t sb,
                      const vw_diff_opts *o, bool json)
{
  /* One session named twice: read once, as it is at one moment. Read as
   * two, each pass over it saw the calls a process still recording had
   * stored by then: the later passes more ("only in B"). */
  struct stat fa, fb;
  bool one = sa == sb && file_of(pa, &fa) && file_of(pb, &fb) && fa.st_dev == fb.st_dev &&
             fa.st_ino == fb.st_ino;
  vw_session a, b;
  /* Neither session is held: the diff reads each twice (VW_STREAM). */
  bool open_a = vw_session_open("diff", pa, sa, VW_STREAM | VW_NOTES | VW_WHOLE |
                                (one ? VW_SNAPSHOT : 0),
                                &a);
  if (!open_a || (!one && !vw_session_open("diff", pb, sb, VW_STREAM | VW_NOTES | VW_WHOLE, &b))) {
    if (open_a)
      vw_session_close(&a);
    return 2;
  }
  pi_sbuf out;
  pi_sbuf_init(&out, NULL, 0);
  int rc = diff_pair(&a, one ? &a : &b, o, json ? &out : NULL, NULL);
  if (json && rc != 2)
    vw_flush(&out, stdout);
  pi_sbuf_free(&out);
  vw_session_close(&a);
  if (!one)
    vw_session_close(&b);
  return rc;
}

/* How many sessions `path` stands for: a directory's (2 for two files or
 * more, however many they hold), 1 for anything else (a file, whose
 * --session-a/-b picks one, or what pt_open will say is wrong with it). */
static size_t sessions_in(const char *path)
{
  if (!vw_is_dir(path))
    return 1;
  char *names[2], err[256];
  size_t n = 0, count = 0;
  if (!pt_session_files(path, names, 2, &n, err, sizeof err))
    return 0;
  count = n;
  /* One file may hold several sessions (a process that exec'd another):
   * the directory's sessions are then paired by command too (its last
   * alone was compared, "same" whatever the others held). */
  pt_db db;
  if (n == 1 && pt_open(names[0], false, &db, err, sizeof err)) {
    free(pt_sessions(&db, &count, err, sizeof err));
    pt_close(&db);
  }
  for (size_t i = 0; i < n && i < 2; i++)
    free(names[i]);
  return count;
}

/* A command's program (its first word, `*len` bytes) and its number of
 * words (the recorder joins a process's arguments with spaces). */
static size_t command_words(const char *cmd, size_t *len)
{
  *len = strcspn(cmd, " ");
  size_t n = 0;
  for (const char *p = cmd; *p;) {
    p += strspn(p, " ");
    if (*p)
      n++;
    p += strcspn(p, " ");
  }
  return n;
}

/* How many of the last components of two programs' paths (their first
 * `la` and `lb` bytes) are equal: 1 for ../build/bin/vadd against
 * /tmp/x/bin/vadd's "vadd"... 2 with "bin" too. */
static size_t equal_path_tail(const char *a, size_t la, const char *b, size_t lb)
{
  size_t n = 0;
  while (la && lb) {
    size_t ca = 0, cb = 0; /* the last component's length */
    while (ca < la && a[la - 1 - ca] != '/')
      ca++;
    while (cb < lb && b[lb - 1 - cb] != '/')
      cb++;
    if (ca != cb || strncmp(a + la - ca, b + lb - cb, ca) != 0)
      break;
    n++;
    la -= ca + (ca < la); /* past the component and its '/' */
    lb -= cb + (cb < lb);
  }
  return n;
}

/* How many path components two commands' programs share at their ends
 * (0: not the same program). */
static size_t program_tail(const char *a, const char *b)
{
  size_t la, lb;
  command_words(a, &la);
  command_words(b, &lb);
  return equal_path_tail(a, la, b, lb);
}

/* Whether two commands run the same program with as many arguments (a
 * temporary path, a pid or a seed among them differing): the same name,
 * wherever it lies (two builds' bin/vadd). */
static bool same_program(const char *a, const char *b)
{
  size_t la, lb;
  size_t wa = command_words(a, &la), wb = command_words(b, &lb);
  return wa == wb && equal_path_tail(a, la, b, lb) > 0;
}

/* How many of two commands' words are equal, word by word. */
static size_t equal_words(const char *a, const char *b)
{
  size_t n = 0;
  for (;;) {
    a += strspn(a, " ");
    b += strspn(b, " ");
    if (!*a || !*b)
      return n;
    size_t la = strcspn(a, " "), lb = strcspn(b, " ");
    n += la == lb && strncmp(a, b, la) == 0;
    a += la;
    b += lb;
  }
}

/* The untaken session of B that A's command `ca` pairs with in `pass`
 * (B->n: none): the first with the same command; then, by program, the
 * one whose arguments agree most with ca's, then whose program's path
 * agrees most at its end, the first of those. */
static size_t pair_in(const vw_set *B, const bool *taken, const char *ca, int pass)
{
  size_t best = B->n, best_equal = 0, best_tail = 0;
  for (size_t j = 0; j < B->n; j++) {
    const char *cb = B->s[j].info.command;
    if (taken[j] || !(pass ? same_program(ca, cb) : strcmp(ca, cb) == 0))
      continue;
    if (!pass)
      return j;
    size_t e = equal_words(ca, cb), t = program_tail(ca, cb);
    if (best == B->n || e > best_equal || (e == best_equal && t > best_tail)) {
      best = j;
      best_equal = e;
      best_tail = t;
    }
  }
  return best;
}

/* pitrace diff of two record directories (pitrace record -o DIR) of
 * several processes each. Sessions pair in two passes, each in start
 * order (a program run twice pairs first with first): by the same
 * command; then those left, by the same program with as many arguments
 * (a CI job's temporary paths differ from run to run), each with the one
 * whose arguments agree most (a parallel job's processes start in
 * another order each run), which the pair's header says. Each pair is
 * compared; sessions neither pass pairs are listed. 0 when every session
 * paired and every pair is the same. */
static int diff_dirs(const char *pa, const char *pb, int64_t sa, int64_t sb,
                     const vw_diff_opts *o, bool json)
{
  if (sa >= 0 || sb >= 0) {
    pt_verb_error("diff", "--session-a and --session-b pick a session of a file, and %s and %s "
                  "are record directories: their sessions pair by command", pa, pb);
    return 2;
  }
  if (!vw_is_dir(pa) || !vw_is_dir(pb)) {
    pt_verb_error("diff", "%s is a record directory of several sessions and %s is not: give two "
                  "record directories, or a session file of each",
                  vw_is_dir(pa) ? pa : pb, vw_is_dir(pa) ? pb : pa);
    return 2;
  }
  vw_set *A = calloc(1, sizeof *A), *B = calloc(1, sizeof *B);
  int rc = 2;
  if (!A || !B)
    pt_verb_error("diff", "out of memory");
  else if (vw_set_open_dir("diff", A, pa, VW_STREAM | VW_NOTES, 0) &&
           vw_set_open_dir("diff", B, pb, VW_STREAM | VW_NOTES, 1))
    rc = 0;
  /* B's session paired with each of A's (by index; -1: none), and how. */
  size_t na = rc != 2 ? A->n : 0, nb = rc != 2 ? B->n : 0;
  long *pair_of = malloc((na + 1) * sizeof *pair_of);
  bool *by_program = calloc(na + 1, sizeof *by_program), *taken = calloc(nb + 1, sizeof *taken);
  if (rc != 2 && (!pair_of || !by_program || !taken)) {
    pt_verb_error("diff", "out of memory pairing %zu and %zu sessions", na, nb);
    rc = 2;
  }
  for (size_t i = 0; pair_of && i < na; i++)
    pair_of[i] = -1;
  for (int pass = 0; rc != 2 && pass < 2; pass++)
    for (size_t i = 0; i < A->n; i++) {
      if (pair_of[i] >= 0)
        continue;
      size_t j = pair_in(B, taken, A->s[i].info.command, pass);
      if (j < B->n) {
        taken[j] = true;
        pair_of[i] = (long)j;
        by_program[i] = pass == 1;
      }
    }
  size_t pairs = 0, same = 0, programs = 0;
  pi_sbuf out;
  pi_sbuf_init(&out, NULL, 0);
  if (json)
    pi_sbuf_puts(&out, "{\"pairs\":[");
  for (size_t i = 0; rc != 2 && i < A->n; i++) {
    if (pair_of[i] < 0)
      continue;
    vw_session *b = &B->s[pair_of[i]];
    if (json && pairs)
      pi_sbuf_puts(&out, ",");
    if (!json)
      printf("%s=== pair %zu: pid %lld in A, pid %lld in B%s\n", pairs ? "\n" : "", pairs + 1,
             (long long)A->s[i].info.pid, (long long)b->info.pid,
             by_program[i] ? " (paired by program: their commands differ)" : "");
    int r = diff_pair(&A->s[i], b, o, json ? &out : NULL, by_program[i] ? "program" : "command");
    vw_session_rest(&A->s[i]); /* a CI job's hundreds: only the pair compared is open */
    vw_session_rest(b);
    pairs++;
    programs += by_program[i];
    same += r == 0;
    rc = r > rc ? r : rc;
  }
  size_t only_b = 0;
  for (size_t j = 0; rc != 2 && j < B->n; j++)
    only_b += !taken[j];
  size_t only_a = rc != 2 ? A->n - pairs : 0;
  if (rc != 2 && json) {
    for (int side = 0; side < 2; side++) {
      pi_sbuf_puts(&out, side ? "],\"only_b\":[" : "],\"only_a\":[");
      const vw_set *S = side ? B : A;
      bool first = true;
      for (size_t i = 0; i < S->n; i++) {
        if (side ? taken[i] : pair_of[i] >= 0)
          continue;
        pi_sbuf_printf(&out, "%s{\"path\":", first ? "" : ",");
        vw_put_json_str(&out, S->s[i].path);
        pi_sbuf_printf(&out, ",\"session\":%lld,\"pid\":%lld,\"command\":",
                       (long long)S->s[i].id, (long long)S->s[i].info.pid);
        vw_put_json_str(&out, S->s[i].info.command);
        pi_sbuf_puts(&out, "}");
        first = false;
      }
    }
    pi_sbuf_printf(&out, "],\"same\":%s}\n", rc == 0 && !only_a && !only_b ? "true" : "false");
    vw_flush(&out, stdout);
  } else if (rc != 2) {
    for (int side = 0; side < 2; side++) {
      const vw_set *S = side ? B : A;
      for (size_t i = 0; i < S->n; i++)
        if (!(side ? taken[i] : pair_of[i] >= 0)) {
          char command[sizeof S->s[i].info.command];
          snprintf(command, sizeof command, "%s", S->s[i].info.command);
          printf("%c only in %c: %s session %lld: pid %lld: %s\n", side ? '+' : '-',
                 side ? 'B' : 'A', S->s[i].path, (long long)S->s[i].id,
                 (long long)S->s[i].info.pid, pt_one_line(command));
        }
    }
    printf("directories: %zu %s of sessions compared by command", pairs,
           pairs == 1 ? "pair" : "pairs");
    if (programs)
      printf(" (%zu of them by program: their commands differ)", programs);
    printf(", %zu same, %zu different; only in A %zu, only in B %zu: %s\n", same, pairs - same,
           only_a, only_b, rc == 0 && !only_a && !only_b ? "same" : "different");
  }
  if (rc == 0 && (only_a || only_b))
    rc = 1;
  free(pair_of);
  free(by_program);
  free(taken);
  pi_sbuf_free(&out);
  if (A)
    vw_set_close(A);
  if (B)
    vw_set_close(B);
  free(A);
  free(B);
  return rc;
}

int pt_diff(int argc, char **argv)
{
  int64_t sa = -1, sb = -1;
  bool json = false;
  vw_diff_opts o = {.tolerance = -1};
  const char *ignore_last = NULL, *only_last = NULL;
  const pt_opt opts[] = {{"--session-a", PT_OPT_INT, &sa},    {"--session-b", PT_OPT_INT, &sb},
                         {"--json", PT_OPT_FLAG, &json},      {"--no-info", PT_OPT_FLAG, &o.no_info},
                         {"--tolerance", PT_OPT_REAL, &o.tolerance}, {"--f64", PT_OPT_FLAG, &o.f64},
                         {"--ignore", PT_OPT_STRS, &ignore_last},
                         {"--only", PT_OPT_STRS, &only_last},
                         {NULL, PT_OPT_FLAG, NULL}};
  pt_args args;
  int rc = pt_parse(argc, argv, usage, opts, 2, 2, &args);
  if (rc)
    return rc == 1 ? 0 : 2;
  if (o.f64 && o.tolerance < 0) {
    pt_verb_error("diff", "--f64 says how --tolerance compares: give --tolerance X with it");
    return 2;
  }
  vw_diff_term *ignore = NULL, *only = NULL;
  size_t nignore = 0, nonly = 0;
  if (!collect_terms(argc, argv, "--ignore", &ignore, &nignore) ||
      !collect_terms(argc, argv, "--only", &only, &nonly)) {
    vw_diff_terms_free(ignore, nignore);
    vw_diff_terms_free(only, nonly);
    return 2;
  }
  bool keeps = !nonly;
  for (size_t i = 0; i < nonly && !keeps; i++)
    keeps = only_term_keeps(&only[i], ignore, nignore);
  if (!keeps) { /* said "same" whatever the sessions held */
    pt_verb_error("diff", "--only keeps nothing that --ignore does not leave out: nothing would "
                          "be compared");
    vw_diff_terms_free(ignore, nignore);
    vw_diff_terms_free(only, nonly);
    return 2;
  }
  o.ignore = ignore;
  o.nignore = nignore;
  o.only = only;
  o.nonly = nonly;
  if (sessions_in(args.pos[0]) > 1 || sessions_in(args.pos[1]) > 1)
    rc = diff_dirs(args.pos[0], args.pos[1], sa, sb, &o, json);
  else
    rc = diff_files(args.pos[0], args.pos[1], sa, sb, &o, json);
  vw_diff_terms_free(ignore, nignore);
  vw_diff_terms_free(only, nonly);
  return rc;
}
