/*
 * program.c: the program manager. Device images, shared device libraries
 * (seed 000) and specialization constants (seed 003).
 *
 * Registry: modules register their pi_device_binaries from constructors.
 * The registry is plain static data under a statically initialised mutex,
 * apart from the lazily created runtime state, so registration before main
 * and unregistration after the runtime's shutdown are both safe.
 *
 * Search order: images are ordered by their module's place in the link map
 * (dl_iterate_phdr: the executable, its libraries in load order, then
 * libraries opened later with dlopen), then by registration. When several
 * modules export a symbol, the first in that order wins, as symbol lookup
 * does on Linux, and a level-1 trace line names them all.
 *
 * Building a kernel for a device: the images holding the kernel go to the
 * plugin's piextDeviceSelectBinary; the chosen image's imports are resolved
 * against the exporting images (also chosen per device by the plugin),
 * transitively. One image with no imports (but "__" ones) is built with
 * piProgramBuild; otherwise each image is compiled (piProgramCompile) and
 * all are linked (piProgramLink). Programs are cached by device, the ordered image set
 * (each image by address and registration), the native spec-constant
 * values and the options.
 *
 * Spec constants: a bundle keeps values by symbolic ID. With a SPIR-V image
 * the values are native (piextProgramSetSpecializationConstant per leaf, at
 * its offset, before the build); otherwise they are emulated: one buffer in
 * ascending numeric-ID order, pre-filled with the defaults, the values
 * copied in, passed as the kernel argument the image names.
 *
 * Every decision goes out as a pirt_note: a SYCL_PI_TRACE=1 line and a call
 * to each note hook (docs/notes.md).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pirt_internal.h"

/* ---- Registry --------------------------------------------------------------- */

typedef struct reg_entry {
  pi_device_binaries desc;
  uint64_t order; /* registration order */
  struct reg_entry *next;
} reg_entry;

/* This file's three locks are error-checking: a fork's prepare handler
 * (pm_fork_prepare) learns that the forking thread holds one already. */
static pthread_mutex_t reg_lock = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static reg_entry *reg_head;
static uint64_t reg_counter;
static uint64_t reg_generation;
/* Descriptors refused (this is a constructor: nobody to tell then), for
 * the message of a kernel looked up in vain. */
static unsigned reg_refused;
static char reg_refused_why[160];

void pirt_register_images(pi_device_binaries desc)
{
  if (!desc)
    return;
  if (desc->Version != PI_DEVICE_BINARIES_VERSION ||
      (desc->NumDeviceBinaries && !desc->DeviceBinaries)) {
    pthread_mutex_lock(&reg_lock);
    reg_refused++;
    if (desc->Version != PI_DEVICE_BINARIES_VERSION)
      snprintf(reg_refused_why, sizeof reg_refused_why, "a descriptor of version %u (this "
               "runtime takes %u)", (unsigned)desc->Version, PI_DEVICE_BINARIES_VERSION);
    else
      snprintf(reg_refused_why, sizeof reg_refused_why, "a descriptor of %u image(s) "
               "without the array of them", (unsigned)desc->NumDeviceBinaries);
    pthread_mutex_unlock(&reg_lock);
    return;
  }
  reg_entry *e = calloc(1, sizeof *e);
  if (!e)
    return;
  pthread_mutex_lock(&reg_lock);
  e->desc = desc;
  e->order = reg_counter++;
  reg_entry **tail = &reg_head;
  while (*tail)
    tail = &(*tail)->next;
  *tail = e;
  reg_generation++;
  pthread_mutex_unlock(&reg_lock);
}

void pirt_unregister_images(pi_device_binaries desc)
{
  pthread_mutex_lock(&reg_lock);
  for (reg_entry **p = &reg_head; *p; p = &(*p)->next)
    if ((*p)->desc == desc) {
      reg_entry *e = *p;
      *p = e->next;
      free(e);
      reg_generation++;
      break;
    }
  pthread_mutex_unlock(&reg_lock);
}

/* ---- Image index ---------------------------------------------------------------- */

typedef struct pm_image {
  pi_device_binary bin;
  char label[600];  /* "libfoo.so#0" */
  unsigned rank;    /* module place in the link map */
  uint64_t order;
  const char **kernels, **exports, **imports;
  size_t nkernels, nexports, nimports;
  size_t nneeded;   /* imports that need a link: those not "__"-prefixed */
  pi_device_binary_property_set spec_map, spec_defaults, spec_args;
} pm_image;

typedef struct cache_entry {
  char *key;
  pi_program prog;
  pi_context ctx; /* the entry goes when the application releases it */
  struct pirt_plugin *plugin;
  struct cache_entry *next;
} cache_entry;

static pthread_mutex_t pm_lock = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pm_image *images;
static size_t nimages;
static uint64_t images_generation = (uint64_t)-1;
static cache_entry *cache;

typedef struct {
  uintptr_t addr;
  unsigned rank, found;
  const char *name;
} phdr_probe;

static int find_module(struct dl_phdr_info *info, size_t size, void *data)
{
  (void)size;
  phdr_probe *pr = data;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && pr->addr >= start && pr->addr < start + ph->p_memsz) {
      pr->found = 1;
      pr->name = info->dlpi_name;
      return 1;
    }
  }
  pr->rank++;
  return 0;
}

static pi_device_binary_property_set find_set(pi_device_binary b, const char *name)
{
  for (pi_device_binary_property_set s = b->PropertySetsBegin;
       s && s < b->PropertySetsEnd; s++)
    if (s->Name && strcmp(s->Name, name) == 0)
      return s;
  return NULL;
}

static const char **set_names(pi_device_binary_property_set s, size_t *n)
{
  *n = s ? (size_t)(s->PropertiesEnd - s->PropertiesBegin) : 0;
  const char **v = calloc(*n ? *n : 1, sizeof *v);
  for (size_t i = 0; v && i < *n; i++)
    v[i] = s->PropertiesBegin[i].Name;
  return v;
}

static void free_index(void)
{
  for (size_t i = 0; i < nimages; i++) {
    free(images[i].kernels);
    free(images[i].exports);
    free(images[i].imports);
  }
  free(images);
  images = NULL;
  nimages = 0;
}

static int image_cmp(const void *a, const void *b)
{
  const pm_image *x = a, *y = b;
  if (x->rank != y->rank)
    return x->rank < y->rank ? -1 : 1;
  return x->order < y->order ? -1 : x->order > y->order;
}

/* The executable's file name (argv[0] may be anything). */
static const char *exe_name(void)
{
  static char path[512];
  if (!path[0]) {
    ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    if (n <= 0)
      snprintf(path, sizeof path, "%s", program_invocation_short_name);
  }
  return path;
}

/* Seed 000: "__"-prefixed (and so "__spirv_") declarations are no imports. */
static bool is_import(const char *s) { return s && strncmp(s, "__", 2) != 0; }

/* Rebuilds the index when the registry changed (under pm_lock). */
static void refresh_index(void)
{
  pthread_mutex_lock(&reg_lock);
  if (reg_generation == images_generation) {
    pthread_mutex_unlock(&reg_lock);
    return;
  }
  free_index();
  size_t n = 0;
  for (reg_entry *e = reg_head; e; e = e->next)
    n += e->desc->NumDeviceBinaries;
  images = calloc(n ? n : 1, sizeof *images);
  for (reg_entry *e = reg_head; images && e; e = e->next) {
    phdr_probe pr = {(uintptr_t)e->desc, 0, 0, NULL};
    dl_iterate_phdr(find_module, &pr);
    /* A descriptor in no module (made at run time) is no executable's:
     * "memory@ADDRESS". */
    char nomod[64];
    snprintf(nomod, sizeof nomod, "memory@%p", (void *)e->desc);
    const char *mod = !pr.found ? nomod : pr.name && *pr.name ? pr.name : exe_name();
    const char *base = pr.found ? strrchr(mod, '/') : NULL;
    base = base ? base + 1 : mod;
    for (unsigned i = 0; i < e->desc->NumDeviceBinaries; i++) {
      pm_image *im = &images[nimages++];
      im->bin = &e->desc->DeviceBinaries[i];
      snprintf(im->label, sizeof im->label, "%s#%u", base, i);
      im->rank = pr.found ? pr.rank : ~0u;
      im->order = e->order * 1000 + i;
      size_t k = (size_t)(im->bin->EntriesEnd - im->bin->EntriesBegin);
      im->kernels = calloc(k ? k : 1, sizeof *im->kernels);
      for (size_t j = 0; im->kernels && j < k; j++)
        im->kernels[j] = im->bin->EntriesBegin[j].name;
      im->nkernels = k;
      im->exports = set_names(find_set(im->bin, __SYCL_PI_PROPERTY_SET_SYCL_EXPORTED_SYMBOLS),
                              &im->nexports);
      im->imports = set_names(find_set(im->bin, __SYCL_PI_PROPERTY_SET_SYCL_IMPORTED_SYMBOLS),
                              &im->nimports);
      for (size_t j = 0; im->imports && j < im->nimports; j++)
        im->nneeded += is_import(im->imports[j]);
      im->spec_map = find_set(im->bin, __SYCL_PI_PROPERTY_SET_SPEC_CONST_MAP);
      im->spec_defaults = find_set(im->bin, __SYCL_PI_PROPERTY_SET_SPEC_CONST_DEFAULT_VALUES_MAP);
      im->spec_args = find_set(im->bin, __SYCL_PI_PROPERTY_SET_SPEC_CONST_KERNEL_ARG);
    }
  }
  qsort(images, nimages, sizeof *images, image_cmp);
  images_generation = reg_generation;
  pthread_mutex_unlock(&reg_lock);
}

static bool contains(const char **v, size_t n, const char *s)
{
  for (size_t i = 0; i < n; i++)
    if (v[i] && strcmp(v[i], s) == 0)
      return true;
  return false;
}


/* ---- Notes -------------------------------------------------------------------------- */

typedef struct {
  pirt_note_fn fn;
  void *user;
} hook;

static hook hooks[16];
static size_t nhooks;
static pthread_mutex_t hook_lock = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;

pi_result pirt_add_note_hook(pirt_note_fn fn, void *user)
{
  if (!fn)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_add_note_hook: fn is NULL");
  pthread_mutex_lock(&hook_lock);
  pi_result r = PI_SUCCESS;
  if (nhooks == sizeof hooks / sizeof *hooks)
    r = pirt_fail(PI_ERROR_OUT_OF_RESOURCES, "pirt_add_note_hook: at most %zu hooks",
                  sizeof hooks / sizeof *hooks);
  else
    hooks[nhooks++] = (hook){fn, user};
  pthread_mutex_unlock(&hook_lock);
  return r;
}

pi_result pirt_remove_note_hook(pirt_note_fn fn, void *user)
{
  pthread_mutex_lock(&hook_lock);
  for (size_t i = 0; i < nhooks; i++)
    if (hooks[i].fn == fn && hooks[i].user == user) {
      hooks[i] = hooks[--nhooks];
      break;
    }
  pthread_mutex_unlock(&hook_lock);
  return PI_SUCCESS;
}

typedef void (*plugin_note_fn)(const pirt_note *note);

void pirt_note_emit(const pirt_note *note)
{
  /* A void function: bad input is dropped, not a crash (NULL was read). */
  if (!note)
    return;
  pirt_trace(PIRT_TRACE_BASIC, "%s", note->text ? note->text : "");
  pthread_mutex_lock(&hook_lock);
  hook copy[16];
  size_t n = nhooks;
  memcpy(copy, hooks, n * sizeof *hooks);
  pthread_mutex_unlock(&hook_lock);
  for (size_t i = 0; i < n; i++)
    copy[i].fn(note, copy[i].user);
  /* Each plugin hook once (wrapped plugins share the shim's). */
  void *called[16];
  size_t ncalled = 0;
  for (size_t i = 0; i < pirt_plugin_count(); i++) {
    struct pirt_plugin *pl = pirt_plugin_at(i);
    if (!pl || !pl->note_hook)
      continue;
    bool seen = false;
    for (size_t j = 0; j < ncalled && !seen; j++)
      seen = called[j] == pl->note_hook;
    if (seen)
      continue;
    if (ncalled < 16)
      called[ncalled++] = pl->note_hook;
    ((plugin_note_fn)pl->note_hook)(note);
  }
}

bool pirt_note_wanted(void)
{
  if (pirt_trace_level & PIRT_TRACE_BASIC)
    return true;
  pthread_mutex_lock(&hook_lock);
  bool hooked = nhooks > 0;
  pthread_mutex_unlock(&hook_lock);
  for (size_t i = 0; !hooked && i < pirt_plugin_count(); i++) {
    struct pirt_plugin *pl = pirt_plugin_at(i);
    hooked = pl && pl->note_hook;
  }
  return hooked;
}

typedef size_t (*plugin_recall_fn)(int kind, void *value, size_t size);

size_t pirt_recall_note(pirt_note_kind kind, void *value, size_t size)
{
  for (size_t i = 0; i < pirt_plugin_count(); i++) {
    struct pirt_plugin *pl = pirt_plugin_at(i);
    size_t n = pl && pl->recall_hook ? ((plugin_recall_fn)pl->recall_hook)(kind, value, size) : 0;
    if (n)
      return n;
  }
  return 0;
}

static void note(pirt_note_kind kind, const char *kernel, const struct pirt_device *d,
                 const char *symbol, const char *image, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static void note(pirt_note_kind kind, const char *kernel, const struct pirt_device *d,
                 const char *symbol, const char *image, const char *fmt, ...)
{
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
  pirt_note n = {.kind = kind, .kernel = kernel, .device = d && d->name ? d->name : "",
                 .text = text, .symbol = symbol, .image = image};
  pirt_note_emit(&n);
}

/* ---- Bundles and kernels ------------------------------------------------------------ */

typedef struct spec_value {
  char *id;
  unsigned char *bytes;
  size_t size;
} spec_value;

struct pirt_bundle {
  pirt_context *context;
  spec_value *values;
  size_t nvalues;
  size_t refs; /* the application's and one per kernel (under pm_lock): a
                  kernel reads the values at each launch */
};

typedef struct recorded_arg {
  int kind; /* -1 unset; 0 bytes, 1 mem, 2 pointer, 3 local */
  size_t size;
  unsigned char *bytes;
} recorded_arg;

struct pm_kernel {
  pirt_bundle *bundle;
  pm_image **set;      /* the image set, the kernel's own image first */
  pm_image *own;       /* what set points to: copies, as the index is freed
                          when the registry changes (a dlopen) */
  size_t nset;
  bool native;         /* spec constants go to the program */
  int spec_arg;        /* emulated buffer's argument index, or -1 */
  recorded_arg *args;
  size_t nargs;
  spec_value *native_values; /* the values the current program holds */
  size_t nnative;
  pi_mem spec_buf;     /* the emulated buffer last set, and its content */
  unsigned char *spec_content;
  size_t spec_size;
};

/* Once the runtime has shut down its registry is emptied and its devices
 * freed: a bundle's calls then say so, rather than that no image holds the
 * kernel, and read no device (names in notes and messages). */
static pi_result usable(const char *fn)
{
  if (PIRT_LIKELY(pirt_global_get() != NULL))
    return PI_SUCCESS;
  return pirt_fail(PI_ERROR_UNINITIALIZED, "%s: the pitrace runtime has shut down (the "
                   "program is exiting); no kernel can be built or launched", fn);
}

pi_result pirt_bundle_create(pirt_context *c, pirt_bundle **out)
{
  if (!c || !out)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_bundle_create: context and "
                     "bundle must not be NULL");
  if (usable("pirt_bundle_create") != PI_SUCCESS)
    return PI_ERROR_UNINITIALIZED;
  pirt_bundle *b = calloc(1, sizeof *b);
  if (!b)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  b->context = pirt_context_ref(c);
  b->refs = 1;
  *out = b;
  return PI_SUCCESS;
}

static void free_values(spec_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    free(v[i].id);
    free(v[i].bytes);
  }
  free(v);
}

/* Drops a reference to b (under pm_lock); the last frees it and returns
 * its context, for the caller to unref once pm_lock is let go (the last
 * reference to a context takes pm_lock for its cached programs). */
static pirt_context *bundle_unref(pirt_bundle *b)
{
  if (--b->refs)
    return NULL;
  pirt_context *c = b->context;
  free_values(b->values, b->nvalues);
  free(b);
  return c;
}

pi_result pirt_bundle_release(pirt_bundle *b)
{
  if (!b)
    return PI_SUCCESS;
  pthread_mutex_lock(&pm_lock);
  pirt_context *c = bundle_unref(b);
  pthread_mutex_unlock(&pm_lock);
  return c ? pirt_context_unref(c, PI_SUCCESS) : PI_SUCCESS;
}

/* Sets id = bytes in a value list (replacing an earlier value). */
static pi_result set_value(spec_value **v, size_t *n, const char *id,
                           const void *value, size_t size)
{
  for (size_t i = 0; i < *n; i++)
    if (strcmp((*v)[i].id, id) == 0) {
      unsigned char *nb = malloc(size ? size : 1);
      if (!nb)
        return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
      memcpy(nb, value, size);
      free((*v)[i].bytes);
      (*v)[i].bytes = nb;
      (*v)[i].size = size;
      return PI_SUCCESS;
    }
  spec_value *nv = realloc(*v, (*n + 1) * sizeof **v);
  if (!nv)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  *v = nv;
  spec_value *s = &nv[*n];
  s->id = strdup(id);
  s->bytes = malloc(size ? size : 1);
  if (!s->id || !s->bytes) {
    free(s->id);
    free(s->bytes);
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  memcpy(s->bytes, value, size);
  s->size = size;
  (*n)++;
  return PI_SUCCESS;
}

pi_result pirt_bundle_set_spec_constant(pirt_bundle *b, const char *id,
                                        const void *value, size_t size)
{
  if (!b || !id || !value || !size)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_bundle_set_spec_constant: "
                     "bundle, symbolic ID, value and size must be given");
  /* Under pm_lock, where the bundle's values are read: another thread may
   * be getting or launching one of its kernels. */
  pthread_mutex_lock(&pm_lock);
  pi_result r = set_value(&b->values, &b->nvalues, id, value, size);
  pthread_mutex_unlock(&pm_lock);
  return r;
}

/* The descriptors {id, offset, size} of a spec constant in an image. */
static const uint32_t *spec_descs(const pm_image *im, const char *id, size_t *n)
{
  *n = 0;
  if (!im->spec_map)
    return NULL;
  for (pi_device_binary_property p = im->spec_map->PropertiesBegin;
       p < im->spec_map->PropertiesEnd; p++)
    if (p->Name && strcmp(p->Name, id) == 0) {
      *n = (size_t)(p->ValSize / 12);
      return p->ValAddr;
    }
  return NULL;
}

/* A spec constant's full size: the end of its last descriptor. */
static size_t spec_size(const uint32_t *d, size_t n)
{
  size_t end = 0;
  for (size_t i = 0; i < n; i++)
    if (d[3 * i + 1] + d[3 * i + 2] > end)
      end = d[3 * i + 1] + d[3 * i + 2];
  return end;
}

/* The image in `set` declaring spec constant `id`, with its descriptors. */
static const pm_image *spec_owner(pm_image **set, size_t nset, const char *id,
                                  const uint32_t **d, size_t *n)
{
  for (size_t i = 0; i < nset; i++)
    if ((*d = spec_descs(set[i], id, n)))
      return set[i];
  return NULL;
}

/* Checks that every value names a spec constant of the set, of its size. */
static pi_result check_values(const char *kernel, pm_image **set, size_t nset,
                              const spec_value *v, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    const uint32_t *d;
    size_t nd;
    if (!spec_owner(set, nset, v[i].id, &d, &nd))
      continue; /* a bundle value for other kernels */
    size_t want = spec_size(d, nd);
    if (v[i].size != want)
      return pirt_fail(PI_ERROR_INVALID_VALUE, "spec constant '%s' of kernel '%s' "
                       "is %zu bytes, but the value given is %zu bytes", v[i].id,
                       kernel, want, v[i].size);
  }
  return PI_SUCCESS;
}

static int value_cmp(const void *a, const void *b)
{
  return strcmp(((const spec_value *)a)->id, ((const spec_value *)b)->id);
}

/* A copy of the values of the spec constants the set declares, in symbolic
 * ID order (the order they were set in makes no other program): the
 * others (a bundle's values for its other kernels) neither reach its
 * program nor tell its programs apart. */
static pi_result declared_values(pm_image **set, size_t nset, const spec_value *v,
                                 size_t n, spec_value **out, size_t *nout)
{
  *out = NULL;
  *nout = 0;
  for (size_t i = 0; i < n; i++) {
    const uint32_t *d;
    size_t nd;
    if (!spec_owner(set, nset, v[i].id, &d, &nd))
      continue;
    pi_result r = set_value(out, nout, v[i].id, v[i].bytes, v[i].size);
    if (r != PI_SUCCESS) {
      free_values(*out, *nout);
      *out = NULL;
      *nout = 0;
      return r;
    }
  }
  if (*nout > 1)
    qsort(*out, *nout, sizeof **out, value_cmp);
  return PI_SUCCESS;
}

/* The bytes as "xx xx ...", ending in " ..." when they do not all fit
 * (a value that fits exactly was cut before). */
static void hex(char *out, size_t outn, const unsigned char *b, size_t n)
{
  size_t w = 0, i = 0;
  bool all = n * 3 <= outn; /* 3n - 1 characters and the NUL */
  out[0] = 0;
  for (; i < n && (all || w + 3 + 4 < outn); i++)
    w += (size_t)snprintf(out + w, outn - w, "%s%02x", i ? " " : "", b[i]);
  if (i < n)
    snprintf(out + w, outn - w, "%s...", i ? " " : "");
}

static void note_spec(const char *kernel, const struct pirt_device *d,
                      const spec_value *v, const uint32_t *desc, size_t nd,
                      bool native, int arg, size_t buf_off)
{
  uint32_t ids[64];
  size_t nids = 0;
  char idtext[256] = "", bytes[200];
  size_t w = 0;
  for (size_t i = 0; i < nd && nids < 64; i++) {
    if (desc[3 * i] == 0xffffffffu)
      continue; /* padding */
    ids[nids++] = desc[3 * i];
    if (w < sizeof idtext - 12)
      w += (size_t)snprintf(idtext + w, sizeof idtext - w, "%s%u", nids > 1 ? "," : "",
                            desc[3 * i]);
  }
  hex(bytes, sizeof bytes, v->bytes, v->size);
  char text[1024];
  if (native)
    snprintf(text, sizeof text, "Spec constant '%s' of kernel '%s' on \"%s\": numeric "
             "IDs %s = [%s] (%zu bytes), native: piextProgramSetSpecializationConstant "
             "per leaf", v->id, kernel, d->name ? d->name : "?", idtext, bytes, v->size);
  else
    snprintf(text, sizeof text, "Spec constant '%s' of kernel '%s' on \"%s\": numeric "
             "IDs %s = [%s] (%zu bytes), emulated: buffer offset %zu, kernel argument %d",
             v->id, kernel, d->name ? d->name : "?", idtext, bytes, v->size, buf_off, arg);
  pirt_note n = {.kind = PIRT_NOTE_SPEC_CONST, .kernel = kernel,
                 .device = d->name ? d->name : "", .text = text, .symbolic_id = v->id,
                 .numeric_ids = ids, .num_ids = (uint32_t)nids, .value = v->bytes,
                 .size = v->size, .native = native};
  pirt_note_emit(&n);
}

/* Chooses among `cand` (n images) with the plugin; NULL when none fits. */
static pm_image *select_image(struct pirt_device *dev, pm_image **cand, size_t n)
{
  if (!n)
    return NULL;
  pi_device_binary bins[64];
  if (n > 64)
    n = 64;
  for (size_t i = 0; i < n; i++)
    bins[i] = cand[i]->bin;
  pi_uint32 idx = 0;
  pi_result r = pirt_call_piextDeviceSelectBinary(dev->plugin, dev->device, bins,
                                                  (pi_uint32)n, &idx);
  /* The reason goes into the message (the callers quote it): it held an
   * earlier failure's. */
  if (r != PI_SUCCESS) {
    pirt_fail_call(dev->plugin, "piextDeviceSelectBinary", r);
    return NULL;
  }
  if (idx >= n) {
    pirt_fail(PI_ERROR_INVALID_BINARY, "piextDeviceSelectBinary chose image %u of %zu",
              (unsigned)idx, n);
    return NULL;
  }
  return cand[idx];
}

/* The image resolving `sym` for dev: the first module (in search order)
 * with an image exporting it that the device takes. */
static pm_image *resolve_symbol(struct pirt_device *dev, const char *kernel,
                                const char *sym, const pm_image *importer,
                                size_t *exporters)
{
  pm_image *cand[64], *winner = NULL;
  char others[512] = "";
  size_t w = 0, i = 0;
  *exporters = 0;
  while (i < nimages) {
    size_t n = 0;
    unsigned rank = images[i].rank;
    for (; i < nimages && images[i].rank == rank; i++)
      if (n < 64 && contains(images[i].exports, images[i].nexports, sym))
        cand[n++] = &images[i];
    *exporters += n;
    pm_image *chosen = n ? select_image(dev, cand, n) : NULL;
    if (!chosen)
      continue;
    if (!winner)
      winner = chosen;
    else if (w < sizeof others - 64)
      w += (size_t)snprintf(others + w, sizeof others - w, "%s%s", w ? ", " : "",
                            chosen->label);
  }
  if (!winner)
    return NULL;
  note(PIRT_NOTE_SYMBOL, kernel, dev, sym, winner->label,
       "Link: symbol '%s' imported by %s resolved by image %s", sym,
       importer->label, winner->label);
  if (w)
    note(PIRT_NOTE_ODR, kernel, dev, sym, winner->label,
         "ODR: symbol '%s' is exported by %s and also by %s; using %s, whose "
         "module was loaded first", sym, winner->label, others, winner->label);
  return winner;
}

/* Creates the PI program of one image. */
static pi_result create_program(pirt_context *c, const pm_image *im, pi_program *out)
{
  struct pirt_plugin *pl = c->plugin;
  pi_device_binary b = im->bin;
  size_t size = (size_t)(b->BinaryEnd - b->BinaryStart);
  pi_result r;
  if (b->Format == PI_DEVICE_BINARY_TYPE_OPENCL_C) {
    const char *src = (const char *)b->BinaryStart;
    r = pirt_call_piclProgramCreateWithSource(pl, c->ctx, 1, &src, &size, out);
  } else if (b->Format == PI_DEVICE_BINARY_TYPE_SPIRV) {
    r = pirt_call_piProgramCreate(pl, c->ctx, b->BinaryStart, size, out);
  } else {
    const unsigned char *bin = b->BinaryStart;
    r = pirt_call_piProgramCreateWithBinary(pl, c->ctx, 1, &c->device->device, &size,
                                            &bin, 0, NULL, NULL, out);
  }
  if (r != PI_SUCCESS)
    return pirt_fail_call(pl, "creating the program of image", r);
  return PI_SUCCESS;
}

/* Sets the native spec-constant values an image declares. */
static pi_result set_native(pirt_context *c, pi_program prog, const pm_image *im,
                            const char *kernel, const spec_value *v, size_t nv)
{
  for (size_t i = 0; i < nv; i++) {
    size_t nd;
    const uint32_t *d = spec_descs(im, v[i].id, &nd);
    if (!d)
      continue;
    note_spec(kernel, c->device, &v[i], d, nd, true, -1, 0);
    for (size_t l = 0; l < nd; l++) {
      if (d[3 * l] == 0xffffffffu)
        continue;
      pi_result r = pirt_call_piextProgramSetSpecializationConstant(
          c->plugin, prog, d[3 * l], d[3 * l + 2], v[i].bytes + d[3 * l + 1]);
      if (r != PI_SUCCESS) {
        pirt_fail_call(c->plugin, "piextProgramSetSpecializationConstant", r);
        return pirt_fail(r, "spec constant '%s' (numeric ID %u) of kernel '%s': %s",
                         v[i].id, d[3 * l], kernel, pirt_error_message());
      }
    }
  }
  return PI_SUCCESS;
}

static const char *opts(const char *s) { return s ? s : ""; }

/* The program for kernel's image set with these native values: from the
 * cache, or built (one image) or compiled and linked (several). */
static pi_result get_program(pirt_context *c, const char *kernel, pm_image **set,
                             size_t nset, bool native, const spec_value *v, size_t nv,
                             pi_program *out)
{
  struct pirt_device *dev = c->device;
  /* The key: device, images, options, native values (sized for all of
   * them: a key cut short would hide the values after the options). */
  size_t cap = 256 + nset * 56 + strlen(opts(set[0]->bin->CompileOptions)) +
               strlen(opts(set[0]->bin->LinkOptions));
  for (size_t i = 0; native && i < nv; i++)
    cap += strlen(v[i].id) + 2 * v[i].size + 4;
  char *key = malloc(cap);
  if (!key)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  size_t w = (size_t)snprintf(key, cap, "%p|%p", (void *)c->ctx, (void *)dev->device);
  char labels[512] = "";
  size_t lw = 0;
  for (size_t i = 0; i < nset; i++) {
    /* The image's address and its registration: a library closed and
     * another opened at the same address registers other images there. */
    w += (size_t)snprintf(key + w, cap - w, "|%p@%" PRIu64, (void *)set[i]->bin,
                          set[i]->order);
    if (lw < sizeof labels - 40)
      lw += (size_t)snprintf(labels + lw, sizeof labels - lw, "%s%s", i ? ", " : "",
                             set[i]->label);
  }
  w += (size_t)snprintf(key + w, cap - w, "|%s|%s", opts(set[0]->bin->CompileOptions),
                        opts(set[0]->bin->LinkOptions));
  for (size_t i = 0; native && i < nv; i++) {
    w += (size_t)snprintf(key + w, cap - w, "|%s=", v[i].id);
    for (size_t j = 0; j < v[i].size; j++)
      w += (size_t)snprintf(key + w, cap - w, "%02x", v[i].bytes[j]);
  }
  for (cache_entry *e = cache; e; e = e->next)
    if (strcmp(e->key, key) == 0) {
      note(PIRT_NOTE_CACHE, kernel, dev, NULL, set[0]->label,
           "Program cache hit: kernel '%s' on \"%s\" (images %s)", kernel,
           dev->name ? dev->name : "?", labels);
      free(key);
      *out = e->prog;
      return PI_SUCCESS;
    }
  note(PIRT_NOTE_CACHE, kernel, dev, NULL, set[0]->label,
       "Program cache miss: kernel '%s' on \"%s\" (images %s)", kernel,
       dev->name ? dev->name : "?", labels);

  struct pirt_plugin *pl = c->plugin;
  pi_program prog = NULL;
  pi_result r;
  if (nset == 1 && set[0]->nneeded == 0) {
    note(PIRT_NOTE_LINK, kernel, dev, NULL, set[0]->label,
         "Link decision: kernel '%s' on \"%s\": image %s has no imports: "
         "piProgramBuild with options '%s'", kernel, dev->name ? dev->name : "?",
         set[0]->label, opts(set[0]->bin->CompileOptions));
    r = create_program(c, set[0], &prog);
    if (r == PI_SUCCESS && native)
      r = set_native(c, prog, set[0], kernel, v, nv);
    if (r == PI_SUCCESS) {
      r = pirt_call_piProgramBuild(pl, prog, 1, &dev->device,
                                   opts(set[0]->bin->CompileOptions), NULL, NULL);
      if (r != PI_SUCCESS)
        pirt_fail_call(pl, "piProgramBuild", r);
    }
  } else {
    note(PIRT_NOTE_LINK, kernel, dev, NULL, set[0]->label,
         "Link decision: kernel '%s' on \"%s\": images %s: piProgramCompile each "
         "(options '%s'), then piProgramLink (options '%s')", kernel,
         dev->name ? dev->name : "?", labels, opts(set[0]->bin->CompileOptions),
         opts(set[0]->bin->LinkOptions));
    pi_program parts[64];
    size_t made = 0;
    r = PI_SUCCESS;
    for (size_t i = 0; i < nset && i < 64 && r == PI_SUCCESS; i++) {
      r = create_program(c, set[i], &parts[i]);
      if (r != PI_SUCCESS)
        break;
      made++;
      if (native)
        r = set_native(c, parts[i], set[i], kernel, v, nv);
      if (r == PI_SUCCESS) {
        r = pirt_call_piProgramCompile(pl, parts[i], 1, &dev->device,
                                       opts(set[i]->bin->CompileOptions), 0, NULL,
                                       NULL, NULL, NULL);
        if (r != PI_SUCCESS)
          pirt_fail_call(pl, "piProgramCompile", r);
      }
    }
    if (r == PI_SUCCESS) {
      r = pirt_call_piProgramLink(pl, c->ctx, 1, &dev->device,
                                  opts(set[0]->bin->LinkOptions), (pi_uint32)made,
                                  parts, NULL, NULL, &prog);
      if (r != PI_SUCCESS)
        pirt_fail_call(pl, "piProgramLink", r);
    }
    for (size_t i = 0; i < made; i++)
      pirt_call_piProgramRelease(pl, parts[i]);
  }
  if (r != PI_SUCCESS) {
    char log[4096] = "";
    if (prog) {
      size_t n = 0;
      if (pirt_call_piProgramGetBuildInfo(pl, prog, dev->device, PI_PROGRAM_BUILD_INFO_LOG,
                                          sizeof log - 1, log, &n) != PI_SUCCESS)
        log[0] = 0;
      pirt_call_piProgramRelease(pl, prog);
    }
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", pirt_error_message());
    free(key);
    return pirt_fail(r, "building kernel '%s' for \"%s\" from images %s: %s%s%s", kernel,
                     dev->name ? dev->name : "?", labels, msg,
                     log[0] ? "; build log:\n" : "", log);
  }
  cache_entry *e = calloc(1, sizeof *e);
  if (e) {
    e->key = key;
    e->prog = prog;
    e->ctx = c->ctx;
    e->plugin = pl;
    e->next = cache;
    cache = e;
  } else {
    free(key);
  }
  *out = prog;
  return PI_SUCCESS;
}

/* The image set of kernel `name` for the context's device. */
static pi_result collect_images(pirt_context *c, const char *name, pm_image ***out,
                                size_t *nout)
{
  struct pirt_device *dev = c->device;
  pm_image *cand[64];
  size_t n = 0;
  for (size_t i = 0; i < nimages && n < 64; i++)
    if (contains(images[i].kernels, images[i].nkernels, name))
      cand[n++] = &images[i];
  if (!n) {
    char refused[256] = "";
    pthread_mutex_lock(&reg_lock);
    if (reg_refused)
      snprintf(refused, sizeof refused, "; %u registration(s) refused, the last %s",
               reg_refused, reg_refused_why);
    pthread_mutex_unlock(&reg_lock);
    return pirt_fail(PI_ERROR_INVALID_KERNEL_NAME, "no registered device image holds "
                     "kernel '%s' (%zu image(s) registered; register them with "
                     "pitrace_add_device_code%s)", name, nimages, refused);
  }
  pm_image *first = select_image(dev, cand, n);
  if (!first)
    return pirt_fail(PI_ERROR_INVALID_BINARY, "kernel '%s': none of its %zu image(s) "
                     "suits device \"%s\" (the plugin's piextDeviceSelectBinary "
                     "refused them all: %s)", name, n, dev->name ? dev->name : "?",
                     pirt_error_message());
  size_t cap = 8, nset = 1;
  pm_image **set = malloc(cap * sizeof *set);
  if (!set)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  set[0] = first;
  /* Breadth-first over imports; a symbol any image of the set exports
   * resolves there. */
  for (size_t i = 0; i < nset; i++) {
    pm_image *im = set[i];
    for (size_t s = 0; s < im->nimports; s++) {
      const char *sym = im->imports[s];
      if (!is_import(sym))
        continue;
      bool have = false;
      for (size_t j = 0; j < nset && !have; j++)
        have = contains(set[j]->exports, set[j]->nexports, sym);
      if (have)
        continue;
      size_t exporters;
      pm_image *x = resolve_symbol(dev, name, sym, im, &exporters);
      if (!x && exporters) {
        /* Images export it, of formats the device does not take: say so,
         * with the plugin's reason (select_image left it). */
        char why[512];
        snprintf(why, sizeof why, "%s", pirt_error_message());
        free(set);
        return pirt_fail(PI_ERROR_INVALID_KERNEL_NAME, "unresolved import: image %s "
                         "(needed by kernel '%s') imports '%s': %zu image(s) export it, "
                         "but none suits device \"%s\" (%s)", im->label, name, sym,
                         exporters, dev->name ? dev->name : "?", why);
      }
      if (!x) {
        free(set);
        return pirt_fail(PI_ERROR_INVALID_KERNEL_NAME, "unresolved import: image %s "
                         "(needed by kernel '%s') imports '%s', which no registered "
                         "image for device \"%s\" exports", im->label, name, sym,
                         dev->name ? dev->name : "?");
      }
      bool dup = false;
      for (size_t j = 0; j < nset; j++)
        dup |= set[j] == x;
      if (dup)
        continue;
      if (nset == cap) {
        pm_image **ns = realloc(set, (cap *= 2) * sizeof *set);
        if (!ns) {
          free(set);
          return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
        }
        set = ns;
      }
      set[nset++] = x;
    }
  }
  *out = set;
  *nout = nset;
  return PI_SUCCESS;
}

static int spec_arg_of(const pm_image *im, const char *kernel)
{
  if (!im->spec_args)
    return -1;
  for (pi_device_binary_property p = im->spec_args->PropertiesBegin;
       p < im->spec_args->PropertiesEnd; p++)
    if (p->Name && strcmp(p->Name, kernel) == 0)
      return (int)p->ValSize;
  return -1;
}

/* Copies of the set's images for a kernel, and the set pointed at them:
 * the index they come from is freed when the registry changes (a dlopen),
 * while the kernel lives on. The copies keep what builds and spec
 * constants read (the binary, label, property sets, the number of
 * imports that need a link), not the name lists. NULL when out of memory. */
static pm_image *own_images(pm_image **set, size_t nset)
{
  pm_image *own = malloc(nset * sizeof *own);
  for (size_t i = 0; own && i < nset; i++) {
    own[i] = *set[i];
    own[i].kernels = own[i].exports = own[i].imports = NULL;
    own[i].nkernels = own[i].nexports = own[i].nimports = 0;
    set[i] = &own[i];
  }
  return own;
}

pi_result pirt_bundle_get_kernel(pirt_bundle *b, const char *name, pirt_kernel **out)
{
  if (!b || !name || !out)
    return pirt_fail(PI_ERROR_INVALID_VALUE, "pirt_bundle_get_kernel: bundle, name "
                     "and kernel must not be NULL");
  if (usable("pirt_bundle_get_kernel") != PI_SUCCESS)
    return PI_ERROR_UNINITIALIZED;
  pirt_context *c = b->context;
  pthread_mutex_lock(&pm_lock);
  refresh_index();
  pm_image **set = NULL;
  size_t nset = 0;
  pi_result r = collect_images(c, name, &set, &nset);
  pirt_kernel *k = NULL;
  struct pm_kernel *pm = NULL;
  pm_image *own = NULL;
  if (r == PI_SUCCESS && !(own = own_images(set, nset)))
    r = pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  if (r == PI_SUCCESS)
    r = check_values(name, set, nset, b->values, b->nvalues);
  bool native = r == PI_SUCCESS && set[0]->bin->Format == PI_DEVICE_BINARY_TYPE_SPIRV;
  pi_program prog = NULL;
  spec_value *nv = NULL; /* native: the values the program holds */
  size_t nnv = 0;
  if (r == PI_SUCCESS && native)
    r = declared_values(set, nset, b->values, b->nvalues, &nv, &nnv);
  if (r == PI_SUCCESS)
    r = get_program(c, name, set, nset, native, nv, nnv, &prog);
  if (r == PI_SUCCESS) {
    k = calloc(1, sizeof *k);
    pm = calloc(1, sizeof *pm);
    if (!k || !pm || !(k->name = strdup(name)))
      r = pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  if (r == PI_SUCCESS) {
    r = pirt_call_piKernelCreate(c->plugin, prog, name, &k->k);
    if (r != PI_SUCCESS)
      pirt_fail_call(c->plugin, "piKernelCreate", r);
  }
  if (r != PI_SUCCESS) {
    if (k)
      free(k->name);
    free(k);
    free(pm);
    free(set);
    free(own);
    free_values(nv, nnv);
    pthread_mutex_unlock(&pm_lock);
    return r;
  }
  k->context = pirt_context_ref(c);
  k->pm = pm;
  pm->bundle = b;
  b->refs++;
  pm->set = set;
  pm->nset = nset;
  pm->own = own;
  pm->native = native;
  pm->spec_arg = native ? -1 : spec_arg_of(set[0], name);
  pm->native_values = nv;
  pm->nnative = nnv;
  pthread_mutex_unlock(&pm_lock);
  *out = k;
  return PI_SUCCESS;
}

void pm_record_arg(pirt_kernel *k, unsigned index, int kind, size_t size,
                   const void *value)
{
  struct pm_kernel *pm = k->pm;
  if (index >= pm->nargs) {
    recorded_arg *na = realloc(pm->args, (index + 1) * sizeof *na);
    if (!na)
      return;
    for (size_t i = pm->nargs; i <= index; i++)
      na[i] = (recorded_arg){-1, 0, NULL};
    pm->args = na;
    pm->nargs = index + 1;
  }
  recorded_arg *a = &pm->args[index];
  free(a->bytes);
  a->bytes = NULL;
  a->kind = kind;
  a->size = size;
  if (value && (a->bytes = malloc(size ? size : 1)))
    memcpy(a->bytes, value, size);
}

void pm_kernel_free(pirt_kernel *k)
{
  struct pm_kernel *pm = k->pm;
  if (!pm)
    return;
  if (pm->spec_buf)
    pirt_call_piMemRelease(k->context->plugin, pm->spec_buf);
  for (size_t i = 0; i < pm->nargs; i++)
    free(pm->args[i].bytes);
  free(pm->args);
  free(pm->set);
  free(pm->own);
  free(pm->spec_content);
  free_values(pm->native_values, pm->nnative);
  pthread_mutex_lock(&pm_lock);
  pirt_context *c = bundle_unref(pm->bundle);
  pthread_mutex_unlock(&pm_lock);
  free(pm);
  k->pm = NULL;
  if (c)
    pirt_context_unref(c, PI_SUCCESS);
}

/* Native: the kernel object for these values (a rebuild when they differ
 * from the current program's), with its recorded arguments set again. */
static pi_result use_native_values(pirt_kernel *k, const spec_value *v, size_t n)
{
  struct pm_kernel *pm = k->pm;
  bool same = n == pm->nnative;
  for (size_t i = 0; same && i < n; i++)
    same = strcmp(v[i].id, pm->native_values[i].id) == 0 &&
           v[i].size == pm->native_values[i].size &&
           memcmp(v[i].bytes, pm->native_values[i].bytes, v[i].size) == 0;
  if (same)
    return PI_SUCCESS;
  pirt_context *c = k->context;
  struct pirt_plugin *pl = c->plugin;
  pi_program prog;
  pi_result r = get_program(c, k->name, pm->set, pm->nset, true, v, n, &prog);
  if (r != PI_SUCCESS)
    return r;
  pi_kernel nk;
  r = pirt_call_piKernelCreate(pl, prog, k->name, &nk);
  if (r != PI_SUCCESS)
    return pirt_fail_call(pl, "piKernelCreate", r);
  for (size_t i = 0; i < pm->nargs && r == PI_SUCCESS; i++) {
    recorded_arg *a = &pm->args[i];
    switch (a->kind) {
    case 0: r = pirt_call_piKernelSetArg(pl, nk, (pi_uint32)i, a->size, a->bytes); break;
    case 1: r = pirt_call_piextKernelSetArgMemObj(pl, nk, (pi_uint32)i, NULL,
                                                  (const pi_mem *)a->bytes); break;
    case 2: r = pirt_call_piextKernelSetArgPointer(pl, nk, (pi_uint32)i, a->size,
                                                   a->bytes); break;
    case 3: r = pirt_call_piKernelSetArg(pl, nk, (pi_uint32)i, a->size, NULL); break;
    default: break;
    }
  }
  if (r != PI_SUCCESS) {
    pirt_call_piKernelRelease(pl, nk);
    return pirt_fail_call(pl, "setting the arguments again", r);
  }
  pirt_call_piKernelRelease(pl, k->k);
  k->k = nk;
  free_values(pm->native_values, pm->nnative);
  pm->native_values = NULL;
  pm->nnative = 0;
  for (size_t i = 0; i < n; i++)
    set_value(&pm->native_values, &pm->nnative, v[i].id, v[i].bytes, v[i].size);
  return PI_SUCCESS;
}

typedef struct {
  const char *id;
  uint32_t first;
  const uint32_t *d;
  size_t nd;
} spec_slot;

static int slot_cmp(const void *a, const void *b)
{
  const spec_slot *x = a, *y = b;
  return x->first < y->first ? -1 : x->first > y->first;
}

/* Emulated: the buffer of defaults overlaid with the values, as the
 * kernel's spec-constant argument. */
static pi_result use_emulated_values(pirt_kernel *k, const spec_value *v, size_t n)
{
  struct pm_kernel *pm = k->pm;
  const pm_image *im = pm->set[0];
  pirt_context *c = k->context;
  if (pm->spec_arg < 0 || !im->spec_map)
    return PI_SUCCESS; /* the kernel takes no spec constants */
  /* Offsets: constants in ascending numeric-ID order, each after the sizes
   * of those before it (seed 003). */
  size_t ns = (size_t)(im->spec_map->PropertiesEnd - im->spec_map->PropertiesBegin);
  spec_slot *slots = calloc(ns ? ns : 1, sizeof *slots);
  if (!slots)
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  for (size_t i = 0; i < ns; i++) {
    pi_device_binary_property p = &im->spec_map->PropertiesBegin[i];
    slots[i].id = p->Name;
    slots[i].d = p->ValAddr;
    slots[i].nd = (size_t)(p->ValSize / 12);
    slots[i].first = slots[i].nd ? slots[i].d[0] : 0;
  }
  qsort(slots, ns, sizeof *slots, slot_cmp);
  size_t total = 0;
  for (size_t i = 0; i < ns; i++)
    total += spec_size(slots[i].d, slots[i].nd);
  unsigned char *content = calloc(1, total ? total : 1);
  if (!content) {
    free(slots);
    return pirt_fail(PI_ERROR_OUT_OF_HOST_MEMORY, "out of memory");
  }
  if (im->spec_defaults && im->spec_defaults->PropertiesBegin < im->spec_defaults->PropertiesEnd) {
    pi_device_binary_property dp = im->spec_defaults->PropertiesBegin;
    memcpy(content, dp->ValAddr, dp->ValSize < total ? dp->ValSize : total);
  }
  size_t off = 0;
  for (size_t i = 0; i < ns; i++) {
    for (size_t j = 0; j < n; j++)
      if (strcmp(v[j].id, slots[i].id) == 0) {
        memcpy(content + off, v[j].bytes, v[j].size);
        note_spec(k->name, c->device, &v[j], slots[i].d, slots[i].nd, false,
                  pm->spec_arg, off);
      }
    off += spec_size(slots[i].d, slots[i].nd);
  }
  free(slots);
  struct pirt_plugin *pl = c->plugin;
  if (pm->spec_buf && pm->spec_size == total && memcmp(pm->spec_content, content, total) == 0) {
    free(content);
    return PI_SUCCESS; /* the buffer already set holds these values */
  }
  pi_mem buf;
  pi_result r = pirt_call_piMemBufferCreate(pl, c->ctx,
                                            PI_MEM_ACCESS_READ_ONLY | PI_MEM_FLAGS_HOST_PTR_COPY,
                                            total ? total : 1, content, &buf, NULL);
  if (r != PI_SUCCESS) {
    free(content);
    return pirt_fail_call(pl, "piMemBufferCreate (spec-constant buffer)", r);
  }
  r = pirt_call_piextKernelSetArgMemObj(pl, k->k, (pi_uint32)pm->spec_arg, NULL, &buf);
  if (r != PI_SUCCESS) {
    pirt_call_piMemRelease(pl, buf);
    free(content);
    return pirt_fail_call(pl, "piextKernelSetArgMemObj (spec-constant buffer)", r);
  }
  if (pm->spec_buf)
    pirt_call_piMemRelease(pl, pm->spec_buf);
  free(pm->spec_content);
  pm->spec_buf = buf;
  pm->spec_content = content;
  pm->spec_size = total;
  return PI_SUCCESS;
}

/* Applies the bundle's values and the launch's on top (api.c launches). */
pi_result pm_prepare_launch(pirt_kernel *k, unsigned nvalues, const pirt_spec_value *values)
{
  struct pm_kernel *pm = k->pm;
  if (usable("pirt_launch") != PI_SUCCESS)
    return PI_ERROR_UNINITIALIZED;
  spec_value *v = NULL;
  size_t n = 0;
  pi_result r = PI_SUCCESS;
  pthread_mutex_lock(&pm_lock); /* the bundle's values may change meanwhile */
  for (size_t i = 0; i < pm->bundle->nvalues && r == PI_SUCCESS; i++)
    r = set_value(&v, &n, pm->bundle->values[i].id, pm->bundle->values[i].bytes,
                  pm->bundle->values[i].size);
  for (unsigned i = 0; i < nvalues && r == PI_SUCCESS; i++) {
    if (!values[i].symbolic_id || !values[i].value || !values[i].size)
      r = pirt_fail(PI_ERROR_INVALID_VALUE, "launch of kernel '%s': spec value %u "
                    "needs a symbolic ID, a value and a size", k->name, i);
    else
      r = set_value(&v, &n, values[i].symbolic_id, values[i].value, values[i].size);
  }
  if (r == PI_SUCCESS)
    r = check_values(k->name, pm->set, pm->nset, v, n);
  if (r == PI_SUCCESS && pm->native) {
    spec_value *dv;
    size_t ndv;
    r = declared_values(pm->set, pm->nset, v, n, &dv, &ndv);
    if (r == PI_SUCCESS)
      r = use_native_values(k, dv, ndv);
    free_values(dv, ndv);
  } else if (r == PI_SUCCESS) {
    r = use_emulated_values(k, v, n);
  }
  pthread_mutex_unlock(&pm_lock);
  free_values(v, n);
  return r;
}

/* The application releases context ctx: its cached programs go first, while
 * the backend is certainly alive (at exit a driver may be gone before the
 * runtime's destructor runs), and no later context at the same address can
 * hit an entry of this one. Kernels the application still holds keep their
 * program alive through the plugin's own reference. */
void pm_context_released(pi_context ctx)
{
  pthread_mutex_lock(&pm_lock);
  for (cache_entry **link = &cache; *link;) {
    cache_entry *e = *link;
    if (e->ctx != ctx) {
      link = &e->next;
      continue;
    }
    *link = e->next;
    pi_result r = pirt_call_piProgramRelease(e->plugin, e->prog);
    if (r != PI_SUCCESS)
      pirt_trace(PIRT_TRACE_BASIC, "Program cache: releasing a program of a released "
                 "context failed with %s", pi_result_name(r));
    free(e->key);
    free(e);
  }
  pthread_mutex_unlock(&pm_lock);
}

/* Across fork (global.c's handlers call these, after its own lock): a
 * child forked while another thread held pm_lock (a bundle's kernel being
 * looked up or built) had it locked for good, and its exit hung in
 * pm_shutdown, even in a child that never used the runtime: 9 children of
 * 10 with a thread getting bundle kernels meanwhile. The forking thread
 * takes them in the order they nest (pm_lock, reg_lock, hook_lock), but
 * not one it holds itself (a note hook that forks): that one would
 * deadlock on itself. */
static pthread_mutex_t *const fork_locks[] = {&pm_lock, &reg_lock, &hook_lock};
static bool fork_taken[3];

void pm_fork_prepare(void)
{
  for (size_t i = 0; i < 3; i++)
    fork_taken[i] = pthread_mutex_lock(fork_locks[i]) == 0;
}

void pm_fork_parent(void)
{
  for (size_t i = 3; i-- > 0;)
    if (fork_taken[i])
      pthread_mutex_unlock(fork_locks[i]);
}

/* The child's only thread is the forking one: each lock is made anew, free
 * (one it held before the fork is owned by its thread id in the parent,
 * which an error-checking mutex would refuse to let go here). */
void pm_fork_child(void)
{
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ERRORCHECK);
  for (size_t i = 0; i < 3; i++)
    pthread_mutex_init(fork_locks[i], &attr);
  pthread_mutexattr_destroy(&attr);
}

void pm_shutdown(void)
{
  pthread_mutex_lock(&pm_lock);
  for (cache_entry *e = cache, *next; e; e = next) {
    next = e->next;
    pirt_call_piProgramRelease(e->plugin, e->prog);
    free(e->key);
    free(e);
  }
  cache = NULL;
  free_index();
  images_generation = (uint64_t)-1;
  pthread_mutex_unlock(&pm_lock);
  pthread_mutex_lock(&reg_lock);
  for (reg_entry *e = reg_head, *next; e; e = next) {
    next = e->next;
    free(e);
  }
  reg_head = NULL;
  reg_generation++;
  pthread_mutex_unlock(&reg_lock);
  pthread_mutex_lock(&hook_lock);
  nhooks = 0;
  pthread_mutex_unlock(&hook_lock);
}
