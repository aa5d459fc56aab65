/*
 * icd.c: the OpenCL plugin's errors and calls: the CL -> PI result mapping
 * and check_cl, the calls that have no object argument to dispatch on
 * (clCreateContext, clWaitForEvents, extension look-ups), info_check for the
 * queries passed through to OpenCL (those of handle facts too: the plugin
 * keeps none), and small OpenCL query helpers (string queries, a device's
 * version, platform and description, the devices of a context). The
 * dispatch macros themselves are in ocl_internal.h.
 */
#include "ocl_internal.h"

const char *cl_error_name(cl_int err) {
  if (err == ICD_MISSING_ENTRY)
    return "a NULL entry in the implementation's ICD dispatch table";
  RETURN_CODE_NAME(err, CL_ERROR_CODES,
                   "an OpenCL error code this plugin does not know");
}

/* The PI result for an OpenCL error code. PI took its codes from OpenCL, so
 * the shared ranges pass unchanged; the few CL codes PI lacks map to the
 * nearest PI code, and codes of unknown extensions to PI_ERROR_UNKNOWN. */
pi_result pi_from_cl(cl_int err) {
  switch (err) {
  case ICD_MISSING_ENTRY:
    return PI_ERROR_INVALID_OPERATION;
  case CL_INVALID_PIPE_SIZE:
  case CL_INVALID_SPEC_ID:
    return PI_ERROR_INVALID_VALUE;
  case CL_INVALID_DEVICE_QUEUE:
    return PI_ERROR_INVALID_QUEUE;
  case CL_MAX_SIZE_RESTRICTION_EXCEEDED:
    return PI_ERROR_OUT_OF_RESOURCES;
  default:
    break;
  }
  if ((err <= 0 && err >= -19) || (err <= -30 && err >= -68) ||
      (err <= -1000 && err >= -1013) || (err <= -1057 && err >= -1059) ||
      (err <= -1092 && err >= -1102) || (err <= -1138 && err >= -1140))
    return (pi_result)err;
  return PI_ERROR_UNKNOWN;
}

/* Why the last call of this thread that met a NULL dispatch entry was not
 * made: "clFoo is NULL in the ICD dispatch table of platform ...". */
_Thread_local char icd_missing[PATH_MAX + 1024];

/* PI_SUCCESS for CL_SUCCESS; otherwise the mapped PI error, with a message
 * naming the PI function and the OpenCL call that failed (or that could not
 * be made: ICD_MISSING_ENTRY). */
pi_result check_cl(const char *fn, const char *clfn, cl_int err) {
  if (err == CL_SUCCESS)
    return PI_SUCCESS;
  if (err == ICD_MISSING_ENTRY)
    return fail(PI_ERROR_INVALID_OPERATION, "%s: %s", fn, icd_missing);
  return fail(pi_from_cl(err), "%s: %s failed with %s (%d)", fn, clfn,
              cl_error_name(err), (int)err);
}
/* clang-format on */

/* What the calling layer returns when it makes no call: the NULL-object
 * error, or ICD_MISSING_ENTRY. */
_Thread_local cl_int icd_refusal;

/* The calls without an object argument. */

/* clCreateContext goes to the implementation of devices[0] (a context's
 * devices are all of one); no devices is CL_INVALID_VALUE, as in the ICD
 * loader. */
cl_context icd_create_context(
    const cl_context_properties *properties, cl_uint num_devices,
    const cl_device_id *devices,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *),
    void *user_data, cl_int *errcode_ret) {
  cl_int ignored;
  if (!errcode_ret)
    errcode_ret = &ignored;
  if (!devices || num_devices == 0) {
    *errcode_ret = CL_INVALID_VALUE;
    return NULL;
  }
  if (!ICD_CAN_CALL(clCreateContext, devices[0])) {
    *errcode_ret = icd_refusal;
    return NULL;
  }
  return CL_DISPATCH(devices[0])
      ->clCreateContext(properties, num_devices, devices, pfn_notify, user_data,
                        errcode_ret);
}

/* clWaitForEvents goes to the implementation of events[0]. */
cl_int icd_wait_for_events(cl_uint num_events,
                           const cl_event *event_list) {
  if (num_events == 0 || !event_list)
    return CL_INVALID_VALUE;
  if (!ICD_CAN_CALL(clWaitForEvents, event_list[0]))
    return icd_refusal;
  return CL_DISPATCH(event_list[0])->clWaitForEvents(num_events, event_list);
}

/* An extension entry point of a platform, or NULL: its
 * clGetExtensionFunctionAddressForPlatform, else (before OpenCL 1.2) its
 * clGetExtensionFunctionAddress. */
void *icd_extension_address(cl_platform_id platform, const char *name) {
  const struct _cl_icd_dispatch *d = platform ? CL_DISPATCH(platform) : NULL;
  if (d && d->clGetExtensionFunctionAddressForPlatform)
    return d->clGetExtensionFunctionAddressForPlatform(platform, name);
  if (d && d->clGetExtensionFunctionAddress)
    return d->clGetExtensionFunctionAddress(name);
  return NULL;
}

/* ---- Info queries ---------------------------------------------------------
 * An info_out names where a *GetInfo call puts its answer; put_*()
 * (plugins/common) write a value the plugin computes with the size checks
 * OpenCL makes; the queries OpenCL answers pass through. */

_Thread_local size_t info_size_unused;

/* Checks the result of an info query passed through to OpenCL; an OpenCL
 * CL_INVALID_VALUE gets a message naming the query. */
pi_result info_check(const struct info_out *o, const char *clfn,
                     cl_int err) {
  if (err == CL_INVALID_VALUE)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: query 0x%x was rejected by %s (CL_INVALID_VALUE): the "
                "query is unknown to this OpenCL implementation or "
                "param_value_size (%zu) is too small",
                o->fn, o->query, clfn, o->size);
  return check_cl(o->fn, clfn, err);
}

/* The plugin keeps no facts of OpenCL's handles: the relations the other
 * plugins answer from their own fields (plugin_common.h) are the
 * implementation's queries too, and pass through with the rest. */
DEFINE_NO_FACTS_AT_ALL

/* ---- OpenCL helpers -------------------------------------------------------
 */

/* A malloc'd copy of a string query of a platform (when `plat` is not NULL)
 * or of a device, or NULL when the query fails. */
char *info_string(cl_platform_id plat, cl_device_id dev, cl_uint param) {
  size_t n = 0;
  cl_int err = plat ? ICD_CALL(clGetPlatformInfo, plat, param, 0, NULL, &n)
                    : ICD_CALL(clGetDeviceInfo, dev, param, 0, NULL, &n);
  char *s = err == CL_SUCCESS ? malloc(n + 1) : NULL;
  if (!s)
    return NULL;
  err = plat ? ICD_CALL(clGetPlatformInfo, plat, param, n, s, NULL)
             : ICD_CALL(clGetDeviceInfo, dev, param, n, s, NULL);
  if (err != CL_SUCCESS) {
    free(s);
    return NULL;
  }
  s[n] = '\0';
  return s;
}

/* Whether a list of entries separated by `sep` holds `word` as one. */
int has_entry(const char *list, const char *word, char sep) {
  size_t n = strlen(word);
  for (const char *p = list; p && (p = strstr(p, word)); p += n)
    if ((p == list || p[-1] == sep) && (p[n] == sep || p[n] == '\0'))
      return 1;
  return 0;
}

int device_has_ext(cl_device_id dev, const char *ext) {
  char *exts = info_string(NULL, dev, CL_DEVICE_EXTENSIONS);
  int found = has_entry(exts, ext, ' ');
  free(exts);
  return found;
}

/* "OpenCL 3.0 ..." -> 30; 0 when the string does not parse. */
int parse_version(const char *s) {
  int major = 0, minor = 0;
  if (!s || sscanf(s, "OpenCL %d.%d", &major, &minor) != 2)
    return 0;
  return major * 10 + minor;
}

int device_version(cl_device_id dev) {
  char *s = info_string(NULL, dev, CL_DEVICE_VERSION);
  int v = parse_version(s);
  free(s);
  return v;
}

cl_platform_id device_platform(cl_device_id dev) {
  cl_platform_id plat = NULL;
  if (ICD_CALL(clGetDeviceInfo, dev, CL_DEVICE_PLATFORM, sizeof plat, &plat,
               NULL) != CL_SUCCESS)
    return NULL;
  return plat;
}

/* "device 'NAME' (platform 'NAME')", for messages. */
const char *describe_device(cl_device_id dev, char *buf, size_t n) {
  char *dname = info_string(NULL, dev, CL_DEVICE_NAME);
  cl_platform_id plat = device_platform(dev);
  char *pname = plat ? info_string(plat, NULL, CL_PLATFORM_NAME) : NULL;
  snprintf(buf, n, "device '%s' (platform '%s')", dname ? dname : "?",
           pname ? pname : "?");
  free(dname);
  free(pname);
  return buf;
}

/* The devices of a context, malloc'd. */
pi_result context_devices(const char *fn, cl_context ctx,
                          cl_device_id **devs, cl_uint *count) {
  cl_uint n = 0;
  cl_int err = ICD_CALL(clGetContextInfo, ctx, CL_CONTEXT_NUM_DEVICES, sizeof n,
                        &n, NULL);
  if (err != CL_SUCCESS)
    return check_cl(fn, "clGetContextInfo", err);
  *devs = calloc(n ? n : 1, sizeof **devs);
  if (!*devs)
    return fail(PI_ERROR_OUT_OF_HOST_MEMORY, "%s: out of host memory", fn);
  err = ICD_CALL(clGetContextInfo, ctx, CL_CONTEXT_DEVICES, n * sizeof **devs,
                 *devs, NULL);
  if (err != CL_SUCCESS) {
    free(*devs);
    *devs = NULL;
    return check_cl(fn, "clGetContextInfo", err);
  }
  *count = n;
  return PI_SUCCESS;
}

/* One device of a context: the first that lists `ext` (when not NULL), else
 * the first device. */
pi_result context_device(const char *fn, cl_context ctx, const char *ext,
                         cl_device_id *dev) {
  cl_device_id *devs = NULL;
  cl_uint n = 0;
  pi_result r = context_devices(fn, ctx, &devs, &n);
  if (r != PI_SUCCESS)
    return r;
  if (n == 0) {
    free(devs);
    return fail(PI_ERROR_INVALID_CONTEXT, "%s: the context has no devices", fn);
  }
  *dev = devs[0];
  for (cl_uint i = 0; ext && i < n; ++i)
    if (device_has_ext(devs[i], ext)) {
      *dev = devs[i];
      break;
    }
  free(devs);
  return PI_SUCCESS;
}

pi_result queue_device(const char *fn, cl_command_queue q,
                       cl_device_id *dev) {
  return check_cl(fn, "clGetCommandQueueInfo",
                  ICD_CALL(clGetCommandQueueInfo, q, CL_QUEUE_DEVICE,
                           sizeof *dev, dev, NULL));
}

pi_result program_context(const char *fn, cl_program prog,
                          cl_context *ctx) {
  return check_cl(fn, "clGetProgramInfo",
                  ICD_CALL(clGetProgramInfo, prog, CL_PROGRAM_CONTEXT,
                           sizeof *ctx, ctx, NULL));
}
