/*
 * fe_platform.c: OpenCL platforms and devices over the runtime's devices.
 *
 * Every device the runtime discovered (every bound plugin's, narrowed by
 * SYCL_DEVICE_FILTER) is an OpenCL device; devices of one PI platform form
 * one OpenCL platform, in discovery order. Info queries that PI describes
 * pass through piPlatformGetInfo/piDeviceGetInfo (so they are traced and
 * recorded) with the OpenCL values PI shares. The OpenCL 3.0 queries PI has
 * no name for are derived from what PI answers where that is exact (numeric
 * versions from the version strings, atomic capabilities from PI's order
 * and scope bits, OpenCL C versions and features), answered "not
 * supported" for the optional features the front end cannot offer or ask
 * about (SVM, pipes, device-side enqueue, non-uniform work-groups), and otherwise
 * refused with CL_INVALID_VALUE, as the specification allows for a query the
 * implementation cannot answer. Extensions whose entry points or queries the
 * front end does not route (GL/EGL/D3D sharing, command buffers, external
 * memory, vendor attribute queries ...) are taken out of the extension
 * strings, so applications do not try them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fe.h"

cl_uint fe_nplatforms;
cl_platform_id *fe_platforms;
static pthread_once_t platforms_once = PTHREAD_ONCE_INIT;

static pi_result device_info(const cl_device_id d, pi_device_info q, size_t n, void *v)
{
  return pirt_piDeviceGetInfo(d->o.pl, d->pi, q, n, v, NULL);
}

/* Sets the fields of a device wrapper that later calls need. */
static void device_fill(cl_device_id d)
{
  pi_device_type t = 0;
  if (device_info(d, PI_DEVICE_INFO_TYPE, sizeof t, &t) == PI_SUCCESS)
    d->type = (cl_device_type)t;
  /* PI's "compiler" compiles the backend's own format; OpenCL's compiles
   * OpenCL C and IL. CUDA's devices take neither (PTX comes as a binary):
   * they have no OpenCL compiler. Level Zero's compile SPIR-V IL, and their
   * plugin refuses OpenCL C when the program is created. */
  pi_bool c = PI_FALSE;
  if (device_info(d, PI_DEVICE_INFO_COMPILER_AVAILABLE, sizeof c, &c) == PI_SUCCESS)
    d->compiler = c != PI_FALSE && strcmp(d->platform->backend, "cuda") != 0;
}

static void platforms_build(void)
{
  size_t n = 0;
  pirt_device *any;
  if (pirt_device_count(&n) != PI_SUCCESS || n == 0) {
    /* An application sees no platform; its user sees why (a malformed
     * SYCL_DEVICE_FILTER, one that allows no device, no plugin), once: it
     * was said only with SYCL_PI_TRACE=1, and `pitrace run -- clinfo -l`
     * printed nothing. */
    if (pirt_device_select(NULL, &any) != PI_SUCCESS)
      fprintf(stderr, "pitrace: no OpenCL platform: %s\n", pirt_error_message());
    return;
  }
  cl_platform_id *ps = calloc(n, sizeof *ps);
  if (!ps)
    return;
  cl_uint np = 0;
  for (size_t i = 0; i < n; i++) {
    pirt_device *rd;
    const pirt_plugin *pl;
    pi_platform pp;
    pi_device pd;
    const char *backend;
    if (pirt_device_get(i, &rd) != PI_SUCCESS ||
        pirt_device_plugin(rd, &pl, &pp, &pd, &backend) != PI_SUCCESS)
      continue;
    cl_platform_id p = NULL;
    for (cl_uint k = 0; k < np; k++)
      if (ps[k]->pi == pp && ps[k]->o.pl == pl)
        p = ps[k];
    if (!p) {
      p = fe_new(sizeof *p, FE_PLATFORM, pl);
      if (!p)
        continue;
      p->pi = pp;
      p->backend = backend;
      p->devices = calloc(n, sizeof *p->devices);
      if (!p->devices) {
        free(p);
        continue;
      }
      ps[np++] = p;
      fe_map_add(FE_PLATFORM, pp, p);
    }
    cl_device_id d = fe_new(sizeof *d, FE_DEVICE, pl);
    if (!d)
      continue;
    d->pi = pd;
    d->platform = p;
    device_fill(d);
    p->devices[p->ndev++] = d;
    fe_map_add(FE_DEVICE, pd, d);
  }
  fe_platforms = ps;
  fe_nplatforms = np;
}

void fe_platforms_init(void) { pthread_once(&platforms_once, platforms_build); }

cl_int fe_check_devices(cl_uint n, const cl_device_id *devs, cl_platform_id *platform)
{
  if (!devs || n == 0)
    return CL_INVALID_VALUE;
  cl_platform_id p = NULL;
  for (cl_uint i = 0; i < n; i++) {
    if (!FE_IS(devs[i], FE_DEVICE))
      return CL_INVALID_DEVICE;
    if (p && devs[i]->platform != p)
      return CL_INVALID_DEVICE; /* one context spans one platform */
    p = devs[i]->platform;
  }
  if (platform)
    *platform = p;
  return CL_SUCCESS;
}

void fe_pi_devices(cl_uint n, const cl_device_id *devs, pi_device *pi)
{
  for (cl_uint i = 0; i < n; i++)
    pi[i] = devs[i]->pi;
}

/* ---- Extensions ------------------------------------------------------------ */

/* Prefixes of extensions whose functions or queries the front end does not
 * route: they are removed from what the application sees. */
static const char *const hidden_extensions[] = {
    "cl_khr_gl_", "cl_khr_egl_", "cl_khr_d3d", "cl_khr_dx9", "cl_intel_dx9",
    "cl_intel_va_api", "cl_intel_sharing_format_query", "cl_khr_command_buffer",
    "cl_khr_semaphore", "cl_khr_external_", "cl_ext_device_fission",
    "cl_khr_create_command_queue", "cl_khr_suggested_local_work_size",
    "cl_khr_terminate_context", "cl_pocl_", "cl_ext_buffer_device_address",
    "cl_intel_accelerator", "cl_intel_motion_estimation",
    "cl_intel_advanced_motion_estimation", "cl_intel_device_side_avc",
    "cl_nv_device_attribute_query", "cl_amd_device_attribute_query",
    "cl_intel_device_attribute_query", "cl_khr_pci_bus_info", "cl_khr_device_uuid",
    "cl_khr_integer_dot_product", "cl_khr_extended_versioning", "cl_arm_",
    "cl_intel_command_queue_families", "cl_intel_mem_channel_property",
    "cl_intel_create_buffer_with_properties", "cl_intel_mem_force_host_memory",
    "cl_intel_global_variable_access", "cl_intel_program_scope_host_pipe",
    "cl_khr_kernel_clock", "cl_ext_image_requirements_info",
    "cl_khr_initialize_memory", "cl_khr_priority_hints", "cl_khr_throttle_hints",
    "cl_nv_create_buffer", "cl_nv_kernel_attribute", "cl_khr_spirv_queries"};

/* Whole names of such extensions, where a prefix would take others with it:
 * cl_khr_spir's query, CL_DEVICE_SPIR_VERSIONS, has no PI name (the
 * cl_khr_spirv_* extensions, which have no query, stay). */
static const char *const hidden_names[] = {"cl_khr_spir"};

static bool hidden(const char *ext, size_t len)
{
  for (size_t i = 0; i < sizeof hidden_extensions / sizeof *hidden_extensions; i++) {
    size_t n = strlen(hidden_extensions[i]);
    if (len >= n && memcmp(ext, hidden_extensions[i], n) == 0)
      return true;
  }
  for (size_t i = 0; i < sizeof hidden_names / sizeof *hidden_names; i++)
    if (strlen(hidden_names[i]) == len && memcmp(ext, hidden_names[i], len) == 0)
      return true;
  return false;
}

/* Whether the space-separated list `list` names the extension `name`. */
static bool has_extension(const char *list, const char *name)
{
  size_t n = strlen(name);
  for (const char *s = list; *s;) {
    while (*s == ' ')
      s++;
    size_t len = strcspn(s, " ");
    if (len == n && memcmp(s, name, n) == 0)
      return true;
    s += len;
  }
  return false;
}

/* `in` without the hidden extensions, space-separated; malloc'd. */
static char *filter_extensions(const char *in)
{
  char *out = malloc(strlen(in) + 1), *o = out;
  if (!out)
    return NULL;
  for (const char *s = in; *s;) {
    while (*s == ' ')
      s++;
    size_t len = strcspn(s, " ");
    if (len && !hidden(s, len)) {
      if (o != out)
        *o++ = ' ';
      memcpy(o, s, len);
      o += len;
    }
    s += len;
  }
  *o = 0;
  return out;
}

/* A PI string answer, malloc'd; NULL on failure (with *err set). */
static char *pi_string(const cl_device_id d, const cl_platform_id p, uint32_t q, cl_int *err)
{
  size_t n = 0;
  pi_result r = d ? pirt_piDeviceGetInfo(d->o.pl, d->pi, q, 0, NULL, &n)
                  : pirt_piPlatformGetInfo(p->o.pl, p->pi, q, 0, NULL, &n);
  char *s = r == PI_SUCCESS ? malloc(n + 1) : NULL;
  if (s) {
    r = d ? pirt_piDeviceGetInfo(d->o.pl, d->pi, q, n, s, NULL)
          : pirt_piPlatformGetInfo(p->o.pl, p->pi, q, n, s, NULL);
    s[n] = 0;
  }
  if (r != PI_SUCCESS || !s) {
    *err = r != PI_SUCCESS ? fe_err(r) : CL_OUT_OF_HOST_MEMORY;
    free(s);
    return NULL;
  }
  return s;
}

/* "OpenCL 3.0 PoCL ..." or "OpenCL C 1.2 ..." -> CL_MAKE_VERSION(3, 0, 0). */
static cl_version version_of(const char *s)
{
  unsigned major = 0, minor = 0;
  const char *v = s;
  while (*v && !(*v >= '0' && *v <= '9'))
    v++;
  if (sscanf(v, "%u.%u", &major, &minor) != 2)
    return 0;
  return CL_MAKE_VERSION(major, minor, 0);
}

/* A cl_name_version list from a space-separated string of names; each name
 * gets `version` (extensions) or, with version 0, the version its own text
 * carries after '_' ("SPIR-V_1.2"). */
static cl_int name_versions(const char *names, cl_version version, size_t size,
                            void *value, size_t *size_ret)
{
  size_t count = 0;
  for (const char *s = names; *s;) {
    while (*s == ' ' || *s == ';')
      s++;
    size_t len = strcspn(s, " ;");
    count += len > 0;
    s += len;
  }
  cl_name_version *list = calloc(count ? count : 1, sizeof *list);
  if (!list)
    return CL_OUT_OF_HOST_MEMORY;
  size_t i = 0;
  for (const char *s = names; *s;) {
    while (*s == ' ' || *s == ';')
      s++;
    size_t len = strcspn(s, " ;");
    if (len) {
      size_t keep = len < CL_NAME_VERSION_MAX_NAME_SIZE ? len : CL_NAME_VERSION_MAX_NAME_SIZE - 1;
      cl_version v = version;
      const char *us = version ? NULL : memchr(s, '_', len);
      if (us) {
        keep = (size_t)(us - s) < keep ? (size_t)(us - s) : keep;
        v = version_of(us);
      }
      memcpy(list[i].name, s, keep);
      list[i++].version = v;
    }
    s += len;
  }
  cl_int err = fe_put(size, value, size_ret, list, count * sizeof *list);
  free(list);
  return err;
}

/* ---- Platforms ------------------------------------------------------------- */

static pi_result platform_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct _cl_platform_id *p = obj;
  return pirt_piPlatformGetInfo(p->o.pl, p->pi, q, n, v, r);
}

cl_int CL_API_CALL fe_clGetPlatformInfo(cl_platform_id platform, cl_platform_info param,
                                        size_t size, void *value, size_t *size_ret)
{
  FE_CHECK(platform, FE_PLATFORM, CL_INVALID_PLATFORM);
  cl_int err = CL_SUCCESS;
  char *s;
  switch (param) {
  case CL_PLATFORM_ICD_SUFFIX_KHR:
    return fe_put_str(size, value, size_ret, "pitrace");
  case CL_PLATFORM_HOST_TIMER_RESOLUTION: {
    /* clGetDeviceAndHostTimer and clGetHostTimer answer through
     * piGetDeviceAndHostTimer, whose host time is in nanoseconds; PI can ask
     * neither the host timer's resolution nor whether a device has the
     * timers, and an OpenCL implementation without them (PoCL, rusticl:
     * their resolution is 0) has its plugin refuse the call. A resolution
     * is promised only where the call works: 1 ns, PI's unit, where every
     * device of the platform answers it, and 0 ("no device and host timer
     * synchronization", so the timer calls' CL_INVALID_OPERATION is
     * expected) where one refuses. */
    cl_ulong ns = 1;
    for (cl_uint i = 0; i < platform->ndev && ns; i++) {
      const cl_device_id d = platform->devices[i];
      uint64_t dev_ts = 0, host_ts = 0;
      if (pirt_piGetDeviceAndHostTimer(d->o.pl, d->pi, &dev_ts, &host_ts) != PI_SUCCESS)
        ns = 0;
    }
    return FE_PUT_VAL(size, value, size_ret, ns);
  }
  case CL_PLATFORM_NUMERIC_VERSION:
    if (!(s = pi_string(NULL, platform, PI_PLATFORM_INFO_VERSION, &err)))
      return err;
    cl_version v = version_of(s);
    free(s);
    return FE_PUT_VAL(size, value, size_ret, v);
  case CL_PLATFORM_EXTENSIONS:
  case CL_PLATFORM_EXTENSIONS_WITH_VERSION: {
    if (!(s = pi_string(NULL, platform, PI_PLATFORM_INFO_EXTENSIONS, &err)))
      return err;
    char *f = filter_extensions(s);
    free(s);
    /* The front end is an ICD whatever the plugin's platform says (CUDA's
     * lists no extension at all): cl_khr_icd is always there, as the ICD
     * loaders require (ocl-icd drops a platform without it). */
    if (f && !has_extension(f, "cl_khr_icd")) {
      char *g = malloc(strlen(f) + sizeof " cl_khr_icd");
      if (g)
        sprintf(g, "%s%scl_khr_icd", f, *f ? " " : "");
      free(f);
      f = g;
    }
    if (!f)
      return CL_OUT_OF_HOST_MEMORY;
    err = param == CL_PLATFORM_EXTENSIONS
              ? fe_put_str(size, value, size_ret, f)
              : name_versions(f, CL_MAKE_VERSION(1, 0, 0), size, value, size_ret);
    free(f);
    return err;
  }
  default:
    return fe_pi_info("pi_platform_info", platform_getter, platform, param, size,
                      value, size_ret);
  }
}

/* ---- Devices --------------------------------------------------------------- */

cl_int CL_API_CALL fe_clGetDeviceIDs(cl_platform_id platform, cl_device_type type,
                                     cl_uint num_entries, cl_device_id *devices,
                                     cl_uint *num_devices)
{
  fe_platforms_init();
  if (!platform && fe_nplatforms)
    platform = fe_platforms[0]; /* implementation-defined: the first */
  FE_CHECK(platform, FE_PLATFORM, CL_INVALID_PLATFORM);
  const cl_device_type known = CL_DEVICE_TYPE_DEFAULT | CL_DEVICE_TYPE_CPU |
                               CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR |
                               CL_DEVICE_TYPE_CUSTOM;
  if (type != CL_DEVICE_TYPE_ALL && (type & ~known || type == 0))
    return CL_INVALID_DEVICE_TYPE;
  if ((num_entries == 0 && devices) || (!devices && !num_devices))
    return CL_INVALID_VALUE;
  cl_uint n = 0;
  for (cl_uint i = 0; i < platform->ndev; i++) {
    cl_device_id d = platform->devices[i];
    bool take = type == CL_DEVICE_TYPE_ALL || (d->type & type) ||
                ((type & CL_DEVICE_TYPE_DEFAULT) && n == 0 && i == 0);
    if (type == CL_DEVICE_TYPE_DEFAULT)
      take = i == 0;
    if (!take)
      continue;
    if (devices && n < num_entries)
      devices[n] = d;
    n++;
  }
  if (num_devices)
    *num_devices = n;
  return n ? CL_SUCCESS : CL_DEVICE_NOT_FOUND;
}

static pi_result device_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct _cl_device_id *d = obj;
  return pirt_piDeviceGetInfo(d->o.pl, d->pi, q, n, v, r);
}

/* OpenCL's atomic capability bits from PI's order and scope bits, for
 * CL_DEVICE_ATOMIC_FENCE_CAPABILITIES (`fence`) or
 * CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES. */
static cl_int atomic_caps(cl_device_id d, bool fence, size_t size, void *value,
                          size_t *size_ret)
{
  const pi_device_info order_q = fence ? PI_EXT_DEVICE_INFO_ATOMIC_FENCE_ORDER_CAPABILITIES
                                       : PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_ORDER_CAPABILITIES;
  const pi_device_info scope_q = fence ? PI_EXT_DEVICE_INFO_ATOMIC_FENCE_SCOPE_CAPABILITIES
                                       : PI_EXT_DEVICE_INFO_ATOMIC_MEMORY_SCOPE_CAPABILITIES;
  uint64_t order = 0, scope = 0;
  pi_result r = device_info(d, order_q, sizeof order, &order);
  if (r == PI_SUCCESS)
    r = device_info(d, scope_q, sizeof scope, &scope);
  if (r != PI_SUCCESS)
    return fe_err(r);
  cl_device_atomic_capabilities c = 0;
  if (order & PI_MEMORY_ORDER_RELAXED)
    c |= CL_DEVICE_ATOMIC_ORDER_RELAXED;
  if (order & PI_MEMORY_ORDER_ACQ_REL)
    c |= CL_DEVICE_ATOMIC_ORDER_ACQ_REL;
  if (order & PI_MEMORY_ORDER_SEQ_CST)
    c |= CL_DEVICE_ATOMIC_ORDER_SEQ_CST;
  /* PI has work-item scope for every device (SYCL's atomic_ref takes it);
   * OpenCL's memory_scope_work_item is for fences only, and the
   * specification allows CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM in the fence
   * capabilities alone. */
  if (fence && (scope & PI_MEMORY_SCOPE_WORK_ITEM))
    c |= CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM;
  if (scope & PI_MEMORY_SCOPE_WORK_GROUP)
    c |= CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
  if (scope & PI_MEMORY_SCOPE_DEVICE)
    c |= CL_DEVICE_ATOMIC_SCOPE_DEVICE;
  if (scope & PI_MEMORY_SCOPE_SYSTEM)
    c |= CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
  return FE_PUT_VAL(size, value, size_ret, c);
}

/* The OpenCL C versions a device accepts. From its CL_DEVICE_OPENCL_C_VERSION:
 * every earlier 1.x, and the version itself. And on an OpenCL 3.x device,
 * OpenCL C of the device's version, which the specification requires such a
 * device to accept while its CL_DEVICE_OPENCL_C_VERSION names the 1.x or 2.0
 * language it stays compatible with (PoCL and rusticl, both OpenCL 3.0, say
 * "OpenCL C 1.2" and list 3.0 in their own answer). A device that names no
 * OpenCL C version (Level Zero's, CUDA's) has none. */
static cl_int c_versions(cl_device_id d, size_t size, void *value, size_t *size_ret)
{
  cl_int err = CL_SUCCESS;
  char *s = pi_string(d, NULL, PI_DEVICE_INFO_OPENCL_C_VERSION, &err);
  if (!s)
    return err;
  cl_version top = version_of(s), api = 0;
  free(s);
  if (top) {
    if (!(s = pi_string(d, NULL, PI_DEVICE_INFO_VERSION, &err)))
      return err;
    api = version_of(s);
    free(s);
  }
  cl_name_version list[5];
  size_t n = 0;
  static const unsigned minors[] = {0, 1, 2};
  for (size_t i = 0; i < 3 && top; i++) {
    cl_version v = CL_MAKE_VERSION(1, minors[i], 0);
    if (v > top)
      break;
    list[n] = (cl_name_version){v, "OpenCL C"};
    n++;
  }
  if (CL_VERSION_MAJOR(top) >= 2)
    list[n++] = (cl_name_version){top, "OpenCL C"};
  if (CL_VERSION_MAJOR(api) >= 3 && api > top)
    list[n++] = (cl_name_version){api, "OpenCL C"};
  return fe_put(size, value, size_ret, list, n * sizeof *list);
}

/* The OpenCL C optional features of a device that has OpenCL C 3.0, each
 * from the front end's own answer to the API query the specification ties
 * it to, so the two never disagree: images (CL_DEVICE_IMAGE_SUPPORT), 3D
 * image writes (images and cl_khr_3d_image_writes, which the front end's
 * image formats follow too), the atomic orders and scopes
 * (CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES), 64-bit integers (required of a
 * FULL_PROFILE device; cles_khr_int64 on an embedded one), doubles
 * (CL_DEVICE_DOUBLE_FP_CONFIG not 0) and sub-groups
 * (CL_DEVICE_MAX_NUM_SUB_GROUPS not 0). What the front end answers as absent
 * (pipes, device-side enqueue, the generic address space, program-scope
 * global variables, work-group collective functions) is not listed. Nor are
 * read-write images, whose query (CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS) PI
 * has no name for, nor the all-devices atomic scope: PoCL sets
 * CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES and its compiler does not define
 * __opencl_c_atomic_scope_all_devices, so the bit does not tell. A feature
 * left out costs an application an option; one claimed that the compiler
 * lacks breaks its build. */
static cl_int c_features(cl_device_id d, size_t size, void *value, size_t *size_ret)
{
  cl_name_version versions[5], list[8];
  size_t bytes = 0, n = 0;
  cl_int err = c_versions(d, sizeof versions, versions, &bytes);
  bool c3 = false;
  for (size_t i = 0; err == CL_SUCCESS && i < bytes / sizeof *versions; i++)
    c3 |= CL_VERSION_MAJOR(versions[i].version) >= 3;
  cl_bool images = CL_FALSE;
  cl_device_atomic_capabilities atomics = 0;
  cl_device_fp_config fp64 = 0;
  cl_uint sub_groups = 0;
  char profile[64] = "", *ext = NULL;
  if (err == CL_SUCCESS && c3) {
    err = fe_clGetDeviceInfo(d, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL);
    if (err == CL_SUCCESS)
      err = fe_clGetDeviceInfo(d, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, sizeof atomics,
                               &atomics, NULL);
    if (err == CL_SUCCESS)
      err = fe_clGetDeviceInfo(d, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof fp64, &fp64, NULL);
    if (err == CL_SUCCESS)
      err = fe_clGetDeviceInfo(d, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof sub_groups,
                               &sub_groups, NULL);
    if (err == CL_SUCCESS)
      err = fe_clGetDeviceInfo(d, CL_DEVICE_PROFILE, sizeof profile - 1, profile, NULL);
    if (err == CL_SUCCESS && (ext = pi_string(d, NULL, PI_DEVICE_INFO_EXTENSIONS, &err))) {
      const struct {
        bool has;
        const char *name;
      } features[] = {
          {images, "__opencl_c_images"},
          {images && has_extension(ext, "cl_khr_3d_image_writes"),
           "__opencl_c_3d_image_writes"},
          {atomics & CL_DEVICE_ATOMIC_ORDER_ACQ_REL, "__opencl_c_atomic_order_acq_rel"},
          {atomics & CL_DEVICE_ATOMIC_ORDER_SEQ_CST, "__opencl_c_atomic_order_seq_cst"},
          {atomics & CL_DEVICE_ATOMIC_SCOPE_DEVICE, "__opencl_c_atomic_scope_device"},
          {strcmp(profile, "FULL_PROFILE") == 0 || has_extension(ext, "cles_khr_int64"),
           "__opencl_c_int64"},
          {fp64 != 0, "__opencl_c_fp64"},
          {sub_groups != 0, "__opencl_c_subgroups"},
      };
      for (size_t i = 0; i < sizeof features / sizeof *features; i++)
        if (features[i].has) {
          list[n].version = CL_MAKE_VERSION(3, 0, 0);
          snprintf(list[n++].name, sizeof list->name, "%s", features[i].name);
        }
      free(ext);
    }
  }
  if (err != CL_SUCCESS)
    return err;
  return fe_put(size, value, size_ret, list, n * sizeof *list);
}

cl_int CL_API_CALL fe_clGetDeviceInfo(cl_device_id device, cl_device_info param,
                                      size_t size, void *value, size_t *size_ret)
{
  FE_CHECK(device, FE_DEVICE, CL_INVALID_DEVICE);
  cl_int err = CL_SUCCESS;
  char *s;
  cl_uint zero_u = 0;
  cl_bool no = CL_FALSE;
  switch (param) {
  case CL_DEVICE_PLATFORM:
    return FE_PUT_VAL(size, value, size_ret, device->platform);
  case CL_DEVICE_PARENT_DEVICE:
    return FE_PUT_VAL(size, value, size_ret, device->parent);
  case CL_DEVICE_REFERENCE_COUNT: {
    cl_uint refs = device->parent ? atomic_load(&device->o.refs) : 1;
    return FE_PUT_VAL(size, value, size_ret, refs);
  }
  case CL_DEVICE_PARTITION_TYPE:
    return fe_put(size, value, size_ret, device->partition,
                  device->npartition * sizeof *device->partition);
  case CL_DEVICE_EXTENSIONS:
  case CL_DEVICE_EXTENSIONS_WITH_VERSION: {
    if (!(s = pi_string(device, NULL, PI_DEVICE_INFO_EXTENSIONS, &err)))
      return err;
    char *f = filter_extensions(s);
    free(s);
    if (!f)
      return CL_OUT_OF_HOST_MEMORY;
    /* Each extension's version is 1.0.0: PI gives the names only (see
     * frontends/opencl/README.md for why the implementation is not asked). */
    err = param == CL_DEVICE_EXTENSIONS
              ? fe_put_str(size, value, size_ret, f)
              : name_versions(f, CL_MAKE_VERSION(1, 0, 0), size, value, size_ret);
    free(f);
    return err;
  }
  case CL_DEVICE_NUMERIC_VERSION:
    if (!(s = pi_string(device, NULL, PI_DEVICE_INFO_VERSION, &err)))
      return err;
    cl_version v = version_of(s);
    free(s);
    return FE_PUT_VAL(size, value, size_ret, v);
  case CL_DEVICE_ILS_WITH_VERSION:
    if (!(s = pi_string(device, NULL, PI_DEVICE_INFO_IL_VERSION, &err)))
      return err;
    err = name_versions(s, 0, size, value, size_ret);
    free(s);
    return err;
  case CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION:
    return fe_put(size, value, size_ret, NULL, 0);
  case CL_DEVICE_MAX_NUM_SUB_GROUPS: {
    /* PI answers SYCL's minimum, 1, where OpenCL says 0: a device without
     * sub-groups (no cl_khr_subgroups or cl_intel_subgroups). */
    cl_uint n = 0;
    pi_result r = device_info(device, PI_DEVICE_INFO_MAX_NUM_SUB_GROUPS, sizeof n, &n);
    if (r != PI_SUCCESS)
      return fe_err(r);
    if (n == 1) {
      if (!(s = pi_string(device, NULL, PI_DEVICE_INFO_EXTENSIONS, &err)))
        return err;
      if (!strstr(s, "cl_khr_subgroups") && !strstr(s, "cl_intel_subgroups"))
        n = 0;
      free(s);
    }
    return FE_PUT_VAL(size, value, size_ret, n);
  }
  case CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE: {
    /* OpenCL 1.0's "smallest alignment in bytes which can be used for any
     * data type" (deprecated, still asked: clinfo does), which PI has no
     * name for. OpenCL C aligns every built-in type to its size, so it is
     * the size of the largest: long16, 128 bytes, where the device has
     * 64-bit integers (every profile but an embedded one without
     * cles_khr_int64), else int16, 64 bytes; the specification's minimum,
     * and what PoCL and rusticl answer. */
    cl_uint bytes = 128;
    if (!(s = pi_string(device, NULL, PI_DEVICE_INFO_PROFILE, &err)))
      return err;
    bool embedded = strcmp(s, "EMBEDDED_PROFILE") == 0;
    free(s);
    if (embedded) {
      if (!(s = pi_string(device, NULL, PI_DEVICE_INFO_EXTENSIONS, &err)))
        return err;
      if (!has_extension(s, "cles_khr_int64"))
        bytes = 64;
      free(s);
    }
    return FE_PUT_VAL(size, value, size_ret, bytes);
  }
  case CL_DEVICE_COMPILER_AVAILABLE: {
    cl_bool c = device->compiler ? CL_TRUE : CL_FALSE;
    return FE_PUT_VAL(size, value, size_ret, c);
  }
  case CL_DEVICE_BUILT_IN_KERNELS:
    /* PI cannot create built-in kernels: none is offered. */
    return fe_put_str(size, value, size_ret, "");
  case CL_DEVICE_EXECUTION_CAPABILITIES: {
    /* Native kernels cannot be expressed in PI: never claimed. */
    pi_device_exec_capabilities caps = 0;
    pi_result r = device_info(device, PI_DEVICE_INFO_EXECUTION_CAPABILITIES, sizeof caps, &caps);
    if (r != PI_SUCCESS)
      return fe_err(r);
    cl_device_exec_capabilities c = (cl_device_exec_capabilities)caps & ~CL_EXEC_NATIVE_KERNEL;
    return FE_PUT_VAL(size, value, size_ret, c);
  }
  case CL_DEVICE_OPENCL_C_ALL_VERSIONS:
    return c_versions(device, size, value, size_ret);
  case CL_DEVICE_OPENCL_C_FEATURES:
    return c_features(device, size, value, size_ret);
  case CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES:
  case CL_DEVICE_ATOMIC_FENCE_CAPABILITIES:
    return atomic_caps(device, param == CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, size, value,
                       size_ret);
  /* What PI cannot express, answered "not supported". */
  case CL_DEVICE_SVM_CAPABILITIES: {
    cl_device_svm_capabilities none = 0;
    return FE_PUT_VAL(size, value, size_ret, none);
  }
  case CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES: {
    cl_device_device_enqueue_capabilities none = 0;
    return FE_PUT_VAL(size, value, size_ret, none);
  }
  case CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES: {
    cl_command_queue_properties none = 0;
    return FE_PUT_VAL(size, value, size_ret, none);
  }
  case CL_DEVICE_PIPE_SUPPORT:
  case CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT:
  case CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT:
  /* An optional feature PI cannot ask about: not promised. (The launch is
   * passed on as given; a device that has the feature still runs it.) */
  case CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT:
    return FE_PUT_VAL(size, value, size_ret, no);
  case CL_DEVICE_MAX_PIPE_ARGS:
  case CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS:
  case CL_DEVICE_PIPE_MAX_PACKET_SIZE:
  case CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE:
  case CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE:
  case CL_DEVICE_MAX_ON_DEVICE_QUEUES:
  case CL_DEVICE_MAX_ON_DEVICE_EVENTS:
    return FE_PUT_VAL(size, value, size_ret, zero_u);
  case CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE:
  case CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE: {
    size_t zero = 0;
    return FE_PUT_VAL(size, value, size_ret, zero);
  }
  default:
    return fe_pi_info("pi_device_info", device_getter, device, param, size, value,
                      size_ret);
  }
}

/* ---- Sub-devices ----------------------------------------------------------- */

static void subdevice_free(void *o)
{
  cl_device_id d = o;
  fe_map_remove(FE_DEVICE, d->pi);
  free(d->partition);
  if (d->parent && d->parent->parent)
    fe_unref(d->parent, subdevice_free);
}

cl_int CL_API_CALL fe_clCreateSubDevices(cl_device_id in, const cl_device_partition_property *props,
                                         cl_uint num_devices, cl_device_id *out,
                                         cl_uint *num_ret)
{
  FE_CHECK(in, FE_DEVICE, CL_INVALID_DEVICE);
  if (!props || !props[0])
    return CL_INVALID_VALUE;
  if (out && num_devices == 0)
    return CL_INVALID_VALUE;
  pi_uint32 n = 0;
  pi_result r = pirt_piDevicePartition(in->o.pl, in->pi,
                                       (const pi_device_partition_property *)props, 0,
                                       NULL, &n);
  if (r != PI_SUCCESS)
    return fe_err(r);
  if (out && num_devices < n)
    return CL_INVALID_VALUE;
  if (num_ret)
    *num_ret = n;
  if (!out)
    return CL_SUCCESS;
  pi_device *pis = calloc(n ? n : 1, sizeof *pis);
  if (!pis)
    return CL_OUT_OF_HOST_MEMORY;
  r = pirt_piDevicePartition(in->o.pl, in->pi, (const pi_device_partition_property *)props,
                             n, pis, NULL);
  if (r != PI_SUCCESS) {
    free(pis);
    return fe_err(r);
  }
  /* The list as given, kept for CL_DEVICE_PARTITION_TYPE: EQUALLY and
   * BY_AFFINITY_DOMAIN take one value; BY_COUNTS takes counts up to
   * CL_DEVICE_PARTITION_BY_COUNTS_LIST_END; then the terminating 0. */
  size_t np = 2;
  if (props[0] == CL_DEVICE_PARTITION_BY_COUNTS) {
    np = 1;
    while (props[np] != CL_DEVICE_PARTITION_BY_COUNTS_LIST_END)
      np++;
    np++;
  }
  np++;
  for (pi_uint32 i = 0; i < n; i++) {
    cl_device_id d = fe_new(sizeof *d, FE_DEVICE, in->o.pl);
    if (!d) {
      for (pi_uint32 k = i; k < n; k++)
        pirt_piDeviceRelease(in->o.pl, pis[k]);
      free(pis);
      return CL_OUT_OF_HOST_MEMORY;
    }
    d->pi = pis[i];
    d->platform = in->platform;
    d->parent = in;
    if (in->parent)
      fe_ref(in);
    d->partition = malloc(np * sizeof *d->partition);
    if (d->partition) {
      memcpy(d->partition, props, np * sizeof *d->partition);
      d->npartition = np;
    }
    device_fill(d);
    fe_map_add(FE_DEVICE, d->pi, d);
    out[i] = d;
  }
  free(pis);
  return CL_SUCCESS;
}

cl_int CL_API_CALL fe_clRetainDevice(cl_device_id device)
{
  FE_CHECK(device, FE_DEVICE, CL_INVALID_DEVICE);
  if (!device->parent)
    return CL_SUCCESS; /* root devices are not counted */
  pi_result r = pirt_piDeviceRetain(device->o.pl, device->pi);
  if (r == PI_SUCCESS)
    fe_ref(device);
  return fe_err(r);
}

cl_int CL_API_CALL fe_clReleaseDevice(cl_device_id device)
{
  FE_CHECK(device, FE_DEVICE, CL_INVALID_DEVICE);
  if (!device->parent)
    return CL_SUCCESS;
  pi_result r = pirt_piDeviceRelease(device->o.pl, device->pi);
  if (r == PI_SUCCESS)
    fe_unref(device, subdevice_free);
  return fe_err(r);
}

/* ---- Timers and compilers -------------------------------------------------- */

cl_int CL_API_CALL fe_clGetDeviceAndHostTimer(cl_device_id device, cl_ulong *dev_ts,
                                              cl_ulong *host_ts)
{
  FE_CHECK(device, FE_DEVICE, CL_INVALID_DEVICE);
  if (!dev_ts || !host_ts)
    return CL_INVALID_VALUE;
  uint64_t d = 0, h = 0;
  pi_result r = pirt_piGetDeviceAndHostTimer(device->o.pl, device->pi, &d, &h);
  *dev_ts = d;
  *host_ts = h;
  return fe_err(r);
}

cl_int CL_API_CALL fe_clGetHostTimer(cl_device_id device, cl_ulong *host_ts)
{
  FE_CHECK(device, FE_DEVICE, CL_INVALID_DEVICE);
  if (!host_ts)
    return CL_INVALID_VALUE;
  uint64_t h = 0;
  pi_result r = pirt_piGetDeviceAndHostTimer(device->o.pl, device->pi, NULL, &h);
  *host_ts = h;
  return fe_err(r);
}

cl_int CL_API_CALL fe_clUnloadPlatformCompiler(cl_platform_id platform)
{
  FE_CHECK(platform, FE_PLATFORM, CL_INVALID_PLATFORM);
  return CL_SUCCESS; /* a hint; PI has no compiler to unload */
}

cl_int CL_API_CALL fe_clUnloadCompiler(void) { return CL_SUCCESS; }
