/*
 * discovery.c: how the OpenCL plugin finds the implementations (the ICD
 * vendor lists, then the libraries named outright), loads each with dlopen,
 * skips what it must (the front end, a file already taken, a library with no
 * ICD entry point or no platform) and keeps the reasons for piPlatformsGet's
 * message; and icd_callable, the check that a dispatch entry can be called.
 * plugins/opencl/README.md says it with examples.
 */
#include "ocl_internal.h"

pthread_mutex_t discovery_lock = PTHREAD_MUTEX_INITIALIZER;
int discovered;
static struct vendor *vendors;
static size_t nvendors;
struct icd_platform *icd_platforms;
cl_uint nicd_platforms;
struct text discovery_sources; /* where the libraries came from */
struct text discovery_notes;   /* each library skipped, and why */
char *option_libraries;        /* libraries= of the plugins config */
struct text option_notes;      /* options this plugin does not know */

static void text_vadd(struct text *t, const char *fmt, va_list ap) {
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  if (n >= 0 && t->len + (size_t)n + 1 > t->cap) {
    size_t cap = 2 * (t->len + (size_t)n + 1);
    char *grown = realloc(t->s, cap);
    if (grown) {
      t->s = grown;
      t->cap = cap;
    }
  }
  if (n >= 0 && t->len + (size_t)n + 1 <= t->cap) {
    vsnprintf(t->s + t->len, t->cap - t->len, fmt, again);
    t->len += (size_t)n;
  }
  va_end(again);
}

__attribute__((format(printf, 2, 3))) static void
text_add(struct text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  text_vadd(t, fmt, ap);
  va_end(ap);
}

/* Appends to `t`, after "; " when it holds something already. */
__attribute__((format(printf, 2, 3))) void
text_item(struct text *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (t->len)
    text_add(t, "; ");
  text_vadd(t, fmt, ap);
  va_end(ap);
}

void text_free(struct text *t) {
  free(t->s);
  *t = (struct text){NULL, 0, 0};
}

/* The file a library handle is (the path the dynamic linker took for it,
 * symbolic links resolved). */
static void library_path(void *dl, const char *name, char path[PATH_MAX]) {
  struct link_map *lm = NULL;
  const char *file = name;
  if (dlinfo(dl, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && *lm->l_name)
    file = lm->l_name;
  if (!realpath(file, path))
    snprintf(path, PATH_MAX, "%s", file);
}

/* `name` when the library itself defines it, not one it depends on: a
 * library linked with libOpenCL.so.1 must not hand over the loader's entry
 * points, which lead to the application's loader and so to the front end. */
static void *own_symbol(void *dl, const char *name) {
  void *sym = dlsym(dl, name);
  struct link_map *lm = NULL;
  Dl_info info;
  if (!sym || dlinfo(dl, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
    return sym;
  if (dladdr(sym, &info) && info.dli_fname &&
      strcmp(info.dli_fname, lm->l_name) != 0)
    return NULL;
  return sym;
}

/* A string query of a platform through its dispatch table, malloc'd. */
static char *platform_string(const struct _cl_icd_dispatch *d,
                             cl_platform_id id, cl_platform_info param) {
  size_t n = 0;
  char *s = NULL;
  if (d->clGetPlatformInfo(id, param, 0, NULL, &n) == CL_SUCCESS &&
      (s = malloc(n + 1)) != NULL &&
      d->clGetPlatformInfo(id, param, n, s, NULL) != CL_SUCCESS) {
    free(s);
    s = NULL;
  }
  if (s)
    s[n] = '\0';
  return s;
}

/* Keeps platform `id` of library `name` when it can serve: its dispatch
 * table has clGetPlatformInfo and it lists cl_khr_icd (the ICD loader's
 * checks). */
static void keep_platform(cl_platform_id id, size_t vendor, const char *origin,
                          const char *name) {
  const struct _cl_icd_dispatch *d = id ? CL_DISPATCH(id) : NULL;
  if (!d || !d->clGetPlatformInfo) {
    note("%s: %s: a platform skipped: its dispatch table has no "
         "clGetPlatformInfo",
         origin, name);
    return;
  }
  char *pname = platform_string(d, id, CL_PLATFORM_NAME);
  char *exts = platform_string(d, id, CL_PLATFORM_EXTENSIONS);
  int icd = exts && strstr(exts, "cl_khr_icd") != NULL;
  free(exts);
  if (!icd) {
    note("%s: %s: platform '%s' skipped: it does not list cl_khr_icd", origin,
         name, pname ? pname : "?");
    free(pname);
    return;
  }
  icd_platforms[nicd_platforms++] =
      (struct icd_platform){id, d, vendor, pname ? pname : strdup("?")};
}

/* Opens library `name` (listed by `origin`) and keeps its platforms. */
static enum vendor_outcome load_vendor(const char *name, const char *origin) {
  dlerror();
  void *dl = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (!dl) {
    const char *why = dlerror();
    note("%s: %s cannot be loaded (%s)", origin, name,
         why ? why : "dlopen failed");
    return VENDOR_SKIPPED;
  }
  if (dlsym(dl, "pitrace_opencl_frontend")) {
    note("%s: %s skipped: it is pitrace's own OpenCL front end (it exports "
         "pitrace_opencl_frontend), whose platforms would call pitrace again",
         origin, name);
    dlclose(dl);
    return VENDOR_FRONT_END;
  }
  char path[PATH_MAX];
  library_path(dl, name, path);
  for (size_t i = 0; i < nvendors; ++i)
    if (strcmp(vendors[i].path, path) == 0) {
      note("%s: %s skipped: it is %s, already %s from %s", origin, name, path,
           vendors[i].dl ? "taken" : "tried", vendors[i].origin);
      dlclose(dl);
      return VENDOR_SKIPPED;
    }
  struct vendor *grown = realloc(vendors, (nvendors + 1) * sizeof *grown);
  char *origin_copy = strdup(origin), *path_copy = strdup(path);
  if (grown)
    vendors = grown;
  if (!grown || !origin_copy || !path_copy) {
    free(origin_copy);
    free(path_copy);
    note("%s: %s skipped: out of host memory", origin, name);
    dlclose(dl);
    return VENDOR_SKIPPED;
  }
  size_t v = nvendors++;
  vendors[v] = (struct vendor){origin_copy, path_copy, NULL};

  void *entry = own_symbol(dl, "clIcdGetPlatformIDsKHR");
  void *gx = entry ? NULL : own_symbol(dl, "clGetExtensionFunctionAddress");
  if (gx)
    entry = ((get_extension_address_fn)(uintptr_t)gx)("clIcdGetPlatformIDsKHR");
  if (!entry) {
    note("%s: %s (%s) skipped: it has no clIcdGetPlatformIDsKHR of its own, "
         "so it is no OpenCL ICD implementation",
         origin, name, path);
    dlclose(dl);
    return VENDOR_SKIPPED;
  }
  icd_get_platform_ids_fn get_ids = (icd_get_platform_ids_fn)(uintptr_t)entry;
  cl_uint n = 0;
  cl_int err = get_ids(0, NULL, &n);
  cl_platform_id *ids = err == CL_SUCCESS && n ? calloc(n, sizeof *ids) : NULL;
  struct icd_platform *more =
      ids ? realloc(icd_platforms, (nicd_platforms + n) * sizeof *more) : NULL;
  if (more)
    icd_platforms = more;
  if (more)
    err = get_ids(n, ids, NULL);
  cl_uint before = nicd_platforms;
  for (cl_uint i = 0; more && err == CL_SUCCESS && i < n; ++i)
    keep_platform(ids[i], v, origin, name);
  free(ids);
  if (nicd_platforms > before) {
    vendors[v].dl = dl; /* stays loaded, as the ICD loader leaves it */
    return VENDOR_USED;
  }
  if (err != CL_SUCCESS || n == 0)
    note("%s: %s (%s) has no platform (clIcdGetPlatformIDsKHR: %s)", origin,
         name, path, err != CL_SUCCESS ? cl_error_name(err) : "none");
  else if (!more)
    note("%s: %s skipped: out of host memory", origin, name);
  dlclose(dl);
  return VENDOR_SKIPPED;
}

void count(struct counts *c, enum vendor_outcome outcome) {
  c->listed++;
  c->front_ends += outcome == VENDOR_FRONT_END;
}

/* A *.icd file: its first line names the library, as in ocl-icd. */
static void load_icd_file(const char *file, struct counts *c) {
  char line[PATH_MAX + 2];
  FILE *f = fopen(file, "re");
  int saved = errno;
  char *got = f ? fgets(line, sizeof line, f) : NULL;
  int failed = !f || ferror(f);
  if (f && failed)
    saved = errno;
  if (f)
    fclose(f);
  if (!got) {
    note("%s cannot be read (%s)", file,
         failed ? strerror(saved) : "it is empty");
    c->listed++;
    return;
  }
  char *name = line, *end = line + strlen(line);
  while (*name == ' ' || *name == '\t')
    name++;
  while (end > name && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' ' ||
                        end[-1] == '\t'))
    *--end = '\0';
  if (!*name) {
    note("%s names no library (its first line is empty)", file);
    c->listed++;
    return;
  }
  count(c, load_vendor(name, file));
}

static int icd_name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_icd_name(const char *name) {
  size_t n = strlen(name);
  return n > 4 && strcmp(name + n - 4, ".icd") == 0;
}

/* The *.icd files of a directory, in the order of their names. */
static void load_icd_dir(const char *dir, struct counts *c) {
  DIR *d = opendir(dir);
  if (!d) {
    note("the vendor directory %s cannot be read (%s)", dir, strerror(errno));
    return;
  }
  char **names = NULL;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    char **grown;
    if (!is_icd_name(e->d_name) ||
        !(grown = realloc(names, (n + 1) * sizeof *names)))
      continue;
    names = grown;
    if ((names[n] = strdup(e->d_name)) != NULL)
      n++;
  }
  closedir(d);
  if (n == 0)
    note("the vendor directory %s holds no *.icd file", dir);
  else
    qsort(names, n, sizeof *names, icd_name_cmp);
  for (size_t i = 0; i < n; ++i) {
    char file[PATH_MAX];
    if (snprintf(file, sizeof file, "%s/%s", dir, names[i]) < (int)sizeof file)
      load_icd_file(file, c);
    free(names[i]);
  }
  free(names);
}

/* OCL_ICD_VENDORS (or PITRACE_OCL_ICD_VENDORS) as ocl-icd reads it: a
 * directory of *.icd files; a *.icd file, a bare name being looked for in
 * the vendor directory first; else a library name or path. */
static void load_vendor_list(const char *var, const char *list,
                             const char *vendor_dir, struct counts *c) {
  struct stat st;
  char file[PATH_MAX];
  if (stat(list, &st) == 0 && S_ISDIR(st.st_mode))
    load_icd_dir(list, c);
  else if (is_icd_name(list) && !strchr(list, '/') &&
           snprintf(file, sizeof file, "%s/%s", vendor_dir, list) <
               (int)sizeof file &&
           access(file, R_OK) == 0)
    load_icd_file(file, c);
  else if (is_icd_name(list))
    load_icd_file(list, c);
  else
    count(c, load_vendor(list, var));
}

/* Libraries named outright, colon-separated. */
static void load_library_list(const char *origin, const char *list) {
  char *copy = strdup(list), *save = NULL;
  for (char *lib = copy ? strtok_r(copy, ":", &save) : NULL; lib;
       lib = strtok_r(NULL, ":", &save))
    load_vendor(lib, origin);
  free(copy);
}

/* The whole discovery; discovery_lock is held. */
void discover(void) {
  const char *var = "PITRACE_OCL_ICD_VENDORS", *list = getenv(var);
  if (!list || !*list)
    list = getenv(var = "OCL_ICD_VENDORS");
  const char *dir = getenv("OPENCL_VENDOR_PATH");
  int dir_from_env = dir && *dir;
  if (!dir_from_env)
    dir = "/etc/OpenCL/vendors";
  if (option_notes.len)
    note("%s", option_notes.s);
  struct counts c = {0, 0};
  if (list && *list) {
    text_item(&discovery_sources, "%s=%s", var, list);
    load_vendor_list(var, list, dir, &c);
    if (c.front_ends && c.front_ends == c.listed) {
      note("%s names nothing but pitrace's front end, so it counts as unset",
           var);
      list = NULL;
    }
  }
  if (!list || !*list) {
    text_item(&discovery_sources, "%s%s",
              dir_from_env ? "OPENCL_VENDOR_PATH=" : "", dir);
    load_icd_dir(dir, &c);
  }
  const char *libs = getenv("PITRACE_OPENCL_LIBRARIES");
  if (libs && *libs) {
    text_item(&discovery_sources, "PITRACE_OPENCL_LIBRARIES=%s", libs);
    load_library_list("PITRACE_OPENCL_LIBRARIES", libs);
  }
  if (option_libraries && *option_libraries) {
    text_item(&discovery_sources, "libraries=%s", option_libraries);
    load_library_list("libraries= (plugins config)", option_libraries);
  }
  discovered = 1;
}

/* Forgets the discovery (piTearDown). The libraries that gave platforms stay
 * loaded: implementations may run threads of their own, and the ICD loader
 * never unloads them either. */
void forget_discovery(void) {
  pthread_mutex_lock(&discovery_lock);
  for (size_t i = 0; i < nvendors; ++i) {
    free(vendors[i].origin);
    free(vendors[i].path);
  }
  for (cl_uint i = 0; i < nicd_platforms; ++i)
    free(icd_platforms[i].name);
  free(vendors);
  free(icd_platforms);
  vendors = NULL;
  icd_platforms = NULL;
  nvendors = 0;
  nicd_platforms = 0;
  text_free(&discovery_sources);
  text_free(&discovery_notes);
  text_free(&option_notes);
  free(option_libraries);
  option_libraries = NULL;
  discovered = 0;
  pthread_mutex_unlock(&discovery_lock);
}

/* Says which platform a dispatch table belongs to, for messages. */
static void describe_dispatch(const struct _cl_icd_dispatch *d, char *buf,
                              size_t n) {
  pthread_mutex_lock(&discovery_lock);
  cl_uint i = 0;
  while (i < nicd_platforms && icd_platforms[i].dispatch != d)
    ++i;
  if (i < nicd_platforms)
    snprintf(buf, n, "platform '%s' (%s)", icd_platforms[i].name,
             vendors[icd_platforms[i].vendor].path);
  else
    snprintf(buf, n,
             "the OpenCL implementation of this object (its dispatch "
             "table is no discovered platform's)");
  pthread_mutex_unlock(&discovery_lock);
}

int icd_callable(const void *obj, size_t entry, const char *clfn,
                 cl_int null_error) {
  const struct _cl_icd_dispatch *d = obj ? CL_DISPATCH(obj) : NULL;
  void (*fn)(void) = NULL;
  if (!d) {
    icd_refusal = null_error;
    return 0;
  }
  memcpy(&fn, (const char *)d + entry, sizeof fn);
  if (fn)
    return 1;
  char where[PATH_MAX + 256];
  describe_dispatch(d, where, sizeof where);
  snprintf(icd_missing, sizeof icd_missing,
           "%s is NULL in the ICD dispatch table of %s: that OpenCL "
           "implementation does not provide it; use another platform or a "
           "newer version of the implementation",
           clfn, where);
  icd_refusal = ICD_MISSING_ENTRY;
  return 0;
}
