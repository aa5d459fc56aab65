/*
 * pitrace_embed: turns device-code files into a C source file that carries
 * them as device images and registers them with the pitrace runtime from a
 * constructor (and unregisters them from a destructor). The CMake helper
 * pitrace_add_device_code() runs it, so nobody writes a descriptor by hand.
 *
 *   pitrace_embed -o OUT.c [--name NAME] [--compile-options S]
 *                 [--link-options S] [--export SYM]... [--import SYM]...
 *                 FILE...
 *
 * Each FILE becomes one image; its format comes from its extension: .cl
 * (OpenCL C source), .ptx (PTX), .spv (SPIR-V). From the code it derives:
 *  - kernels: `__kernel`/`kernel` functions (.cl), `.entry` (.ptx);
 *  - exported symbols: other non-static function definitions (.cl),
 *    `.visible .func` definitions (.ptx);
 *  - imported symbols: function declarations the file does not define (.cl),
 *    `.extern .func` (.ptx); never names starting with "__" (which covers
 *    "__spirv_"), as seed 000 says;
 *  - specialization constants, declared in the code by lines
 *      //@pitrace spec_constant SYMBOLIC_ID TYPE [= V1, V2, ...]
 *    where TYPE is a scalar (i8 u8 i16 u16 i32 u32 i64 u64 f32 f64), an
 *    array (f32[3][3]) or a struct ({i32, {f32, f32}}), laid out as C lays
 *    it out; the values are the leaves' defaults in order (zeros if left
 *    out). Each leaf gets the next numeric ID (seed 003), and kernels that
 *    take a parameter named `pitrace_spec_consts` receive the emulated
 *    buffer there. For .cl files a preamble defines PITRACE_SPEC(id, type),
 *    which reads a constant from that buffer. Where the code cannot name the
 *    parameter (PTX names parameters KERNEL_param_N), a line
 *      //@pitrace spec_arg KERNEL INDEX
 *    gives the kernel's spec-constant argument index.
 * SPIR-V files are opaque: give their symbols with --export/--import.
 * Errors name the file and line, and exit with status 1.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char **v;
  size_t n;
} strlist;

static void push(strlist *l, const char *s)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i], s) == 0)
      return;
  l->v = realloc(l->v, (l->n + 1) * sizeof *l->v);
  if (!l->v) {
    perror("pitrace_embed");
    exit(1);
  }
  l->v[l->n++] = strdup(s);
}

static void free_list(strlist *l)
{
  for (size_t i = 0; i < l->n; i++)
    free(l->v[i]);
  free(l->v);
  l->v = NULL;
  l->n = 0;
}

static bool has(const strlist *l, const char *s)
{
  for (size_t i = 0; i < l->n; i++)
    if (strcmp(l->v[i], s) == 0)
      return true;
  return false;
}

static const char *cur_file;

static void die(int line, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "pitrace_embed: %s", cur_file ? cur_file : "");
  if (line > 0)
    fprintf(stderr, ":%d", line);
  fprintf(stderr, ": ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

/* ---- Spec constants ---------------------------------------------------------- */

typedef struct {
  uint32_t id, offset, size;
  char kind; /* 'i' signed, 'u' unsigned, 'f' float */
} leaf;

typedef struct {
  char *name;
  uint32_t size, align;
  leaf *leaves;
  size_t nleaves;
  unsigned char *defaults; /* size bytes */
} spec_const;

typedef struct {
  spec_const *v;
  size_t n;
  uint32_t next_id;
} spec_list;

static const char *skip_ws(const char *p)
{
  while (isspace((unsigned char)*p))
    p++;
  return p;
}

static uint32_t align_up(uint32_t v, uint32_t a) { return (v + a - 1) / a * a; }

/* Parses TYPE at *pp into leaves at `base`; returns its size, sets *align. */
static uint32_t parse_type(const char **pp, uint32_t base, spec_const *sc,
                           uint32_t *align, int line)
{
  const char *p = skip_ws(*pp);
  uint32_t size = 0;
  if (*p == '{') {
    p++;
    uint32_t a_max = 1, off = 0;
    for (;;) {
      /* A dry run (no leaves) gives the member's alignment first. */
      uint32_t a;
      const char *q = p;
      spec_const dry = {0};
      parse_type(&q, 0, &dry, &a, line);
      off = align_up(off, a);
      uint32_t s = parse_type(&p, base + off, sc, &a, line);
      off += s;
      if (a > a_max)
        a_max = a;
      p = skip_ws(p);
      if (*p == ',') {
        p++;
        continue;
      }
      if (*p == '}') {
        p++;
        break;
      }
      die(line, "expected ',' or '}' in a struct type at '%s'", p);
    }
    size = align_up(off, a_max);
    *align = a_max;
  } else {
    static const struct {
      const char *n;
      uint32_t size;
      char kind;
    } scalars[] = {{"i8", 1, 'i'},  {"u8", 1, 'u'},  {"i16", 2, 'i'}, {"u16", 2, 'u'},
                   {"i32", 4, 'i'}, {"u32", 4, 'u'}, {"i64", 8, 'i'}, {"u64", 8, 'u'},
                   {"f32", 4, 'f'}, {"f64", 8, 'f'}};
    size_t i, len = 0;
    while (isalnum((unsigned char)p[len]))
      len++;
    for (i = 0; i < sizeof scalars / sizeof *scalars; i++)
      if (strlen(scalars[i].n) == len && strncmp(p, scalars[i].n, len) == 0)
        break;
    if (i == sizeof scalars / sizeof *scalars)
      die(line, "unknown type '%.*s' (use i8..u64, f32, f64, T[N] or {T, ...})",
          (int)(len ? len : 1), p);
    p += len;
    size = scalars[i].size;
    *align = size;
    if (sc->name) {
      sc->leaves = realloc(sc->leaves, (sc->nleaves + 1) * sizeof *sc->leaves);
      sc->leaves[sc->nleaves++] = (leaf){0, base, size, scalars[i].kind};
    }
  }
  /* Array suffixes: T[N][M] is N arrays of M. */
  p = skip_ws(p);
  uint32_t dims[8], nd = 0;
  while (*p == '[') {
    char *end;
    unsigned long n = strtoul(p + 1, &end, 10);
    if (end == p + 1 || *end != ']' || n == 0 || nd == 8)
      die(line, "bad array size at '%s'", p);
    dims[nd++] = (uint32_t)n;
    p = skip_ws(end + 1);
  }
  if (nd) {
    uint32_t count = 1;
    for (uint32_t d = 0; d < nd; d++)
      count *= dims[d];
    /* Replicate the element's leaves for every further element. */
    if (sc->name) {
      size_t first = sc->nleaves;
      while (first > 0 && sc->leaves[first - 1].offset >= base)
        first--;
      size_t per = sc->nleaves - first;
      for (uint32_t e = 1; e < count; e++)
        for (size_t l = 0; l < per; l++) {
          leaf lf = sc->leaves[first + l];
          lf.offset += e * size;
          sc->leaves = realloc(sc->leaves, (sc->nleaves + 1) * sizeof *sc->leaves);
          sc->leaves[sc->nleaves++] = lf;
        }
    }
    size *= count;
  }
  *pp = p;
  return size;
}

static void store_value(unsigned char *dst, const leaf *lf, const char *text, int line)
{
  char *end;
  errno = 0;
  if (lf->kind == 'f') {
    double d = strtod(text, &end);
    if (lf->size == 4) {
      float f = (float)d;
      memcpy(dst, &f, 4);
    } else {
      memcpy(dst, &d, 8);
    }
  } else {
    long long v = strtoll(text, &end, 0);
    memcpy(dst, &v, lf->size); /* little-endian hosts */
  }
  if (end == text || errno)
    die(line, "'%s' is not a number", text);
}

/* "//@pitrace spec_constant ID TYPE [= v, ...]" */
static void parse_spec_line(spec_list *sl, const char *p, int line)
{
  p = skip_ws(p);
  const char *id = p;
  while (*p && !isspace((unsigned char)*p))
    p++;
  if (p == id)
    die(line, "spec_constant needs a symbolic ID");
  spec_const sc = {0};
  sc.name = strndup(id, (size_t)(p - id));
  for (size_t i = 0; i < sl->n; i++)
    if (strcmp(sl->v[i].name, sc.name) == 0)
      die(line, "spec constant '%s' declared twice", sc.name);
  sc.size = parse_type(&p, 0, &sc, &sc.align, line);
  size_t nvalues = sc.nleaves;
  for (size_t l = 0; l < sc.nleaves; l++)
    sc.leaves[l].id = sl->next_id++;
  sc.defaults = calloc(1, sc.size ? sc.size : 1);
  p = skip_ws(p);
  if (*p == '=') {
    char *vals = strdup(p + 1), *save = NULL;
    size_t l = 0;
    for (char *v = strtok_r(vals, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
      if (l == nvalues)
        die(line, "spec constant '%s' has %zu leaves but more defaults", sc.name,
            nvalues);
      store_value(sc.defaults + sc.leaves[l].offset, &sc.leaves[l], skip_ws(v), line);
      l++;
    }
    if (l != nvalues)
      die(line, "spec constant '%s' has %zu leaves but %zu defaults", sc.name,
          nvalues, l);
    free(vals);
  } else if (*p) {
    die(line, "unexpected '%s' after the type", p);
  }
  /* Trailing padding of a composite: a descriptor with ID 0xffffffff, so
   * the runtime knows the constant's full size. */
  uint32_t end = 0;
  for (size_t l = 0; l < sc.nleaves; l++)
    if (sc.leaves[l].offset + sc.leaves[l].size > end)
      end = sc.leaves[l].offset + sc.leaves[l].size;
  if (end < sc.size) {
    sc.leaves = realloc(sc.leaves, (sc.nleaves + 1) * sizeof *sc.leaves);
    sc.leaves[sc.nleaves++] = (leaf){0xffffffffu, end, sc.size - end, 'p'};
  }
  sl->v = realloc(sl->v, (sl->n + 1) * sizeof *sl->v);
  sl->v[sl->n++] = sc;
}

/* ---- Symbols of OpenCL C ------------------------------------------------------- */

typedef struct {
  strlist kernels, exports, imports, declared;
  int *spec_arg; /* per kernel: index of pitrace_spec_consts, or -1 */
} symbols;

static strlist spec_arg_names;
static int spec_arg_index[256];

static void add_kernel(symbols *s, const char *name, int spec_arg)
{
  if (has(&s->kernels, name))
    return;
  for (size_t i = 0; i < spec_arg_names.n; i++)
    if (strcmp(spec_arg_names.v[i], name) == 0)
      spec_arg = spec_arg_index[i];
  push(&s->kernels, name);
  s->spec_arg = realloc(s->spec_arg, s->kernels.n * sizeof *s->spec_arg);
  s->spec_arg[s->kernels.n - 1] = spec_arg;
}

/* Blanks comments, string and character literals, and preprocessor lines,
 * keeping newlines; collects //@pitrace lines. */
static char *clean_c(const char *src, spec_list *sl)
{
  size_t n = strlen(src);
  char *o = malloc(n + 1);
  int line = 1;
  bool line_start = true;
  for (size_t i = 0; i < n;) {
    char c = src[i];
    if (c == '\n') {
      o[i++] = '\n';
      line++;
      line_start = true;
      continue;
    }
    if (line_start && c == '#') { /* preprocessor line, with continuations */
      while (i < n && src[i] != '\n') {
        if (src[i] == '\\' && src[i + 1] == '\n') {
          o[i] = ' ';
          o[i + 1] = '\n';
          i += 2;
          line++;
          continue;
        }
        o[i++] = ' ';
      }
      continue;
    }
    if (!isspace((unsigned char)c))
      line_start = false;
    if (c == '/' && src[i + 1] == '/') {
      if (strncmp(src + i, "//@pitrace", 10) == 0) {
        const char *p = skip_ws(src + i + 10);
        if (strncmp(p, "spec_constant", 13) != 0)
          die(line, "unknown //@pitrace directive (only spec_constant)");
        const char *eol = strchr(p, '\n');
        char *text = strndup(p + 13, eol ? (size_t)(eol - p - 13) : strlen(p + 13));
        parse_spec_line(sl, text, line);
        free(text);
      }
      while (i < n && src[i] != '\n')
        o[i++] = ' ';
      continue;
    }
    if (c == '/' && src[i + 1] == '*') {
      o[i++] = ' ';
      o[i++] = ' ';
      while (i < n && !(src[i] == '*' && src[i + 1] == '/')) {
        if (src[i] == '\n')
          line++;
        o[i] = src[i] == '\n' ? '\n' : ' ';
        i++;
      }
      if (i < n) {
        o[i++] = ' ';
        o[i++] = ' ';
      }
      continue;
    }
    if (c == '"' || c == '\'') {
      o[i++] = ' ';
      while (i < n && src[i] != c && src[i] != '\n') {
        if (src[i] == '\\' && i + 1 < n) {
          o[i++] = ' ';
        }
        o[i++] = ' ';
      }
      if (i < n && src[i] == c)
        o[i++] = ' ';
      continue;
    }
    o[i] = c;
    i++;
  }
  o[n] = 0;
  return o;
}

/* Scans top-level declarations: `... name ( params ) {` or `;`. */
static void symbols_of_c(const char *code, symbols *s)
{
  int depth = 0;
  const char *p = code;
  const char *decl_start = code;
  while (*p) {
    if (*p == '{') {
      depth++;
      p++;
      continue;
    }
    if (*p == '}') {
      depth--;
      p++;
      if (depth == 0)
        decl_start = p;
      continue;
    }
    if (*p == ';' && depth == 0) {
      p++;
      decl_start = p;
      continue;
    }
    if (depth == 0 && (isalpha((unsigned char)*p) || *p == '_')) {
      const char *id = p;
      while (isalnum((unsigned char)*p) || *p == '_')
        p++;
      size_t idlen = (size_t)(p - id);
      const char *q = skip_ws(p);
      if (*q != '(')
        continue;
      /* The parameter list. */
      int pd = 0, commas = 0, spec_arg = -1;
      const char *r = q;
      for (; *r; r++) {
        if (*r == '(')
          pd++;
        else if (*r == ')' && --pd == 0)
          break;
        else if (*r == ',' && pd == 1)
          commas++;
        else if (pd == 1 && strncmp(r, "pitrace_spec_consts", 19) == 0 &&
                 !(isalnum((unsigned char)r[19]) || r[19] == '_') &&
                 !(isalnum((unsigned char)r[-1]) || r[-1] == '_'))
          spec_arg = commas;
      }
      if (!*r)
        break;
      const char *after = skip_ws(r + 1);
      char name[256];
      snprintf(name, sizeof name, "%.*s", (int)idlen, id);
      /* Qualifiers between the previous declaration and the name. */
      char *head = strndup(decl_start, (size_t)(id - decl_start));
      bool is_kernel = strstr(head, "kernel") != NULL;
      bool is_static = strstr(head, "static") != NULL;
      free(head);
      if (*after == '{') {
        if (is_kernel)
          add_kernel(s, name, spec_arg);
        else if (!is_static && strncmp(name, "__", 2) != 0)
          push(&s->exports, name);
        push(&s->declared, name); /* defined here */
        p = after;
      } else if (*after == ';') {
        if (strncmp(name, "__", 2) != 0)
          push(&s->imports, name);
        p = after;
      } else {
        p = r + 1;
      }
    } else {
      p++;
    }
  }
  /* A declaration the file also defines is no import. */
  strlist keep = {0};
  for (size_t i = 0; i < s->imports.n; i++)
    if (!has(&s->declared, s->imports.v[i]) && !has(&s->kernels, s->imports.v[i]))
      push(&keep, s->imports.v[i]);
  free_list(&s->imports);
  s->imports = keep;
}

/* "//@pitrace spec_arg KERNEL INDEX", for a kernel seen later. */
static void parse_spec_arg(symbols *s, const char *p, int line)
{
  (void)s;
  char name[256];
  int index;
  if (sscanf(p, "%255s %d", name, &index) != 2 || index < 0)
    die(line, "expected '//@pitrace spec_arg KERNEL INDEX'");
  if (spec_arg_names.n == 256)
    die(line, "too many spec_arg lines");
  spec_arg_index[spec_arg_names.n] = index;
  push(&spec_arg_names, name);
}

/* ---- Symbols of PTX --------------------------------------------------------------- */

static void symbols_of_ptx(const char *code, symbols *s, spec_list *sl)
{
  int line = 1;
  for (const char *p = code; *p; line++) {
    const char *eol = strchr(p, '\n');
    size_t len = eol ? (size_t)(eol - p) : strlen(p);
    char *l = strndup(p, len);
    const char *t = skip_ws(l);
    if (strncmp(t, "//@pitrace", 10) == 0) {
      const char *d = skip_ws(t + 10);
      if (strncmp(d, "spec_constant", 13) == 0)
        parse_spec_line(sl, d + 13, line);
      else if (strncmp(d, "spec_arg", 8) == 0)
        parse_spec_arg(s, d + 8, line);
      else
        die(line, "unknown //@pitrace directive (spec_constant or spec_arg)");
    } else if (strncmp(t, "//", 2) != 0) {
      const char *entry = strstr(t, ".entry");
      const char *func = strstr(t, ".func");
      if (entry || func) {
        const char *q = skip_ws((entry ? entry + 6 : func + 5));
        if (*q == '(') { /* a return parameter list */
          q = strchr(q, ')');
          q = q ? skip_ws(q + 1) : "";
        }
        char name[256];
        size_t n = 0;
        while (n < sizeof name - 1 && (isalnum((unsigned char)q[n]) || q[n] == '_' || q[n] == '$'))
          n++;
        snprintf(name, sizeof name, "%.*s", (int)n, q);
        if (n) {
          if (entry) {
            int spec_arg = -1;
            /* Parameters follow on the next lines until ')'. */
            const char *params = p + len;
            const char *close = strchr(params, ')');
            int idx = 0;
            for (const char *r = params; close && r < close; r++) {
              if (*r == ',')
                idx++;
              if (strncmp(r, "pitrace_spec_consts", 19) == 0)
                spec_arg = idx;
            }
            add_kernel(s, name, spec_arg);
          } else if (strstr(t, ".extern")) {
            if (strncmp(name, "__", 2) != 0)
              push(&s->imports, name);
          } else if (strstr(t, ".visible")) {
            push(&s->exports, name);
          }
        }
      }
    }
    free(l);
    p += len;
    if (*p)
      p++;
  }
}

/* ---- Output ------------------------------------------------------------------------ */

static void emit_bytes(FILE *o, const char *name, const unsigned char *b, size_t n)
{
  fprintf(o, "static const unsigned char %s[%zu] = {", name, n ? n : 1);
  for (size_t i = 0; i < n; i++)
    fprintf(o, "%s%u,", i % 20 ? "" : "\n  ", b[i]);
  if (!n)
    fprintf(o, "0");
  fprintf(o, "\n};\n");
}

static void emit_strings(FILE *o, const char *prefix, const strlist *l)
{
  for (size_t i = 0; i < l->n; i++)
    fprintf(o, "static char %s_%zu[] = \"%s\";\n", prefix, i, l->v[i]);
}

/* A property set of name-only properties (symbol lists). */
static int emit_symbol_set(FILE *o, int img, const char *what, const strlist *l)
{
  if (!l->n)
    return 0;
  char prefix[64];
  snprintf(prefix, sizeof prefix, "img%d_%s", img, what);
  emit_strings(o, prefix, l);
  fprintf(o, "static struct _pi_device_binary_property_struct %s[] = {\n", prefix);
  for (size_t i = 0; i < l->n; i++)
    fprintf(o, "  {%s_%zu, NULL, PI_PROPERTY_TYPE_UINT32, 1},\n", prefix, i);
  fprintf(o, "};\n");
  return 1;
}

static char *read_file(const char *path, size_t *size)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    die(0, "cannot read: %s", strerror(errno));
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)n + 1);
  if (!b || fread(b, 1, (size_t)n, f) != (size_t)n)
    die(0, "cannot read: %s", strerror(errno));
  b[n] = 0;
  fclose(f);
  *size = (size_t)n;
  return b;
}

static void sanitize(char *s)
{
  for (; *s; s++)
    if (!isalnum((unsigned char)*s) && *s != '_')
      *s = '_';
}

/* The OpenCL C preamble giving kernels their spec-constant offsets. */
static char *cl_preamble(const spec_list *sl)
{
  size_t cap = 512 + sl->n * 128;
  char *p = malloc(cap), *w = p;
  w += sprintf(w, "/* pitrace: specialization constants (emulated buffer) */\n"
                  "#define PITRACE_SPEC(id, type) (*(const __global type *)"
                  "(pitrace_spec_consts + PITRACE_SPEC_OFFSET_##id))\n");
  uint32_t off = 0;
  for (size_t i = 0; i < sl->n; i++) {
    char *id = strdup(sl->v[i].name);
    sanitize(id);
    w += sprintf(w, "#define PITRACE_SPEC_OFFSET_%s %u\n", id, off);
    off += sl->v[i].size;
    free(id);
  }
  w += sprintf(w, "#line 1\n");
  return p;
}

int main(int argc, char **argv)
{
  const char *out = NULL, *name = "device_code", *copts = "", *lopts = "";
  strlist files = {0}, extra_exports = {0}, extra_imports = {0};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
      out = argv[++i];
    else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc)
      name = argv[++i];
    else if (strcmp(argv[i], "--compile-options") == 0 && i + 1 < argc)
      copts = argv[++i];
    else if (strcmp(argv[i], "--link-options") == 0 && i + 1 < argc)
      lopts = argv[++i];
    else if (strcmp(argv[i], "--export") == 0 && i + 1 < argc)
      push(&extra_exports, argv[++i]);
    else if (strcmp(argv[i], "--import") == 0 && i + 1 < argc)
      push(&extra_imports, argv[++i]);
    else if (argv[i][0] == '-') {
      fprintf(stderr, "pitrace_embed: unknown option %s\n", argv[i]);
      return 1;
    } else
      push(&files, argv[i]);
  }
  if (!out || !files.n) {
    fprintf(stderr, "usage: pitrace_embed -o OUT.c [--name NAME] [--compile-options S] "
                    "[--link-options S] [--export SYM]... [--import SYM]... FILE...\n");
    return 1;
  }
  FILE *o = fopen(out, "w");
  if (!o) {
    fprintf(stderr, "pitrace_embed: cannot write %s: %s\n", out, strerror(errno));
    return 1;
  }
  fprintf(o, "/* Generated by pitrace_embed (%s): do not edit. */\n"
             "#include <stddef.h>\n#include \"pirt.h\"\n\n", name);
  size_t *nkernels = calloc(files.n, sizeof *nkernels);
  int *nsets_of = calloc(files.n, sizeof *nsets_of);
  for (size_t f = 0; f < files.n; f++) {
    cur_file = files.v[f];
    size_t size;
    char *code = read_file(cur_file, &size);
    const char *ext = strrchr(cur_file, '.');
    symbols s = {0};
    spec_list sl = {0};
    const char *format, *target;
    unsigned char *payload = (unsigned char *)code;
    size_t payload_size = size;
    if (ext && strcmp(ext, ".cl") == 0) {
      format = "PI_DEVICE_BINARY_TYPE_OPENCL_C";
      target = "__SYCL_PI_DEVICE_BINARY_TARGET_OPENCL_C";
      char *clean = clean_c(code, &sl);
      symbols_of_c(clean, &s);
      free(clean);
      if (sl.n) {
        char *pre = cl_preamble(&sl);
        payload_size = strlen(pre) + size;
        payload = malloc(payload_size + 1);
        memcpy(payload, pre, strlen(pre));
        memcpy(payload + strlen(pre), code, size);
        free(pre);
      }
    } else if (ext && strcmp(ext, ".ptx") == 0) {
      format = "PI_DEVICE_BINARY_TYPE_PTX";
      target = "__SYCL_PI_DEVICE_BINARY_TARGET_NVPTX64";
      symbols_of_ptx(code, &s, &sl);
    } else if (ext && strcmp(ext, ".spv") == 0) {
      format = "PI_DEVICE_BINARY_TYPE_SPIRV";
      target = "__SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64";
    } else {
      die(0, "unknown device code format (use .cl, .ptx or .spv)");
    }
    for (size_t i = 0; i < extra_exports.n; i++)
      push(&s.exports, extra_exports.v[i]);
    for (size_t i = 0; i < extra_imports.n; i++)
      push(&s.imports, extra_imports.v[i]);
    if (!s.kernels.n && !s.exports.n)
      die(0, "no kernels and no exported functions found");

    int img = (int)f;
    fprintf(o, "/* image %d: %s: %zu kernel(s), %zu export(s), %zu import(s), "
               "%zu spec constant(s) */\n", img, cur_file, s.kernels.n,
            s.exports.n, s.imports.n, sl.n);
    char bname[64];
    snprintf(bname, sizeof bname, "img%d_code", img);
    emit_bytes(o, bname, payload, payload_size);
    char kp[64];
    snprintf(kp, sizeof kp, "img%d_kernel", img);
    emit_strings(o, kp, &s.kernels);
    fprintf(o, "static struct _pi_offload_entry_struct img%d_entries[%zu] = {\n", img,
            s.kernels.n ? s.kernels.n : 1);
    for (size_t i = 0; i < s.kernels.n; i++)
      fprintf(o, "  {NULL, img%d_kernel_%zu, 0, 0, 0},\n", img, i);
    fprintf(o, "};\n");

    int nsets = 0;
    char sets[8][160];
    if (emit_symbol_set(o, img, "exports", &s.exports))
      snprintf(sets[nsets++], sizeof sets[0],
               "{(char *)__SYCL_PI_PROPERTY_SET_SYCL_EXPORTED_SYMBOLS, img%d_exports, "
               "img%d_exports + %zu}", img, img, s.exports.n);
    if (emit_symbol_set(o, img, "imports", &s.imports))
      snprintf(sets[nsets++], sizeof sets[0],
               "{(char *)__SYCL_PI_PROPERTY_SET_SYCL_IMPORTED_SYMBOLS, img%d_imports, "
               "img%d_imports + %zu}", img, img, s.imports.n);
    if (sl.n) {
      size_t total = 0;
      for (size_t i = 0; i < sl.n; i++) {
        spec_const *sc = &sl.v[i];
        fprintf(o, "static char img%d_sc_name_%zu[] = \"%s\";\n", img, i, sc->name);
        fprintf(o, "static uint32_t img%d_sc_desc_%zu[] = {", img, i);
        for (size_t l = 0; l < sc->nleaves; l++)
          fprintf(o, "%s%u, %u, %u", l ? ", " : "", sc->leaves[l].id,
                  sc->leaves[l].offset, sc->leaves[l].size);
        fprintf(o, "};\n");
        total += sc->size;
      }
      fprintf(o, "static struct _pi_device_binary_property_struct img%d_specs[] = {\n", img);
      for (size_t i = 0; i < sl.n; i++)
        fprintf(o, "  {img%d_sc_name_%zu, img%d_sc_desc_%zu, PI_PROPERTY_TYPE_BYTE_ARRAY, %zu},\n",
                img, i, img, i, sl.v[i].nleaves * 12);
      fprintf(o, "};\n");
      unsigned char *blob = malloc(total);
      size_t off = 0;
      for (size_t i = 0; i < sl.n; i++) {
        memcpy(blob + off, sl.v[i].defaults, sl.v[i].size);
        off += sl.v[i].size;
      }
      char dn[64];
      snprintf(dn, sizeof dn, "img%d_sc_defaults", img);
      emit_bytes(o, dn, blob, total);
      fprintf(o, "static char img%d_sc_all[] = \"all\";\n"
                 "static struct _pi_device_binary_property_struct img%d_spec_defaults[] = {\n"
                 "  {img%d_sc_all, (void *)img%d_sc_defaults, PI_PROPERTY_TYPE_BYTE_ARRAY, %zu},\n"
                 "};\n", img, img, img, img, total);
      snprintf(sets[nsets++], sizeof sets[0],
               "{(char *)__SYCL_PI_PROPERTY_SET_SPEC_CONST_MAP, img%d_specs, img%d_specs + %zu}",
               img, img, sl.n);
      snprintf(sets[nsets++], sizeof sets[0],
               "{(char *)__SYCL_PI_PROPERTY_SET_SPEC_CONST_DEFAULT_VALUES_MAP, "
               "img%d_spec_defaults, img%d_spec_defaults + 1}", img, img);
      strlist args = {0};
      for (size_t k = 0; k < s.kernels.n; k++)
        if (s.spec_arg[k] >= 0)
          push(&args, s.kernels.v[k]);
      if (args.n) {
        fprintf(o, "static struct _pi_device_binary_property_struct img%d_spec_args[] = {\n", img);
        for (size_t k = 0; k < s.kernels.n; k++)
          if (s.spec_arg[k] >= 0)
            fprintf(o, "  {img%d_kernel_%zu, NULL, PI_PROPERTY_TYPE_UINT32, %d},\n", img, k,
                    s.spec_arg[k]);
        fprintf(o, "};\n");
        snprintf(sets[nsets++], sizeof sets[0],
                 "{(char *)__SYCL_PI_PROPERTY_SET_SPEC_CONST_KERNEL_ARG, img%d_spec_args, "
                 "img%d_spec_args + %zu}", img, img, args.n);
      }
      free_list(&args);
      free(blob);
    }
    fprintf(o, "static struct _pi_device_binary_property_set_struct img%d_sets[%d] = {\n",
            img, nsets ? nsets : 1);
    for (int i = 0; i < nsets; i++)
      fprintf(o, "  %s,\n", sets[i]);
    fprintf(o, "};\n\n");
    nkernels[f] = s.kernels.n;
    nsets_of[f] = nsets;
    (void)format;
    (void)target;
    if (payload != (unsigned char *)code)
      free(payload);
    free(code);
    free_list(&s.kernels);
    free_list(&s.exports);
    free_list(&s.imports);
    free_list(&s.declared);
    free(s.spec_arg);
    for (size_t i = 0; i < sl.n; i++) {
      free(sl.v[i].name);
      free(sl.v[i].leaves);
      free(sl.v[i].defaults);
    }
    free(sl.v);
  }
  fprintf(o, "static struct pi_device_binary_struct images[%zu] = {\n", files.n);
  for (size_t f = 0; f < files.n; f++) {
    const char *ext = strrchr(files.v[f], '.');
    const char *format = strcmp(ext, ".cl") == 0    ? "PI_DEVICE_BINARY_TYPE_OPENCL_C"
                         : strcmp(ext, ".ptx") == 0 ? "PI_DEVICE_BINARY_TYPE_PTX"
                                                    : "PI_DEVICE_BINARY_TYPE_SPIRV";
    const char *target = strcmp(ext, ".cl") == 0    ? "__SYCL_PI_DEVICE_BINARY_TARGET_OPENCL_C"
                         : strcmp(ext, ".ptx") == 0 ? "__SYCL_PI_DEVICE_BINARY_TARGET_NVPTX64"
                                                    : "__SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64";
    fprintf(o, "  {PI_DEVICE_BINARY_VERSION, PI_DEVICE_BINARY_OFFLOAD_KIND_SYCL, %s, %s,\n"
               "   \"%s\", \"%s\", NULL, NULL, img%zu_code, img%zu_code + sizeof img%zu_code,\n"
               "   img%zu_entries, img%zu_entries + %zu, img%zu_sets, img%zu_sets + %d},\n",
            format, target, copts, lopts, f, f, f, f, f, nkernels[f], f, f, nsets_of[f]);
  }
  fprintf(o, "};\n\nstatic struct pi_device_binaries_struct %s_images = {\n"
             "  PI_DEVICE_BINARIES_VERSION, %zu, images, NULL, NULL};\n\n"
             "__attribute__((constructor)) static void register_%s(void)\n"
             "{\n  pirt_register_images(&%s_images);\n}\n\n"
             "__attribute__((destructor)) static void unregister_%s(void)\n"
             "{\n  pirt_unregister_images(&%s_images);\n}\n",
          name, files.n, name, name, name, name);
  free(nkernels);
  free(nsets_of);
  free_list(&files);
  free_list(&extra_exports);
  free_list(&extra_imports);
  free_list(&spec_arg_names);
  if (fclose(o) != 0) {
    fprintf(stderr, "pitrace_embed: cannot write %s: %s\n", out, strerror(errno));
    return 1;
  }
  return 0;
}
