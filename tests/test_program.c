/*
 * test_program.c: the program manager on real devices (CTest runs it on
 * PoCL and on rusticl): image selection, shared device libraries with
 * their ODR and dlopen-order corner cases, unresolved imports, the program
 * cache, and specialization constants (the seed's composites and
 * default-values example), plus the notes the runtime hands to hooks.
 *
 * This program's own images (tests/device/k_*.cl, spec.cl) are embedded by
 * pitrace_add_device_code; libodr_a.so and libodr_b.so, linked in that
 * order, both export which_lib; liblate.so is opened with dlopen.
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <malloc.h>

#include "pirt.h"
#include "testutil.h"

#define TRY(call) cr_assert_eq((call), PI_SUCCESS, "%s", pirt_error_message())

int odr_a_host(void);
int odr_b_host(void);

static pirt_device *dev;
static pirt_context *ctx;
static pirt_queue *q;
static pirt_bundle *bundle;
static char *trace;

static void setup(void)
{
  trace = tu_temp_path(".trace");
  setenv("SYCL_PI_TRACE", "3", 1); /* level 1 and the calls */
  setenv("SYCL_PI_TRACE_FILE", trace, 1);
  cr_assert_eq(odr_a_host() + odr_b_host(), 0);
  TRY(pirt_device_select(NULL, &dev));
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_bundle_create(ctx, &bundle));
}

static void teardown(void)
{
  TRY(pirt_bundle_release(bundle));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  unlink(trace);
}

TestSuite(program, .init = setup, .fini = teardown);

/* Runs a one-int kernel and returns what it wrote. */
static int run_int_kernel(pirt_kernel *k)
{
  pirt_buffer *b;
  int v = -1;
  TRY(pirt_buffer_create(ctx, 0, sizeof v, NULL, &b));
  TRY(pirt_kernel_set_buffer(k, 0, b));
  size_t one = 1;
  TRY(pirt_launch(q, k, 1, &one, NULL, 0, NULL, NULL));
  TRY(pirt_read(q, b, true, 0, sizeof v, &v, 0, NULL, NULL));
  TRY(pirt_buffer_release(b));
  return v;
}

static int kernel_value(const char *name)
{
  pirt_kernel *k;
  TRY(pirt_bundle_get_kernel(bundle, name, &k));
  int v = run_int_kernel(k);
  TRY(pirt_kernel_release(k));
  return v;
}

Test(program, image_without_imports_is_built_directly)
{
  cr_assert_eq(kernel_value("k_plain"), 0);
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert(strstr(t, "Link decision: kernel 'k_plain' on \""), "%s", t);
  cr_assert(strstr(t, "has no imports: piProgramBuild"), "%s", t);
  cr_assert(strstr(t, "---> piextDeviceSelectBinary("), "%s", t);
  cr_assert(strstr(t, "---> piProgramBuild("), "%s", t);
  cr_assert_null(strstr(t, "---> piProgramLink("), "a link step without imports");
}

Test(program, shared_library_symbol_is_compiled_and_linked)
{
  cr_assert_eq(kernel_value("k_which"), 1);
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert_eq(tu_count(t, "---> piProgramCompile("), 2, "%s", t);
  cr_assert_eq(tu_count(t, "---> piProgramLink("), 1, "%s", t);
  cr_assert(strstr(t, "Link: symbol 'which_lib' imported by test_program#"), "%s", t);
  cr_assert(strstr(t, "resolved by image libodr_a.so#0"), "%s", t);
}

Test(program, odr_first_loaded_library_wins)
{
  cr_assert_eq(kernel_value("k_which"), 1, "libodr_b.so's definition was used");
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert(strstr(t, "ODR: symbol 'which_lib' is exported by libodr_a.so#0 and also "
                      "by libodr_b.so#0; using libodr_a.so#0, whose module was loaded "
                      "first"), "%s", t);
}

Test(program, dlopened_library_is_searched_after_startup_ones)
{
  pirt_kernel *k;
  cr_assert_eq(pirt_bundle_get_kernel(bundle, "k_late", &k), PI_ERROR_INVALID_KERNEL_NAME);
  cr_assert(strstr(pirt_error_message(), "imports 'late_only', which no registered "
                                         "image for device"), "%s", pirt_error_message());
  void *late = dlopen(PITRACE_LIB_DIR "/liblate.so", RTLD_NOW | RTLD_LOCAL);
  cr_assert(late, "%s", dlerror());
  cr_assert_eq(kernel_value("k_late"), 4);
  cr_assert_eq(kernel_value("k_which"), 1, "the late library overrode a start-up one");
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert(strstr(t, "using libodr_a.so#0"), "%s", t);
  cr_assert(strstr(t, "also by libodr_b.so#0, liblate.so#0"), "%s", t);
  dlclose(late);
  cr_assert_eq(pirt_bundle_get_kernel(bundle, "k_late", &k), PI_ERROR_INVALID_KERNEL_NAME,
               "liblate.so's images outlived its dlclose");
}

Test(program, unresolved_import_names_the_symbol_and_the_image)
{
  pirt_kernel *k;
  cr_assert_eq(pirt_bundle_get_kernel(bundle, "k_missing", &k), PI_ERROR_INVALID_KERNEL_NAME);
  const char *m = pirt_error_message();
  cr_assert(strstr(m, "unresolved import: image test_program#"), "%s", m);
  cr_assert(strstr(m, "(needed by kernel 'k_missing') imports 'missing_fn'"), "%s", m);
}

Test(program, unknown_kernel_is_a_clear_error)
{
  pirt_kernel *k;
  cr_assert_eq(pirt_bundle_get_kernel(bundle, "k_nowhere", &k), PI_ERROR_INVALID_KERNEL_NAME);
  cr_assert(strstr(pirt_error_message(), "no registered device image holds kernel "
                                         "'k_nowhere'"), "%s", pirt_error_message());
}

Test(program, second_launch_does_not_build_or_link_again)
{
  cr_assert_eq(kernel_value("k_which"), 1);
  pirt_bundle *other;
  TRY(pirt_bundle_create(ctx, &other));
  pirt_kernel *k;
  TRY(pirt_bundle_get_kernel(other, "k_which", &k));
  cr_assert_eq(run_int_kernel(k), 1);
  cr_assert_eq(run_int_kernel(k), 1);
  TRY(pirt_kernel_release(k));
  TRY(pirt_bundle_release(other));
  cr_assert_eq(kernel_value("k_which"), 1);
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert_eq(tu_count(t, "---> piProgramCompile("), 2, "%s", t);
  cr_assert_eq(tu_count(t, "---> piProgramLink("), 1, "%s", t);
  cr_assert_eq(tu_count(t, "Program cache miss: kernel 'k_which'"), 1, "%s", t);
  cr_assert_eq(tu_count(t, "Program cache hit: kernel 'k_which'"), 2, "%s", t);
}

/* The cache holds programs per context: releasing the context releases them
 * first (while the backend is alive: at exit CUDA is gone before the
 * runtime's destructor), and a later context, even one at the same address,
 * builds again. */
Test(program, a_released_context_takes_its_cached_programs_with_it)
{
  cr_assert_eq(kernel_value("k_plain"), 0);
  TRY(pirt_bundle_release(bundle));
  TRY(pirt_queue_release(q));
  TRY(pirt_context_release(ctx));
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  char *ctx_release = strstr(t, "---> piContextRelease(");
  cr_assert(ctx_release, "%s", t);
  *ctx_release = 0;
  cr_assert_eq(tu_count(t, "---> piProgramRelease("), 1,
               "the cached program is released before its context: %s", t);
  TRY(pirt_context_create(dev, &ctx));
  TRY(pirt_queue_create(ctx, 0, &q));
  TRY(pirt_bundle_create(ctx, &bundle));
  cr_assert_eq(kernel_value("k_plain"), 0);
  t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert_eq(tu_count(t, "Program cache miss: kernel 'k_plain'"), 2, "%s", t);
  cr_assert_eq(tu_count(t, "Program cache hit: kernel 'k_plain'"), 0, "%s", t);
}

/* The application may release a context before what it made in it (SYCL's
 * objects keep their context, OpenCL's too): its queue, buffer, bundle and
 * bundle kernel went on pointing at the freed context. They keep it now;
 * the PI context and its cached programs go with the last of them. */
Test(program, objects_keep_a_context_the_application_released)
{
  pirt_context *c;
  pirt_queue *cq;
  pirt_bundle *cb;
  pirt_kernel *k;
  pirt_buffer *b;
  TRY(pirt_context_create(dev, &c));
  TRY(pirt_queue_create(c, 0, &cq));
  TRY(pirt_bundle_create(c, &cb));
  TRY(pirt_bundle_get_kernel(cb, "k_plain", &k));
  TRY(pirt_buffer_create(c, 0, sizeof(int), NULL, &b));
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  int released = tu_count(t, "---> piContextRelease(");
  TRY(pirt_context_release(c));
  TRY(pirt_bundle_release(cb));
  int v = -1;
  TRY(pirt_kernel_set_buffer(k, 0, b));
  size_t one = 1;
  TRY(pirt_launch(cq, k, 1, &one, NULL, 0, NULL, NULL));
  TRY(pirt_read(cq, b, true, 0, sizeof v, &v, 0, NULL, NULL));
  cr_assert_eq(v, 0);
  TRY(pirt_kernel_release(k));
  TRY(pirt_queue_release(cq));
  t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert_eq(tu_count(t, "---> piContextRelease("), released,
               "the context went while a buffer was in it: %s", t);
  TRY(pirt_buffer_release(b));
  t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert_eq(tu_count(t, "---> piContextRelease("), released + 1, "%s", t);
  char *last = strstr(t, "---> piMemRelease(");
  for (char *n; last && (n = strstr(last + 1, "---> piMemRelease("));)
    last = n;
  cr_assert(last && strstr(last, "---> piContextRelease("),
            "the context is released after its last buffer: %s", t);
}

/* ---- Spec constants ----------------------------------------------------------- */

typedef struct {
  float a, b;
} Nested;
typedef struct {
  int x;
  Nested n;
} A;

static void spec_values(pirt_kernel *k, unsigned nvalues, const pirt_spec_value *v,
                        float out[6])
{
  pirt_buffer *b;
  TRY(pirt_buffer_create(ctx, 0, 6 * sizeof(float), NULL, &b));
  TRY(pirt_kernel_set_buffer(k, 0, b));
  size_t one = 1;
  TRY(pirt_launch_spec(q, k, 1, &one, NULL, nvalues, v, 0, NULL, NULL));
  TRY(pirt_read(q, b, true, 0, 6 * sizeof(float), out, 0, NULL, NULL));
  TRY(pirt_buffer_release(b));
}

static void expect6(const float got[6], const float want[6])
{
  for (int i = 0; i < 6; i++)
    cr_assert_float_eq(got[i], want[i], 1e-6, "value %d: got %g, want %g", i, got[i],
                       want[i]);
}

Test(program, spec_constant_defaults_follow_the_seed_example)
{
  pirt_kernel *k;
  TRY(pirt_bundle_get_kernel(bundle, "k_spec", &k));
  float out[6];
  spec_values(k, 0, NULL, out);
  expect6(out, (float[6]){42, 1, 3, 4, 5, 6});
  TRY(pirt_kernel_release(k));
}

typedef struct {
  int count;
  char text[8][512];
  uint32_t ids[8][8];
  uint32_t nids[8];
  bool native[8];
} notes_seen;

static void collect(const pirt_note *n, void *user)
{
  notes_seen *s = user;
  if (n->kind != PIRT_NOTE_SPEC_CONST || s->count == 8)
    return;
  snprintf(s->text[s->count], sizeof s->text[0], "%s", n->text);
  s->nids[s->count] = n->num_ids;
  for (uint32_t i = 0; i < n->num_ids && i < 8; i++)
    s->ids[s->count][i] = n->numeric_ids[i];
  s->native[s->count] = n->native;
  s->count++;
}

Test(program, nested_struct_value_from_the_bundle_and_the_hook_sees_it)
{
  notes_seen seen = {0};
  TRY(pirt_add_note_hook(collect, &seen));
  A a = {7, {8.5f, 9.5f}};
  TRY(pirt_bundle_set_spec_constant(bundle, "id_A", &a, sizeof a));
  pirt_kernel *k;
  TRY(pirt_bundle_get_kernel(bundle, "k_spec", &k));
  float out[6];
  spec_values(k, 0, NULL, out);
  expect6(out, (float[6]){42, 7, 8.5f, 9.5f, 5, 6});
  TRY(pirt_kernel_release(k));
  TRY(pirt_remove_note_hook(collect, &seen));
  cr_assert_eq(seen.count, 1);
  cr_assert_eq(seen.nids[0], 3, "id_A has three leaves");
  cr_assert_eq(seen.ids[0][0], 1);
  cr_assert_eq(seen.ids[0][2], 3);
  cr_assert_not(seen.native[0], "PoCL and rusticl take no SPIR-V: emulated");
  /* id_int (4 bytes, ID 0) comes first, so id_A sits at offset 4. */
  cr_assert(strstr(seen.text[0], "emulated: buffer offset 4, kernel argument 1"), "%s",
            seen.text[0]);
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert(strstr(t, "Spec constant 'id_A' of kernel 'k_spec' on \""), "%s", t);
  cr_assert(strstr(t, "numeric IDs 1,2,3 = [07 00 00 00 00 00 08 41 00 00 18 41] (12 bytes)"),
            "%s", t);
}

Test(program, launch_value_applies_to_that_launch_only)
{
  Nested nb = {-1.0f, -2.0f};
  TRY(pirt_bundle_set_spec_constant(bundle, "id_Nested", &nb, sizeof nb));
  pirt_kernel *k;
  TRY(pirt_bundle_get_kernel(bundle, "k_spec", &k));
  int minus3 = -3;
  pirt_spec_value v = {"id_int", &minus3, sizeof minus3};
  float out[6];
  spec_values(k, 1, &v, out);
  expect6(out, (float[6]){-3, 1, 3, 4, -1, -2});
  spec_values(k, 0, NULL, out);
  expect6(out, (float[6]){42, 1, 3, 4, -1, -2});
  TRY(pirt_kernel_release(k));
}

Test(program, value_of_the_wrong_size_is_refused)
{
  double wrong = 1.0;
  TRY(pirt_bundle_set_spec_constant(bundle, "id_A", &wrong, sizeof wrong));
  pirt_kernel *k;
  cr_assert_eq(pirt_bundle_get_kernel(bundle, "k_spec", &k), PI_ERROR_INVALID_VALUE);
  cr_assert(strstr(pirt_error_message(), "spec constant 'id_A' of kernel 'k_spec' is "
                                         "12 bytes, but the value given is 8 bytes"),
            "%s", pirt_error_message());
}

Test(program, unregistering_unknown_images_is_harmless)
{
  struct pi_device_binaries_struct none = {PI_DEVICE_BINARIES_VERSION, 0, NULL, NULL, NULL};
  pirt_unregister_images(&none);
  pirt_unregister_images(NULL);
  cr_assert_eq(kernel_value("k_plain"), 0);
}

/* ---- Images made here --------------------------------------------------------- */

/* One OpenCL C image: a kernel (or none), a symbol it exports and one it
 * imports (or NULL), and, with `spec`, one spec constant "id_heap"
 * (numeric ID 0) of spec_size bytes (0: an int), its default 11 in its
 * first int, passed as the kernel's argument 1. */
typedef struct {
  const char *src, *kernel, *exports, *imports;
  bool spec;
  size_t spec_size;
} made_image;

typedef struct {
  struct pi_device_binaries_struct desc;
  struct pi_device_binary_struct bins[4];
  struct _pi_offload_entry_struct entries[4];
  struct _pi_device_binary_property_set_struct sets[4][5];
  struct _pi_device_binary_property_struct props[4][5];
  uint32_t spec_desc[4][3];
  int32_t spec_default[4][32];
} made_desc;

/* The descriptor lies in the heap, in no module: its images come last in
 * the search order. */
static made_desc *make_images(const made_image *im, unsigned n)
{
  made_desc *d = calloc(1, sizeof *d);
  cr_assert(d && n <= 4);
  for (unsigned i = 0; i < n; i++) {
    size_t ns = 0;
    struct _pi_device_binary_property_set_struct *s = d->sets[i];
    struct _pi_device_binary_property_struct *p = d->props[i];
    if (im[i].exports) {
      p[ns] = (struct _pi_device_binary_property_struct){(char *)im[i].exports, NULL,
                                                          PI_PROPERTY_TYPE_UINT32, 1};
      s[ns] = (struct _pi_device_binary_property_set_struct){
          __SYCL_PI_PROPERTY_SET_SYCL_EXPORTED_SYMBOLS, &p[ns], &p[ns] + 1};
      ns++;
    }
    if (im[i].imports) {
      p[ns] = (struct _pi_device_binary_property_struct){(char *)im[i].imports, NULL,
                                                          PI_PROPERTY_TYPE_UINT32, 1};
      s[ns] = (struct _pi_device_binary_property_set_struct){
          __SYCL_PI_PROPERTY_SET_SYCL_IMPORTED_SYMBOLS, &p[ns], &p[ns] + 1};
      ns++;
    }
    if (im[i].spec) {
      uint32_t size = im[i].spec_size ? (uint32_t)im[i].spec_size : 4;
      cr_assert_leq(size, sizeof d->spec_default[i]);
      memcpy(d->spec_desc[i], (uint32_t[3]){0, 0, size}, sizeof d->spec_desc[i]);
      d->spec_default[i][0] = 11;
      p[ns] = (struct _pi_device_binary_property_struct){
          "id_heap", d->spec_desc[i], PI_PROPERTY_TYPE_BYTE_ARRAY, sizeof d->spec_desc[i]};
      s[ns] = (struct _pi_device_binary_property_set_struct){
          __SYCL_PI_PROPERTY_SET_SPEC_CONST_MAP, &p[ns], &p[ns] + 1};
      ns++;
      p[ns] = (struct _pi_device_binary_property_struct){
          "all", d->spec_default[i], PI_PROPERTY_TYPE_BYTE_ARRAY, size};
      s[ns] = (struct _pi_device_binary_property_set_struct){
          __SYCL_PI_PROPERTY_SET_SPEC_CONST_DEFAULT_VALUES_MAP, &p[ns], &p[ns] + 1};
      ns++;
      p[ns] = (struct _pi_device_binary_property_struct){(char *)im[i].kernel, NULL,
                                                          PI_PROPERTY_TYPE_UINT32, 1};
      s[ns] = (struct _pi_device_binary_property_set_struct){
          __SYCL_PI_PROPERTY_SET_SPEC_CONST_KERNEL_ARG, &p[ns], &p[ns] + 1};
      ns++;
    }
    d->entries[i] = (struct _pi_offload_entry_struct){NULL, (char *)im[i].kernel, 0, 0, 0};
    d->bins[i] = (struct pi_device_binary_struct){
        PI_DEVICE_BINARY_VERSION, PI_DEVICE_BINARY_OFFLOAD_KIND_SYCL,
        PI_DEVICE_BINARY_TYPE_OPENCL_C, __SYCL_PI_DEVICE_BINARY_TARGET_OPENCL_C, "", "",
        NULL, NULL, (const unsigned char *)im[i].src,
        (const unsigned char *)im[i].src + strlen(im[i].src), &d->entries[i],
        &d->entries[i] + (im[i].kernel ? 1 : 0), s, s + ns};
  }
  d->desc = (struct pi_device_binaries_struct){PI_DEVICE_BINARIES_VERSION, (uint16_t)n,
                                               d->bins, NULL, NULL};
  pirt_register_images(&d->desc);
  return d;
}

static void drop_images(made_desc *d)
{
  pirt_unregister_images(&d->desc);
  free(d);
}

/* A kernel keeps its image set across a change of the registry (a library
 * opened with dlopen): the index it pointed into was freed and rebuilt,
 * and its next launch read its spec-constant layout from freed memory.
 * M_PERTURB makes glibc fill freed memory, so such a read cannot pass. */
Test(program, a_kernel_outlives_a_change_of_the_registry)
{
  mallopt(M_PERTURB, 0x5a);
  made_image im = {"__kernel void k_heap(__global int *o, __global const int *sc) "
                   "{ o[0] = sc[0]; }", "k_heap", NULL, NULL, true, 0};
  made_desc *d = make_images(&im, 1);
  int32_t five = 5;
  TRY(pirt_bundle_set_spec_constant(bundle, "id_heap", &five, sizeof five));
  pirt_kernel *k;
  TRY(pirt_bundle_get_kernel(bundle, "k_heap", &k));
  void *late = dlopen(PITRACE_LIB_DIR "/liblate.so", RTLD_NOW | RTLD_LOCAL);
  cr_assert(late, "%s", dlerror());
  cr_assert_eq(kernel_value("k_plain"), 0); /* the index is built again */
  cr_assert_eq(run_int_kernel(k), 5);
  TRY(pirt_kernel_release(k));
  dlclose(late);
  drop_images(d);
}

/* A library closed and another opened at the same address (a reload of a
 * rebuilt library) puts new images where the old ones were: the program
 * cache, keyed by the images' addresses, gave the old library's program
 * for the new one's kernel. Here the image changes in place between its
 * unregistration and a new registration. */
Test(program, an_image_registered_again_is_built_again)
{
  made_image im = {"__kernel void k_reload(__global int *o) { o[0] = 1; }", "k_reload",
                   NULL, NULL, false, 0};
  made_desc *d = make_images(&im, 1);
  cr_assert_eq(kernel_value("k_reload"), 1);
  pirt_unregister_images(&d->desc);
  static const char v2[] = "__kernel void k_reload(__global int *o) { o[0] = 2; }";
  d->bins[0].BinaryStart = (const unsigned char *)v2;
  d->bins[0].BinaryEnd = (const unsigned char *)v2 + strlen(v2);
  pirt_register_images(&d->desc);
  cr_assert_eq(kernel_value("k_reload"), 2, "the program of the first image was used");
  drop_images(d);
}

/* Seed 000: "__" declarations (the "__spirv_" operations) are no imports.
 * An image whose only imports are such is self-contained and is built
 * directly: it went through piProgramCompile and piProgramLink. */
Test(program, an_image_importing_only_builtins_is_built_directly)
{
  made_image im = {"__kernel void k_builtins(__global int *o) { o[0] = 3; }",
                   "k_builtins", NULL, "__spirv_BuiltInGlobalInvocationId", false, 0};
  made_desc *d = make_images(&im, 1);
  cr_assert_eq(kernel_value("k_builtins"), 3);
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  cr_assert(strstr(t, "has no imports: piProgramBuild"), "%s", t);
  cr_assert_null(strstr(t, "---> piProgramLink("), "a link step without imports");
  drop_images(d);
}

/* A kernel keeps its bundle's values: the bundle released first (the
 * application done with it, as with a factory) left the kernel reading
 * the freed bundle at its next launch. */
Test(program, a_kernel_outlives_its_bundle)
{
  int32_t five = 5;
  pirt_bundle *own;
  TRY(pirt_bundle_create(ctx, &own));
  made_image im = {"__kernel void k_heap(__global int *o, __global const int *sc) "
                   "{ o[0] = sc[0]; }", "k_heap", NULL, NULL, true, 0};
  made_desc *d = make_images(&im, 1);
  TRY(pirt_bundle_set_spec_constant(own, "id_heap", &five, sizeof five));
  pirt_kernel *k;
  TRY(pirt_bundle_get_kernel(own, "k_heap", &k));
  TRY(pirt_bundle_release(own));
  cr_assert_eq(run_int_kernel(k), 5);
  TRY(pirt_kernel_release(k));
  drop_images(d);
}

/* Descriptors the runtime cannot take are refused at registration, and a
 * kernel looked up in vain says so: one of another version was dropped
 * without a word ("no registered device image holds kernel", "register
 * them"), and one with images but no array of them crashed the next
 * lookup. */
Test(program, a_refused_registration_is_named_by_the_lookup)
{
  static struct pi_device_binaries_struct none = {PI_DEVICE_BINARIES_VERSION, 2, NULL, NULL,
                                                  NULL};
  pirt_register_images(&none);
  cr_assert_eq(kernel_value("k_plain"), 0);
  made_image im = {"__kernel void k_badver(__global int *o) { o[0] = 1; }", "k_badver",
                   NULL, NULL, false, 0};
  made_desc *d = make_images(&im, 1); /* registered as it is, then again as version 99 */
  pirt_unregister_images(&d->desc);
  d->desc.Version = 99;
  pirt_register_images(&d->desc);
  pirt_kernel *k;
  cr_assert_eq(pirt_bundle_get_kernel(bundle, "k_badver", &k), PI_ERROR_INVALID_KERNEL_NAME);
  const char *m = pirt_error_message();
  cr_assert(strstr(m, "no registered device image holds kernel 'k_badver'"), "%s", m);
  cr_assert(strstr(m, "2 registration(s) refused"), "%s", m);
  cr_assert(strstr(m, "version 99"), "%s", m);
  pirt_unregister_images(&none);
  drop_images(d);
}

/* An image for no format the device takes (PTX on OpenCL): the message
 * gives the plugin's reason, not the message of an earlier failure. */
Test(program, an_image_no_device_takes_is_refused_with_the_plugins_reason)
{
  made_image im = {"// PTX\n.version 7.0\n.target sm_50\n", "k_ptx_only", NULL, NULL,
                   false, 0};
  made_desc *d = make_images(&im, 1);
  d->bins[0].Format = PI_DEVICE_BINARY_TYPE_NATIVE;
  d->bins[0].DeviceTargetSpec = __SYCL_PI_DEVICE_BINARY_TARGET_NVPTX64;
  pirt_kernel *k;
  cr_assert_eq(pirt_bundle_get_kernel(bundle, "k_nowhere", &k), PI_ERROR_INVALID_KERNEL_NAME);
  cr_assert_eq(pirt_bundle_get_kernel(bundle, "k_ptx_only", &k), PI_ERROR_INVALID_BINARY);
  const char *m = pirt_error_message();
  cr_assert(strstr(m, "kernel 'k_ptx_only': none of its 1 image(s) suits device"), "%s", m);
  cr_assert_null(strstr(m, "k_nowhere"), "%s", m);
  cr_assert(strstr(m, "piextDeviceSelectBinary failed with PI_ERROR_INVALID_BINARY (plugin "
                      "libpi_opencl.so says: "), "%s", m);
  drop_images(d);
}

/* An import exported only by images the device cannot take (PTX on
 * OpenCL): the message says they exist and why they were refused, not
 * that no image exports the symbol. */
Test(program, an_import_only_foreign_images_export_says_why)
{
  made_image im[2] = {
      {"int ptx_fn(void);\n__kernel void k_wants_ptx(__global int *o) { o[0] = ptx_fn(); }",
       "k_wants_ptx", NULL, "ptx_fn", false, 0},
      {"// PTX\n.version 7.0\n.target sm_50\n", NULL, "ptx_fn", NULL, false, 0}};
  made_desc *d = make_images(im, 2);
  d->bins[1].Format = PI_DEVICE_BINARY_TYPE_NATIVE;
  d->bins[1].DeviceTargetSpec = __SYCL_PI_DEVICE_BINARY_TARGET_NVPTX64;
  pirt_kernel *k;
  cr_assert_eq(pirt_bundle_get_kernel(bundle, "k_wants_ptx", &k),
               PI_ERROR_INVALID_KERNEL_NAME);
  const char *m = pirt_error_message();
  cr_assert(strstr(m, "imports 'ptx_fn'"), "%s", m);
  cr_assert(strstr(m, "1 image(s) export it, but none suits device"), "%s", m);
  cr_assert(strstr(m, "piextDeviceSelectBinary failed"), "%s", m);
  drop_images(d);
}

/* A value of 66 bytes fills the note's 197 characters of hex exactly: its
 * last byte was cut for a "..." though every byte fitted. */
Test(program, a_spec_constant_note_shows_a_value_that_just_fits_whole)
{
  made_image im = {"__kernel void k_wide(__global int *o, __global const int *sc) "
                   "{ o[0] = sc[0]; }", "k_wide", NULL, NULL, true, 66};
  made_desc *d = make_images(&im, 1);
  unsigned char v[66];
  for (size_t i = 0; i < sizeof v; i++)
    v[i] = (unsigned char)(i + 1);
  TRY(pirt_bundle_set_spec_constant(bundle, "id_heap", v, sizeof v));
  cr_assert_eq(kernel_value("k_wide"), 0x04030201);
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  char want[256];
  size_t w = 0;
  for (size_t i = 0; i < sizeof v; i++)
    w += (size_t)snprintf(want + w, sizeof want - w, "%s%02x", i ? " " : "", v[i]);
  snprintf(want + w, sizeof want - w, "] (66 bytes)");
  cr_assert(strstr(t, want), "%s\n%s", want, t);
  drop_images(d);
}

/* Images registered from memory that is in no module (a front end that
 * makes descriptors at run time) were labelled as the executable's, in
 * the notes and the recorded link decisions; they come last in the
 * search order, after every module. */
Test(program, images_in_no_module_are_not_labelled_as_the_executables)
{
  made_image im = {"__kernel void k_mem(__global int *o) { o[0] = 9; }", "k_mem", NULL,
                   NULL, false, 0};
  made_desc *d = make_images(&im, 1);
  cr_assert_eq(kernel_value("k_mem"), 9);
  char *t = (pirt_trace_flush(), tu_read_file(trace));
  char want[64];
  snprintf(want, sizeof want, "image memory@%p#0 has no imports", (void *)&d->desc);
  cr_assert(strstr(t, want), "%s\n%s", want, t);
  cr_assert_null(strstr(t, "test_program#"), "%s", t);
  drop_images(d);
}
