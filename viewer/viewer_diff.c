/*
 * viewer_diff.c: `pitrace diff`: compares two sessions call by call.
 *
 * The calls are aligned on their API (per thread when both sessions have as
 * many threads, else globally; viewer_align.c). Handles are compared by
 * role: a handle is named by the row of the aligned sequence whose call
 * created it (or first passed it) and its rank among that call's handles,
 * so two runs match whatever ids and addresses they got. Raw addresses,
 * native handles and timings (durations, profiling info, device timers)
 * never count. Reported: calls only in one session, argument, result and
 * info-query differences, data differences (first differing byte), and
 * differences in the runtime's notes (link decisions, spec constants).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "pitrace_viewer.h"
#include "viewer_common.h"

static const char usage[] =
    "usage: pitrace diff A.db B.db [--session-a N] [--session-b N] [--json] [--no-info]\n"
    "\n"
    "Compares two sessions call by call: calls present in only one, argument,\n"
    "result and info-query differences, read-back and other data differences (the\n"
    "first differing byte), and differences in link decisions and spec constants.\n"
    "Handles compare by the call that made them, not by id; addresses and timings\n"
    "never count. Exit status: 0 same, 1 different, 2 bad input.\n"
    "\n"
    "  --session-a N, --session-b N   the sessions (default: each file's last)\n"
    "  --json        the comparison as JSON\n"
    "  --no-info     leave out info queries (*GetInfo results and the calls)\n";

typedef struct diff_row {
  int64_t ia, ib; /* call indexes, -1 for a gap */
} diff_row;

typedef struct dctx {
  vw_session *a, *b;
  bool no_info;
  vw_diff *d;
  diff_row *rows;
  size_t nrows, caprows;
  int64_t *row_a, *row_b; /* call index -> row */
  vw_map role_a, role_b;  /* handle id -> role */
} dctx;

/* ---- Items ------------------------------------------------------------------------ */

const char *vw_diff_kind_name(vw_diff_kind k)
{
  static const char *const names[VD_KINDS] = {"only_a", "only_b", "argument", "result",
                                              "info", "data", "note"};
  return k < VD_KINDS ? names[k] : "?";
}

static void add(vw_diff *d, vw_diff_kind kind, const pt_call *ca, const pt_call *cb,
                const char *what, const char *a, const char *b)
{
  vw_diff_item *v = pt_grow(d->v, &d->cap, d->n, sizeof *v);
  if (!v)
    return;
  d->v = v;
  d->v[d->n++] = (vw_diff_item){kind, ca ? ca->seq : -1, cb ? cb->seq : -1,
                                ca ? ca->api : cb->api, strdup(what), strdup(a ? a : ""),
                                strdup(b ? b : "")};
  d->count[kind]++;
}

void vw_diff_free(vw_diff *d)
{
  for (size_t i = 0; i < d->n; i++) {
    free(d->v[i].what);
    free(d->v[i].a);
    free(d->v[i].b);
  }
  free(d->v);
  memset(d, 0, sizeof *d);
}

size_t vw_diff_total(const vw_diff *d)
{
  size_t n = 0;
  for (int k = 0; k < VD_KINDS; k++)
    n += d->count[k];
  return n;
}

/* ---- Alignment -------------------------------------------------------------------- */

static void push_row(dctx *x, int64_t ia, int64_t ib)
{
  diff_row *v = pt_grow(x->rows, &x->caprows, x->nrows, sizeof *v);
  if (!v)
    return;
  x->rows = v;
  x->rows[x->nrows++] = (diff_row){ia, ib};
}

/* Aligns the calls ia[0..na) of A with ib[0..nb) of B into rows. */
static bool align_part(dctx *x, const size_t *ia, size_t na, const size_t *ib, size_t nb)
{
  uint32_t *ka = malloc((na ? na : 1) * sizeof *ka), *kb = malloc((nb ? nb : 1) * sizeof *kb);
  int64_t *m = malloc((na ? na : 1) * sizeof *m);
  bool ok = ka && kb && m;
  for (size_t i = 0; ok && i < na; i++)
    ka[i] = x->a->calls.v[ia[i]].api;
  for (size_t j = 0; ok && j < nb; j++)
    kb[j] = x->b->calls.v[ib[j]].api;
  ok = ok && vw_align(ka, na, kb, nb, m);
  size_t j = 0;
  for (size_t i = 0; ok && i < na; i++) {
    while (m[i] >= 0 && j < (size_t)m[i])
      push_row(x, -1, (int64_t)ib[j++]);
    push_row(x, (int64_t)ia[i], m[i] >= 0 ? (int64_t)ib[j++] : -1);
  }
  while (ok && j < nb)
    push_row(x, -1, (int64_t)ib[j++]);
  free(ka);
  free(kb);
  free(m);
  return ok;
}

/* The session's call indexes grouped by thread (in thread order, each in
 * sequence order): order[start[t]..start[t+1]) for the t-th thread. */
static size_t *by_thread(const vw_session *s, size_t **start, size_t *nt)
{
  uint32_t max = 0;
  for (size_t i = 0; i < s->calls.n; i++)
    max = s->calls.v[i].thread > max ? s->calls.v[i].thread : max;
  size_t *count = calloc((size_t)max + 2, sizeof *count);
  size_t *order = malloc((s->calls.n ? s->calls.n : 1) * sizeof *order);
  *start = calloc((size_t)max + 2, sizeof **start);
  if (!count || !order || !*start) {
    free(count);
    free(order);
    free(*start);
    return NULL;
  }
  for (size_t i = 0; i < s->calls.n; i++)
    count[s->calls.v[i].thread]++;
  size_t pos = 0;
  *nt = 0;
  for (uint32_t t = 0; t <= max; t++) { /* threads that made calls, in order */
    if (!count[t])
      continue;
    (*start)[(*nt)++] = pos;
    size_t base = pos;
    for (size_t i = 0; i < s->calls.n; i++)
      if (s->calls.v[i].thread == t)
        order[base++] = i;
    pos = base;
  }
  (*start)[*nt] = pos;
  free(count);
  return order;
}

static bool align(dctx *x)
{
  size_t *sa, *sb, nta, ntb;
  size_t *oa = by_thread(x->a, &sa, &nta), *ob = by_thread(x->b, &sb, &ntb);
  bool ok = oa && ob;
  x->d->per_thread = ok && nta == ntb && nta > 1;
  if (ok && nta != ntb) { /* globally, in sequence order */
    nta = ntb = 1;
    sa[0] = sb[0] = 0;
    sa[1] = x->a->calls.n;
    sb[1] = x->b->calls.n;
    for (size_t i = 0; i < x->a->calls.n; i++)
      oa[i] = i;
    for (size_t i = 0; i < x->b->calls.n; i++)
      ob[i] = i;
  }
  for (size_t t = 0; ok && t < nta; t++)
    ok = align_part(x, oa + sa[t], sa[t + 1] - sa[t], ob + sb[t], sb[t + 1] - sb[t]);
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

/* ---- Roles of handles ------------------------------------------------------------- */

static void introduce(vw_map *roles, int64_t id, int64_t row, int *rank)
{
  int64_t r;
  if (id && !vw_map_get(roles, id, &r))
    vw_map_put(roles, id, row * 64 + (*rank < 63 ? *rank : 63));
  (*rank)++;
}

static void introduce_text(vw_map *roles, const char *s, int64_t row, int *rank)
{
  uint8_t kind;
  int64_t id, off;
  size_t len;
  while (s && *s) {
    if (vw_parse_ref(s, &kind, &id, &off, &len)) {
      introduce(roles, id, row, rank);
      s += len;
    } else {
      s++;
    }
  }
}

/* The handles (and USM and mapped pointers) a call names, in order. */
static void introduce_call(vw_map *roles, const pt_call *c, int64_t row)
{
  const pi_api_desc *api = pi_api_get(c->api);
  int rank = 0;
  for (unsigned i = 0; api && i < api->nparams; i++) {
    const pi_param_desc *p = &api->params[i];
    const pt_json *j = pt_json_at(c->args, i);
    if (j && j->type == PJ_STRING && p->kind != PI_PK_STRING)
      introduce_text(roles, j->u.s, row, &rank);
    else if (p->kind == PI_PK_HANDLE && j && j->type == PJ_INT)
      introduce(roles, j->u.i, row, &rank);
    else if (p->kind == PI_PK_HANDLES && j && j->type == PJ_ARRAY)
      for (uint32_t k = 0; k < j->n; k++)
        introduce(roles, pt_json_int(j->u.items[k], 0), row, &rank);
  }
}

static void assign_roles(dctx *x)
{
  for (size_t r = 0; r < x->nrows; r++) {
    if (x->rows[r].ia >= 0)
      x->row_a[x->rows[r].ia] = (int64_t)r;
    if (x->rows[r].ib >= 0)
      x->row_b[x->rows[r].ib] = (int64_t)r;
  }
  for (size_t i = 0; i < x->a->calls.n; i++)
    introduce_call(&x->role_a, &x->a->calls.v[i], x->row_a[i]);
  for (size_t i = 0; i < x->b->calls.n; i++)
    introduce_call(&x->role_b, &x->b->calls.v[i], x->row_b[i]);
}

static void role_text(pi_sbuf *b, uint8_t kind, int64_t id, int64_t off, void *ctx)
{
  int64_t r;
  pi_sbuf_printf(b, "%s@", pi_object_kind_name(kind));
  if (vw_map_get(ctx, id, &r))
    pi_sbuf_printf(b, "%lld", (long long)r);
  else
    pi_sbuf_printf(b, "?%lld", (long long)id);
  if (off)
    pi_sbuf_printf(b, "+%lld", (long long)off);
}

/* ---- Comparing one pair of calls -------------------------------------------------- */

/* The info parameter of an API, or -1. */
static int info_param(const pi_api_desc *api)
{
  for (unsigned i = 0; i < api->nparams; i++)
    if (api->params[i].kind == PI_PK_INFO)
      return (int)i;
  return -1;
}

/* Whether parameter i belongs to an info query (the result, its sizes). */
static bool is_info(const pi_api_desc *api, unsigned i)
{
  int q = info_param(api);
  return q >= 0 && ((int)i == q || (int)i == api->params[q].size_ret ||
                    (int)i == api->params[q].count.ref);
}

/* Values that are timings (the outputs of a `timing` API): never
 * differences. */
static bool is_timing(const pi_api_desc *api, unsigned i)
{
  return (api->flags & PI_API_F_TIMING) && api->params[i].dir != PI_DIR_IN;
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
  if (is_timing(api, i) || (x->no_info && is_info(api, i)))
    return;
  vw_textopt ra = {role_text, &x->role_a, true, 4096, 1u << 20};
  vw_textopt rb = {role_text, &x->role_b, true, 4096, 1u << 20};
  pi_sbuf na, nb, ta, tb, what;
  char sa[512], sb[512]; /* most values fit: no allocation */
  pi_sbuf_init(&na, sa, sizeof sa);
  pi_sbuf_init(&nb, sb, sizeof sb);
  vw_arg_text(&na, &ra, api, i, ca);
  vw_arg_text(&nb, &rb, api, i, cb);
  if (strcmp(na.p, nb.p) != 0) {
    vw_textopt show = {NULL, NULL, false, 16, 200};
    pi_sbuf_init(&ta, NULL, 0);
    pi_sbuf_init(&tb, NULL, 0);
    pi_sbuf_init(&what, NULL, 0);
    vw_arg_text(&ta, &show, api, i, ca);
    vw_arg_text(&tb, &show, api, i, cb);
    param_label(&what, api, i, ca);
    if (strcmp(ta.p, tb.p) == 0)
      pi_sbuf_puts(&what, " (made by calls that do not correspond)");
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

/* Compares a payload; false when neither side recorded one in that role. */
static bool compare_payload(dctx *x, const pi_param_desc *p, unsigned i, const char *role,
                            unsigned idx, const pt_call *ca, const pt_call *cb)
{
  size_t ga, fa, gb, fb;
  unsigned char *da = pt_data(&x->a->db, x->a->id, ca, i, role, idx, &ga, &fa);
  unsigned char *db = pt_data(&x->b->db, x->b->id, cb, i, role, idx, &gb, &fb);
  if (!da && !db)
    return false;
  size_t n = ga < gb ? ga : gb, off = 0;
  while (da && db && off < n && da[off] == db[off])
    off++;
  if (da && db && (off < n || fa != fb)) {
    char what[256], a[64], b[64], elem[24] = "";
    if (idx)
      snprintf(elem, sizeof elem, " #%u", idx);
    snprintf(what, sizeof what, "%s%s (%s, %zu and %zu bytes): first difference at byte %zu "
             "(32-bit element %zu)", p->name, elem, role, fa, fb, off, off / 4);
    hex_at(a, sizeof a, da, ga, off);
    hex_at(b, sizeof b, db, gb, off);
    add(x->d, VD_DATA, ca, cb, what, a, b);
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

static void compare_notes(dctx *x, const pt_call *ca, const pt_call *cb)
{
  size_t na, nb;
  const pt_note *a = vw_notes_of(x->a, ca->seq, &na), *b = vw_notes_of(x->b, cb->seq, &nb);
  for (size_t k = 0; k < na || k < nb; k++) {
    const pt_note *p = k < na ? &a[k] : NULL, *q = k < nb ? &b[k] : NULL;
    if (!p && !q)
      break;
    if (p && q && strcmp(p->kind, q->kind) == 0 && strcmp(p->text, q->text) == 0 &&
        strcmp(p->value_hex, q->value_hex) == 0)
      continue;
    add(x->d, VD_NOTE, ca, cb, (p ? p : q)->kind, p ? p->text : "(none)",
        q ? q->text : "(none)");
  }
}

static void compare_pair(dctx *x, const pt_call *ca, const pt_call *cb)
{
  x->d->matched++;
  compare_notes(x, ca, cb);
  if (ca->returned != cb->returned || (ca->returned && ca->result != cb->result))
    add(x->d, VD_RESULT, ca, cb, "", vw_result_name(ca), vw_result_name(cb));
  const pi_api_desc *api = pi_api_get(ca->api);
  if (!api || (x->no_info && info_param(api) >= 0))
    return;
  for (unsigned i = 0; i < api->nparams; i++)
    compare_param(x, api, i, ca, cb);
  compare_data(x, api, ca, cb);
}

static void only_in_one(dctx *x, const pt_call *c, bool in_a)
{
  const pi_api_desc *api = pi_api_get(c->api);
  if (x->no_info && api && info_param(api) >= 0)
    return;
  pi_sbuf t;
  pi_sbuf_init(&t, NULL, 0);
  char name[32];
  pi_sbuf_printf(&t, "%s(", vw_api_name(c->api, name));
  if (api)
    vw_args_text(&t, NULL, api, c);
  pi_sbuf_printf(&t, ") = %s", vw_result_name(c));
  add(x->d, in_a ? VD_ONLY_A : VD_ONLY_B, in_a ? c : NULL, in_a ? NULL : c, "call", t.p, "");
  pi_sbuf_free(&t);
}

bool vw_diff_compute(vw_session *a, vw_session *b, bool no_info, vw_diff *d)
{
  memset(d, 0, sizeof *d);
  dctx x = {.a = a, .b = b, .no_info = no_info, .d = d};
  x.row_a = calloc(a->calls.n ? a->calls.n : 1, sizeof *x.row_a);
  x.row_b = calloc(b->calls.n ? b->calls.n : 1, sizeof *x.row_b);
  bool ok = x.row_a && x.row_b && align(&x);
  if (ok)
    assign_roles(&x);
  for (size_t r = 0; ok && r < x.nrows; r++) {
    const diff_row *w = &x.rows[r];
    const pt_call *ca = w->ia >= 0 ? &a->calls.v[w->ia] : NULL;
    const pt_call *cb = w->ib >= 0 ? &b->calls.v[w->ib] : NULL;
    if (ca && cb)
      compare_pair(&x, ca, cb);
    else if (ca || cb)
      only_in_one(&x, ca ? ca : cb, ca != NULL);
  }
  free(x.rows);
  free(x.row_a);
  free(x.row_b);
  vw_map_free(&x.role_a);
  vw_map_free(&x.role_b);
  return ok;
}

/* ---- Output ----------------------------------------------------------------------- */

static void json_side(pi_sbuf *b, const char *key, const vw_session *s)
{
  pi_sbuf_printf(b, "\"%s\":{\"path\":", key);
  vw_put_json_str(b, s->path);
  pi_sbuf_printf(b, ",\"session\":%lld,\"calls\":%zu,\"command\":", (long long)s->id,
                 s->calls.n);
  vw_put_json_str(b, s->info.command);
  pi_sbuf_puts(b, "}");
}

void vw_diff_json(pi_sbuf *b, const vw_session *a, const vw_session *b2, const vw_diff *d)
{
  pi_sbuf_puts(b, "{");
  json_side(b, "a", a);
  pi_sbuf_puts(b, ",");
  json_side(b, "b", b2);
  pi_sbuf_printf(b, ",\"aligned\":\"%s\",\"same\":%s,\"summary\":{\"matched\":%zu",
                 d->per_thread ? "per thread" : "globally", vw_diff_total(d) ? "false" : "true",
                 d->matched);
  for (int k = 0; k < VD_KINDS; k++)
    pi_sbuf_printf(b, ",\"%s\":%zu", vw_diff_kind_name((vw_diff_kind)k), d->count[k]);
  pi_sbuf_puts(b, "},\"differences\":[");
  for (size_t i = 0; i < d->n; i++) {
    const vw_diff_item *it = &d->v[i];
    char name[32];
    pi_sbuf_printf(b, "%s{\"kind\":\"%s\",\"seq_a\":%lld,\"seq_b\":%lld,\"api\":\"%s\",\"what\":",
                   i ? "," : "", vw_diff_kind_name(it->kind), (long long)it->seq_a,
                   (long long)it->seq_b, vw_api_name(it->api, name));
    vw_put_json_str(b, it->what);
    pi_sbuf_puts(b, ",\"a\":");
    vw_put_json_str(b, it->a);
    pi_sbuf_puts(b, ",\"b\":");
    vw_put_json_str(b, it->b);
    pi_sbuf_puts(b, "}");
  }
  pi_sbuf_puts(b, "]}\n");
}

static void print_item(const vw_diff_item *it, const vw_colors *k)
{
  char sa[24] = "", sb[24] = "", name[32];
  if (it->seq_a >= 0)
    snprintf(sa, sizeof sa, "A %lld", (long long)it->seq_a);
  if (it->seq_b >= 0)
    snprintf(sb, sizeof sb, "B %lld", (long long)it->seq_b);
  if (it->kind == VD_ONLY_A || it->kind == VD_ONLY_B) {
    bool a = it->kind == VD_ONLY_A;
    printf("%s%c %-9s %-9s %s%s\n", a ? k->red : k->green, a ? '-' : '+', sa, sb, it->a, k->off);
    return;
  }
  printf("%s~%s %-9s %-9s %s: %s%s%s: %s%s%s vs %s%s%s\n", k->yellow, k->off, sa, sb,
         vw_api_name(it->api, name), vw_diff_kind_name(it->kind), *it->what ? " " : "", it->what,
         k->red, it->a, k->off, k->green, it->b, k->off);
}

static void print_text(const vw_session *a, const vw_session *b, const vw_diff *d)
{
  vw_colors k = vw_colors_for(stdout);
  printf("%s--- A: %s session %lld: %s (%zu calls)%s\n", k.bold, a->path, (long long)a->id,
         a->info.command, a->calls.n, k.off);
  printf("%s+++ B: %s session %lld: %s (%zu calls)%s\n", k.bold, b->path, (long long)b->id,
         b->info.command, b->calls.n, k.off);
  for (size_t i = 0; i < d->n; i++)
    print_item(&d->v[i], &k);
  printf("summary: %zu matched calls (aligned %s); only in A %zu, only in B %zu; differences: "
         "%zu argument, %zu result, %zu info, %zu data, %zu note: %s\n", d->matched,
         d->per_thread ? "per thread" : "globally", d->count[VD_ONLY_A], d->count[VD_ONLY_B],
         d->count[VD_ARG], d->count[VD_RESULT], d->count[VD_INFO], d->count[VD_DATA],
         d->count[VD_NOTE], vw_diff_total(d) ? "different" : "same");
}

int pt_diff(int argc, char **argv)
{
  int64_t sa = -1, sb = -1;
  bool json = false, no_info = false;
  const pt_opt opts[] = {{"--session-a", PT_OPT_INT, &sa}, {"--session-b", PT_OPT_INT, &sb},
                         {"--json", PT_OPT_FLAG, &json}, {"--no-info", PT_OPT_FLAG, &no_info},
                         {NULL, PT_OPT_FLAG, NULL}};
  pt_args args;
  int rc = pt_parse(argc, argv, usage, opts, 2, 2, &args);
  if (rc)
    return rc == 1 ? 0 : 2;
  vw_session a, b;
  if (!vw_session_open("diff", args.pos[0], sa, VW_CALLS | VW_NOTES, &a))
    return 2;
  if (!vw_session_open("diff", args.pos[1], sb, VW_CALLS | VW_NOTES, &b)) {
    vw_session_close(&a);
    return 2;
  }
  vw_diff d;
  if (!vw_diff_compute(&a, &b, no_info, &d)) {
    pt_verb_error("diff", "out of memory comparing the sessions");
    rc = 2;
  } else if (json) {
    pi_sbuf out;
    pi_sbuf_init(&out, NULL, 0);
    vw_diff_json(&out, &a, &b, &d);
    vw_flush(&out, stdout);
    pi_sbuf_free(&out);
  } else {
    print_text(&a, &b, &d);
  }
  if (rc != 2)
    rc = vw_diff_total(&d) ? 1 : 0;
  vw_diff_free(&d);
  vw_session_close(&a);
  vw_session_close(&b);
  return rc;
}
