/*
 * rp_check.c: what a replayed call did against what the recording says.
 * Results must match (for info queries a difference is a note); objects
 * the call created are mapped to their recorded ids; data it wrote must
 * match the recorded data (bitwise, or within --tolerance), checked at once
 * for blocking calls and when the recording captured it for the others;
 * info-query values and other out-values that differ are notes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rpx.h"

/* ---- Data ---------------------------------------------------------------------- */

bool rp_data_equal(const rp_opts *o, const unsigned char *want, const unsigned char *got,
                   size_t n, char *why, size_t whyn)
{
  pt_data_diff d;
  if (pt_data_compare(want, got, n, o->tolerance, o->f64, &d))
    return true;
  size_t w = d.width, ew = d.first * w + w <= n ? w : n - d.first * w;
  char a[64], b[64];
  pt_data_elem_text(a, sizeof a, want + d.first * w, ew);
  pt_data_elem_text(b, sizeof b, got + d.first * w, ew);
  snprintf(why, whyn, "differs from the recording at byte offset %zu (element %zu of %zu-byte "
           "elements): expected %s, got %s; %zu of %zu elements differ%s", d.first * w, d.first,
           w, a, b, d.count, d.elems, o->tolerance >= 0 ? " beyond the tolerance" : "");
  return false;
}

/* Says once that call c's data is not compared (rp_undefined_read). */
static void note_undefined(rp_engine *e, const rp_cc *cc)
{
  rp_note(e, cc->c->seq, "%s: mem#%lld not compared: nothing wrote it since it was made, so "
          "what it holds is undefined", cc->api->name, (long long)rp_arg_int(cc->c, 1, 0));
}

void rp_note_kept(rp_engine *e, const pt_call *c, unsigned i, size_t kept, size_t full)
{
  static const char why[] = "the recording kept no more (SYCL_PI_RECORD_DATA_CAP, "
                            "SYCL_PI_RECORD_DATA=meta, or its data stopped on a full disk)";
  const pi_api_desc *api = rp_api(c);
  if (kept)
    rp_note(e, c->seq, "%s: only the first %zu of the %zu bytes written to parameter %s "
            "compared: %s", api->name, kept, full, api->params[i].name, why);
  else
    rp_note(e, c->seq, "%s: the data written to parameter %s not compared: %s", api->name,
            api->params[i].name, why);
}

/* A read of a buffer the replay filled when it made it (rp_fills): where
 * the replay's bytes still hold the fill, in 4-byte words from the read's
 * start, and the recording's do not, no call wrote them and the recording
 * saw whatever the device's memory held. A copy of `got` with the
 * recording's bytes there, their count in *unwritten; NULL when none. */
static unsigned char *fill_unwritten(const unsigned char *want, const unsigned char *got,
                                     size_t n, size_t *unwritten)
{
  static const unsigned char fill[4] = {RP_FILL_BYTE, RP_FILL_BYTE, RP_FILL_BYTE, RP_FILL_BYTE};
  unsigned char *p = NULL;
  *unwritten = 0;
  for (size_t k = 0; k + 4 <= n; k += 4)
    if (memcmp(got + k, fill, 4) == 0 && memcmp(want + k, fill, 4) != 0) {
      if (!p && !(p = malloc(n)))
        return NULL;
      if (!*unwritten)
        memcpy(p, got, n);
      memcpy(p + k, want + k, 4);
      *unwritten += 4;
    }
  return p;
}

/* Compares n bytes the call wrote into parameter i with the recording. */
static int compare_data(rp_engine *e, const pt_call *c, const char *text, unsigned i,
                        const unsigned char *want, const unsigned char *got, size_t n)
{
  char why[512], what[768];
  atomic_fetch_add(&e->verified, 1);
  if (rp_data_equal(e->o, want, got, n, why, sizeof why))
    return RP_OK;
  const pi_api_desc *api = rp_api(c);
  size_t unwritten = 0;
  unsigned char *known =
      e->fills && rp_filled_read(e->s, c) ? fill_unwritten(want, got, n, &unwritten) : NULL;
  if (known) {
    bool same = rp_data_equal(e->o, want, known, n, why, sizeof why);
    free(known);
    rp_note(e, c->seq, "%s: %zu of the %zu bytes read from mem#%lld not compared: no call wrote "
            "them (the replay made the buffer holding 0x%02x bytes, and they still do), so what "
            "the recording saw there is undefined", api->name, unwritten, n,
            (long long)rp_arg_int(c, 1, 0), RP_FILL_BYTE);
    if (same)
      return RP_OK;
  }
  /* Another device's floating-point results may differ in their last bits. */
  const char *hint = e->other_device && e->o->tolerance < 0
                         ? "\n  (replayed on another device than the recorded one: to compare its "
                           "results as floats within a tolerance, give --tolerance X)"
                         : "";
  snprintf(what, sizeof what, "the data written to parameter %s (%zu bytes) %s%s",
           api->params[i].name, n, why, hint);
  return rp_stop(e, RP_DIVERGED, c, text, what);
}

static int stop_here(rp_engine *e, rp_cc *cc, int status, const char *what)
{
  char *text = rp_call_text(cc->api, cc->argv);
  int st = rp_stop(e, status, cc->c, text, what);
  free(text);
  return st;
}

/* A non-blocking call's data: checked once it is complete. */
static int defer_compare(rp_engine *e, rp_cc *cc, unsigned i, unsigned char *buf,
                         unsigned char *want, size_t size)
{
  rp_pending pd = {.call = cc->c, .position = i, .due = rp_captured_seq(e->s, cc->c, i),
                   .buf = buf, .want = want, .size = size,
                   .text = rp_call_text(cc->api, cc->argv)};
  int ev = cc->api->event;
  if (ev >= 0 && cc->argv[ev] && cc->slot[ev]) {
    pd.event = cc->slot[ev];
    pd.own_event = cc->own_event == ev;
    uint64_t a[1] = {pd.event};
    if (!pd.own_event) {
      rp_own_call(e, "pitrace replay's data check: keeps the event of recorded seq %lld "
                  "to compare its data once complete", (long long)cc->c->seq);
      pi_api_invoke(e->t, PI_API_piEventRetain, a);
    }
  }
  rp_lock(e);
  bool ok = rp_push(&e->pending, &e->npending, &e->cap_pending, sizeof pd, &pd);
  rp_unlock(e);
  if (!ok) {
    free(pd.text);
    return stop_here(e, cc, RP_FAILED, "out of memory");
  }
  return RP_OK;
}

static int check_data(rp_engine *e, rp_cc *cc, unsigned i)
{
  if (!cc->want[i])
    return RP_OK; /* nothing recorded to compare with */
  if (rp_undefined_read(e->s, cc->c)) {
    note_undefined(e, cc);
    return RP_OK;
  }
  if (!rp_call_blocking(cc->api, cc->c))
    return defer_compare(e, cc, i, (unsigned char *)(uintptr_t)cc->argv[i], cc->want[i],
                         cc->want_size[i]);
  char *text = rp_call_text(cc->api, cc->argv);
  int st = compare_data(e, cc->c, text, i, cc->want[i],
                        (const unsigned char *)(uintptr_t)cc->argv[i], cc->want_size[i]);
  free(text);
  return st;
}

static int check_pending_one(rp_engine *e, rp_pending *pd)
{
  if (pd->event) {
    uint64_t wait[2] = {1, (uint64_t)(uintptr_t)&pd->event}, rel[1] = {pd->event};
    rp_own_call(e, "pitrace replay's data check: waits for the event of recorded seq %lld",
                (long long)pd->call->seq);
    pi_api_invoke(e->t, PI_API_piEventsWait, wait);
    rp_own_call(e, "pitrace replay's data check: releases the event of recorded seq %lld",
                (long long)pd->call->seq);
    pi_api_invoke(e->t, PI_API_piEventRelease, rel);
  }
  int st = compare_data(e, pd->call, pd->text, pd->position, pd->want, pd->buf, pd->size);
  free(pd->text);
  return st;
}

int rp_check_pending(rp_engine *e, int64_t seq)
{
  int st = RP_OK;
  for (;;) {
    rp_pending pd;
    bool found = false;
    rp_lock(e);
    for (size_t k = 0; k < e->npending && !found; k++)
      if (seq < 0 || (e->pending[k].due >= 0 && e->pending[k].due <= seq)) {
        pd = e->pending[k];
        e->pending[k] = e->pending[--e->npending];
        found = true;
      }
    rp_unlock(e);
    if (!found)
      return st;
    int one = check_pending_one(e, &pd);
    if (st == RP_OK)
      st = one;
  }
}

/* ---- Values --------------------------------------------------------------------------- */

/* Values that differ on every run: timestamps, native handles, addresses. */
static bool varies(const pi_api_desc *api, const pi_param_desc *p)
{
  return (api->flags & PI_API_F_TIMING) || p->vt == PI_VT_NATIVE || p->vt == PI_VT_PTR;
}

static void note_value(rp_engine *e, rp_cc *cc, unsigned i, uint8_t vt, const pi_enum_desc *en,
                       const void *want, size_t wn, const void *got, size_t gn, bool array)
{
  char s1[256], s2[256];
  pi_sbuf a, b;
  pi_sbuf_init(&a, s1, sizeof s1);
  pi_sbuf_init(&b, s2, sizeof s2);
  pi_format_value(&a, vt, 0, en, want, wn, array);
  pi_format_value(&b, vt, 0, en, got, gn, array);
  rp_note(e, cc->c->seq, "%s: %s was %s when recorded, %s now", cc->api->name,
          cc->api->params[i].name, a.p, b.p);
  pi_sbuf_free(&a);
  pi_sbuf_free(&b);
}

/* An info query's value: handles it names are mapped, other values compared. */
static void check_info(rp_engine *e, rp_cc *cc, unsigned i)
{
  const pi_param_desc *p = &cc->api->params[i];
  const pi_enum_entry *en = pi_enum_lookup(p->en, (int64_t)cc->argv[p->query]);
  const unsigned char *got = (const unsigned char *)(uintptr_t)cc->argv[i];
  size_t size = (size_t)cc->argv[p->count.ref];
  if (p->size_ret >= 0 && cc->argv[p->size_ret] && cc->slot[p->size_ret] < size)
    size = (size_t)cc->slot[p->size_ret];
  if (en && en->vt == PI_VT_HANDLE) {
    uint64_t ids[64];
    size_t n = rp_info_ids(cc->c, i, ids, 64);
    for (size_t k = 0; k < n && (k + 1) * sizeof(void *) <= size; k++) {
      uint64_t live, known;
      memcpy(&live, got + k * sizeof(void *), sizeof live);
      if (!rp_resolve(e, en->obj, ids[k], &known))
        rp_ids_put(e, ids[k], live);
    }
    return;
  }
  if (varies(cc->api, p) || (en && (en->vt == PI_VT_NATIVE || en->vt == PI_VT_PTR)))
    return;
  size_t wn;
  rp_data_status st;
  unsigned char *want = rp_payload(e->s, cc->c, i, "value", 0, &wn, &st);
  /* The recorder keeps only the bytes the answer took (it asks their count
   * where the application did not): without a size returned now, the
   * answer is compared over those, not over the application's whole
   * buffer (a 1024-byte buffer holding "rusticl" was noted as different
   * from itself). */
  bool sized = p->size_ret >= 0 && cc->argv[p->size_ret];
  size_t n = !sized && wn < size ? wn : size;
  if (want && ((sized && wn != size) || wn > size || memcmp(want, got, n) != 0))
    note_value(e, cc, i, en ? en->vt : PI_VT_BYTES, en ? en->en : NULL, want, wn, got, n,
               en && en->is_array);
  free(want);
}

/* A scalar or an array (j, as recorded) the call wrote. */
static void check_numbers(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  const pi_param_desc *p = &cc->api->params[i];
  if (varies(cc->api, p) || !j || j->type == PJ_NULL || !cc->argv[i])
    return;
  size_t w = pi_value_width(p->vt, p->en);
  bool array = j->type == PJ_ARRAY;
  size_t n = array ? j->n : 1;
  unsigned char want[16 * 8];
  if (n > 16)
    n = 16;
  if (array && n > pi_param_extent(p, cc->argv) / w)
    n = pi_param_extent(p, cc->argv) / w; /* no further than the buffer the call got */
  for (size_t k = 0; k < n; k++) {
    uint64_t v = (uint64_t)pt_json_int(array ? j->u.items[k] : j, 0);
    memcpy(want + k * w, &v, w);
  }
  const void *got = (const void *)(uintptr_t)cc->argv[i];
  if (memcmp(want, got, n * w) != 0)
    note_value(e, cc, i, p->vt, p->en, want, n * w, got, n * w, array);
}

/* ---- Objects the call created -------------------------------------------------------- */

static void map_handles(rp_engine *e, const pt_json *j, const void *live, size_t max)
{
  if (!j || j->type != PJ_ARRAY)
    return;
  for (uint32_t k = 0; k < j->n && k < max; k++) {
    uint64_t v;
    memcpy(&v, (const char *)live + k * sizeof(void *), sizeof v);
    rp_ids_put(e, (uint64_t)pt_json_int(j->u.items[k], 0), v);
  }
}

/* A mapped region must hold what the application saw when it mapped it. */
static int check_map(rp_engine *e, rp_cc *cc, unsigned i)
{
  if (rp_undefined_read(e->s, cc->c)) {
    note_undefined(e, cc);
    return RP_OK;
  }
  size_t n;
  rp_data_status st;
  unsigned char *want = rp_payload(e->s, cc->c, i, "out", 0, &n, &st);
  const char *role = "out";
  if (!want && st != RP_DATA_PARTIAL) { /* a map that did not block: read back once complete */
    role = "readback";
    want = rp_payload(e->s, cc->c, i, role, 0, &n, &st);
  }
  if (st == RP_DATA_PARTIAL) { /* what was kept is compared, and the note says so */
    size_t full = 0;
    want = rp_payload_kept(e->s, cc->c, i, role, 0, &n, &full);
    rp_note_kept(e, cc->c, i, n, full);
  }
  int size = rp_param(cc->api, "size");
  int r = RP_OK;
  if (want && size >= 0 && n <= cc->argv[size] && cc->slot[i] &&
      !rp_call_blocking(cc->api, cc->c)) { /* what it maps is there once it is complete */
    rp_keep(e, want);
    return defer_compare(e, cc, i, (unsigned char *)(uintptr_t)cc->slot[i], want, n);
  }
  if (want && size >= 0 && n <= cc->argv[size] && cc->slot[i]) {
    char *text = rp_call_text(cc->api, cc->argv);
    r = compare_data(e, cc->c, text, i, want, (const unsigned char *)(uintptr_t)cc->slot[i], n);
    free(text);
  }
  free(want);
  return r;
}

static int check_scalar(rp_engine *e, rp_cc *cc, unsigned i, const pt_json *j)
{
  const pi_param_desc *p = &cc->api->params[i];
  if (!cc->argv[i])
    return RP_OK;
  if (p->creates == PI_OBJ_USM || p->creates == PI_OBJ_MAPPED) {
    pt_ref r = pt_ref_of(j);
    if (r.id)
      rp_ids_put(e, r.id, cc->slot[i]);
    return p->creates == PI_OBJ_MAPPED ? check_map(e, cc, i) : RP_OK;
  }
  if (p->vt == PI_VT_NATIVE) {
    uint64_t v = (uint64_t)pt_json_int(j, 0);
    if (v)
      rp_native_put(e, v, cc->slot[i]);
    return RP_OK;
  }
  check_numbers(e, cc, i, j);
  return RP_OK;
}

static int check_out(rp_engine *e, rp_cc *cc, unsigned i)
{
  const pi_param_desc *p = &cc->api->params[i];
  const pt_json *j = cc->c->args->u.items[i];
  switch (p->kind) {
  case PI_PK_HANDLE:
    if (cc->argv[i] && pt_json_int(j, 0))
      rp_ids_put(e, (uint64_t)pt_json_int(j, 0), cc->slot[i]);
    return RP_OK;
  case PI_PK_HANDLES:
    if (cc->argv[i])
      map_handles(e, j, (const void *)(uintptr_t)cc->argv[i],
                  pi_param_extent(p, cc->argv) / sizeof(void *));
    return RP_OK;
  case PI_PK_SCALAR:
    return check_scalar(e, cc, i, j);
  case PI_PK_ARRAY:
    check_numbers(e, cc, i, j);
    return RP_OK;
  case PI_PK_INFO:
    if (cc->argv[i])
      check_info(e, cc, i);
    return RP_OK;
  case PI_PK_BYTES: case PI_PK_HOSTPTR:
    return check_data(e, cc, i);
  default:
    return RP_OK;
  }
}

/* The most of one device's build log shown. */
#define BUILD_LOG_SHOWN 4096

/* One device's build log of prog onto b, indented ("" when it has none). */
static void put_build_log(rp_engine *e, pi_sbuf *b, pi_program prog, pi_device dev)
{
  size_t size = 0;
  if (e->t->piProgramGetBuildInfo(prog, dev, PI_PROGRAM_BUILD_INFO_LOG, 0, NULL, &size) !=
          PI_SUCCESS ||
      size <= 1)
    return;
  char *log = malloc(size);
  if (!log || e->t->piProgramGetBuildInfo(prog, dev, PI_PROGRAM_BUILD_INFO_LOG, size, log,
                                          NULL) != PI_SUCCESS) {
    free(log);
    return;
  }
  log[size - 1] = 0;
  size_t len = strlen(log);
  while (len && (log[len - 1] == '\n' || log[len - 1] == ' '))
    log[--len] = 0;
  if (!len) {
    free(log);
    return;
  }
  pi_sbuf_puts(b, "\n  build log on the replay's device:");
  size_t shown = len < BUILD_LOG_SHOWN ? len : BUILD_LOG_SHOWN;
  for (size_t i = 0; i < shown;) { /* line by line, indented */
    const char *nl = memchr(log + i, '\n', shown - i);
    size_t end = nl ? (size_t)(nl - log) : shown;
    pi_sbuf_puts(b, "\n    ");
    pi_sbuf_put(b, log + i, end - i);
    i = end + 1;
  }
  if (len > BUILD_LOG_SHOWN)
    pi_sbuf_printf(b, "\n    ... (%zu more bytes)", len - BUILD_LOG_SHOWN);
  free(log);
}

/* What the replay's devices said of a build or compile that failed: why
 * the replay stops is in their logs (a kernel with doubles on a device
 * without fp64), which the recording's application never asked for. */
static void put_build_logs(rp_engine *e, const rp_cc *cc, pi_sbuf *b)
{
  if ((cc->api->id != PI_API_piProgramBuild && cc->api->id != PI_API_piProgramCompile) ||
      !e->t->piProgramGetBuildInfo)
    return;
  pi_program prog = (pi_program)(uintptr_t)cc->argv[0];
  const pi_device *list = (const pi_device *)(uintptr_t)cc->argv[2];
  size_t n = list ? (size_t)cc->argv[1] : 0;
  pi_device own[8];
  size_t got = 0;
  if (!n && e->t->piProgramGetInfo &&
      e->t->piProgramGetInfo(prog, PI_PROGRAM_INFO_DEVICES, sizeof own, own, &got) ==
          PI_SUCCESS) { /* none named: the program's own (the first eight) */
    list = own;
    n = got / sizeof *own;
  }
  for (size_t i = 0; i < n; i++)
    put_build_log(e, b, prog, list[i]);
}

static int result_differs(rp_engine *e, rp_cc *cc, pi_result r)
{
  if (rp_info_param(cc->api) >= 0) {
    rp_note(e, cc->c->seq, "%s returned %s when recorded, %s now", cc->api->name,
            pi_result_name(cc->c->result), pi_result_name(r));
    return RP_OK;
  }
  char store[256];
  pi_sbuf b;
  pi_sbuf_init(&b, store, sizeof store);
  pi_sbuf_printf(&b, "result: expected %s, got %s", pi_result_name(cc->c->result),
                 pi_result_name(r));
  if (r != PI_SUCCESS)
    put_build_logs(e, cc, &b);
  int st = stop_here(e, cc, RP_DIVERGED, b.p);
  pi_sbuf_free(&b);
  return st;
}

int rp_check(rp_engine *e, rp_cc *cc, pi_result r)
{
  if (r != cc->c->result)
    return result_differs(e, cc, r);
  if (r != PI_SUCCESS)
    return RP_OK;
  for (unsigned i = 0; i < cc->api->nparams; i++) {
    int st = cc->api->params[i].dir == PI_DIR_IN ? (cc->want[i] ? check_data(e, cc, i) : RP_OK)
                                                  : check_out(e, cc, i);
    if (st != RP_OK)
      return st;
  }
  return RP_OK;
}
