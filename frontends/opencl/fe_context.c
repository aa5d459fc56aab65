/*
 * fe_context.c: OpenCL contexts over PI contexts.
 *
 * A context is one piContextCreate for the (distinct) devices the
 * application names, all of one platform, so of one plugin. PI describes
 * no context property OpenCL has, so PI gets none: the front end checks
 * the application's list (CL_CONTEXT_PLATFORM against the devices'
 * platform, CL_CONTEXT_INTEROP_USER_SYNC, which only matters for sharing
 * with graphics APIs), keeps it for CL_CONTEXT_PROPERTIES, and refuses
 * every other key with CL_INVALID_PROPERTY: the sharing and other
 * extensions those keys belong to are not offered by the platforms (their
 * names are taken out of the extension strings). The application's
 * pfn_notify goes to piContextCreate, so the driver's own messages reach
 * it; the front end calls it too (fe_context_notify). The devices, their
 * count and the properties are answered from the wrapper; destructor
 * callbacks run, latest first, when the wrapper goes (after every object of
 * the context went).
 */
#include <stdlib.h>
#include <string.h>

#include "fe.h"

static void context_free(void *o)
{
  cl_context c = o;
  for (fe_callback *cb = c->destructors, *next; cb; cb = next) {
    next = cb->next;
    ((void(CL_CALLBACK *)(cl_context, void *))cb->fn)(c, cb->user);
    free(cb);
  }
  fe_map_remove(FE_CONTEXT, c->pi);
  for (cl_uint i = 0; i < c->ndev; i++)
    if (c->devices[i]->parent)
      fe_clReleaseDevice(c->devices[i]);
  free(c->devices);
  free(c->props);
  pthread_mutex_destroy(&c->lock);
  pthread_mutex_destroy(&c->hold_lock);
}

/* Drops a wrapper reference to a context (fe.h). */
void fe_context_unref(cl_context ctx) { fe_unref(ctx, context_free); }

/* Calls the application's pfn_notify, if it gave one. */
void fe_context_notify(cl_context ctx, const char *what)
{
  if (ctx && ctx->notify)
    ctx->notify(what, NULL, 0, ctx->notify_user);
}

/* Whether the context was made for `dev`. */
bool fe_context_has_device(cl_context ctx, cl_device_id dev)
{
  for (cl_uint i = 0; i < ctx->ndev; i++)
    if (ctx->devices[i] == dev)
      return true;
  return false;
}

/* Checks a context property list; *platform gets CL_CONTEXT_PLATFORM's. */
static cl_int check_props(const cl_context_properties *props, cl_platform_id *platform)
{
  *platform = NULL;
  bool have_platform = false, have_sync = false;
  for (size_t i = 0; props && props[i]; i += 2) {
    switch (props[i]) {
    case CL_CONTEXT_PLATFORM:
      if (have_platform)
        return CL_INVALID_PROPERTY;
      have_platform = true;
      *platform = (cl_platform_id)props[i + 1];
      if (!FE_IS(*platform, FE_PLATFORM))
        return CL_INVALID_PLATFORM;
      break;
    case CL_CONTEXT_INTEROP_USER_SYNC:
      if (have_sync || (props[i + 1] != CL_TRUE && props[i + 1] != CL_FALSE))
        return CL_INVALID_PROPERTY;
      have_sync = true;
      break;
    default:
      return CL_INVALID_PROPERTY;
    }
  }
  return CL_SUCCESS;
}

/* The context for checked devices of `platform`. */
static cl_context context_create(const cl_context_properties *props, cl_platform_id platform,
                                 cl_uint num_devices, const cl_device_id *devices,
                                 void(CL_CALLBACK *notify)(const char *, const void *, size_t,
                                                           void *),
                                 void *user_data, cl_int *errcode_ret)
{
  /* Devices named twice count once. */
  cl_device_id *devs = malloc(num_devices * sizeof *devs);
  pi_device *pis = malloc(num_devices * sizeof *pis);
  cl_context c = fe_new(sizeof *c, FE_CONTEXT, platform->o.pl);
  cl_int err = devs && pis && c ? fe_copy_props(props, &c->props, &c->nprops)
                                : CL_OUT_OF_HOST_MEMORY;
  if (err != CL_SUCCESS) {
    free(devs);
    free(pis);
    if (c)
      free(c->props);
    free(c);
    FE_FAIL(errcode_ret, err);
  }
  cl_uint n = 0;
  for (cl_uint i = 0; i < num_devices; i++) {
    bool seen = false;
    for (cl_uint k = 0; k < n && !seen; k++)
      seen = devs[k] == devices[i];
    if (!seen)
      devs[n++] = devices[i];
  }
  fe_pi_devices(n, devs, pis);
  pi_context pc = NULL;
  pi_result r = pirt_piContextCreate(platform->o.pl, NULL, n, pis, notify, user_data, &pc);
  free(pis);
  if (r != PI_SUCCESS) {
    free(devs);
    free(c->props);
    free(c);
    FE_FAIL(errcode_ret, fe_err(r));
  }
  c->pi = pc;
  c->platform = platform;
  c->ndev = n;
  c->devices = devs;
  c->notify = notify;
  c->notify_user = user_data;
  pthread_mutex_init(&c->lock, NULL);
  pthread_mutex_init(&c->hold_lock, NULL);
  /* The context keeps its sub-devices, as OpenCL's contexts do. */
  for (cl_uint i = 0; i < n; i++)
    if (devs[i]->parent)
      fe_clRetainDevice(devs[i]);
  fe_map_add(FE_CONTEXT, pc, c);
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return c;
}

/* One piContextCreate for the distinct devices named. */
cl_context CL_API_CALL fe_clCreateContext(const cl_context_properties *properties,
                                          cl_uint num_devices, const cl_device_id *devices,
                                          void(CL_CALLBACK *pfn_notify)(const char *,
                                                                        const void *, size_t,
                                                                        void *),
                                          void *user_data, cl_int *errcode_ret)
{
  fe_platforms_init();
  cl_platform_id named, platform = NULL;
  cl_int err = check_props(properties, &named);
  if (err == CL_SUCCESS && (!pfn_notify && user_data))
    err = CL_INVALID_VALUE;
  if (err == CL_SUCCESS)
    err = fe_check_devices(num_devices, devices, &platform);
  if (err == CL_SUCCESS && named && named != platform)
    err = CL_INVALID_DEVICE; /* not a device of the platform named */
  if (err != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  return context_create(properties, platform, num_devices, devices, pfn_notify, user_data,
                        errcode_ret);
}

/* The devices of that type of the platform named (or the first), as
 * clGetDeviceIDs picks them. */
cl_context CL_API_CALL fe_clCreateContextFromType(
    const cl_context_properties *properties, cl_device_type device_type,
    void(CL_CALLBACK *pfn_notify)(const char *, const void *, size_t, void *), void *user_data,
    cl_int *errcode_ret)
{
  fe_platforms_init();
  cl_platform_id platform;
  cl_int err = check_props(properties, &platform);
  if (err == CL_SUCCESS && (!pfn_notify && user_data))
    err = CL_INVALID_VALUE;
  if (err == CL_SUCCESS && !platform) {
    /* Implementation-defined: the first platform. */
    if (fe_nplatforms)
      platform = fe_platforms[0];
    else
      err = CL_INVALID_PLATFORM;
  }
  cl_uint n = 0;
  if (err == CL_SUCCESS)
    err = fe_clGetDeviceIDs(platform, device_type, 0, NULL, &n);
  cl_device_id *devs = err == CL_SUCCESS ? malloc(n * sizeof *devs) : NULL;
  if (err == CL_SUCCESS && !devs)
    err = CL_OUT_OF_HOST_MEMORY;
  if (err == CL_SUCCESS)
    err = fe_clGetDeviceIDs(platform, device_type, n, devs, NULL);
  if (err != CL_SUCCESS) {
    free(devs);
    FE_FAIL(errcode_ret, err);
  }
  cl_context c = context_create(properties, platform, n, devs, pfn_notify, user_data,
                                errcode_ret);
  free(devs);
  return c;
}

/* piContextRetain, and a wrapper reference. */
cl_int CL_API_CALL fe_clRetainContext(cl_context context)
{
  FE_CHECK(context, FE_CONTEXT, CL_INVALID_CONTEXT);
  pi_result r = pirt_piContextRetain(context->o.pl, context->pi);
  if (r == PI_SUCCESS)
    fe_ref(context);
  return fe_err(r);
}

/* piContextRelease; the wrapper goes with its last reference. */
cl_int CL_API_CALL fe_clReleaseContext(cl_context context)
{
  FE_CHECK(context, FE_CONTEXT, CL_INVALID_CONTEXT);
  pi_result r = pirt_piContextRelease(context->o.pl, context->pi);
  if (r == PI_SUCCESS)
    fe_context_unref(context);
  return fe_err(r);
}

/* Answered from the wrapper. */
cl_int CL_API_CALL fe_clGetContextInfo(cl_context context, cl_context_info param, size_t size,
                                       void *value, size_t *size_ret)
{
  FE_CHECK(context, FE_CONTEXT, CL_INVALID_CONTEXT);
  switch (param) {
  case CL_CONTEXT_REFERENCE_COUNT: {
    /* The application's references and those of the context's objects. */
    cl_uint refs = atomic_load(&context->o.refs);
    return FE_PUT_VAL(size, value, size_ret, refs);
  }
  case CL_CONTEXT_NUM_DEVICES:
    return FE_PUT_VAL(size, value, size_ret, context->ndev);
  case CL_CONTEXT_DEVICES:
    return fe_put(size, value, size_ret, context->devices,
                  context->ndev * sizeof *context->devices);
  case CL_CONTEXT_PROPERTIES:
    return fe_put(size, value, size_ret, context->props,
                  context->nprops * sizeof *context->props);
  default:
    /* PI's other context queries (its platform, USM and atomic
     * capabilities) are not OpenCL queries. */
    return CL_INVALID_VALUE;
  }
}

/* Kept by the wrapper; called when it goes, latest first. */
cl_int CL_API_CALL fe_clSetContextDestructorCallback(cl_context context,
                                                     void(CL_CALLBACK *fn)(cl_context, void *),
                                                     void *user_data)
{
  FE_CHECK(context, FE_CONTEXT, CL_INVALID_CONTEXT);
  if (!fn)
    return CL_INVALID_VALUE;
  fe_callback *cb = malloc(sizeof *cb);
  if (!cb)
    return CL_OUT_OF_HOST_MEMORY;
  cb->fn = (void(CL_CALLBACK *)(void *, void *))fn;
  cb->obj = context;
  cb->user = user_data;
  pthread_mutex_lock(&context->lock);
  cb->next = context->destructors; /* latest first */
  context->destructors = cb;
  pthread_mutex_unlock(&context->lock);
  return CL_SUCCESS;
}
