/*
 * fe_sampler.c: OpenCL samplers as PI samplers. clCreateSampler and
 * clCreateSamplerWithProperties are one piSamplerCreate, whose property
 * list takes OpenCL's names and values (normalized coordinates, addressing
 * mode, filter mode, and the mipmap filter mode of cl_khr_mipmap_image;
 * PI has no names for the LOD clamps); retain, release and the info
 * queries PI knows pass through. The front end keeps the application's
 * reference count (to refuse a release too many) and the property list.
 */
#include <stdlib.h>

#include "fe_mem.h"

static void sampler_free(void *o)
{
  cl_sampler s = o;
  free(s->propv);
  fe_context_unref(s->ctx);
}

static bool addressing_ok(cl_sampler_properties v)
{
  return v == CL_ADDRESS_NONE || v == CL_ADDRESS_CLAMP_TO_EDGE || v == CL_ADDRESS_CLAMP ||
         v == CL_ADDRESS_REPEAT || v == CL_ADDRESS_MIRRORED_REPEAT;
}

static bool filter_ok(cl_sampler_properties v)
{
  return v == CL_FILTER_NEAREST || v == CL_FILTER_LINEAR;
}

/* The PI list for an OpenCL one (NULL: the defaults); CL_INVALID_VALUE for
 * an unknown or repeated name or a bad value. */
static cl_int sampler_props(cl_context ctx, const cl_sampler_properties *in,
                            pi_sampler_properties out[9])
{
  size_t n = 0;
  for (size_t i = 0; in && in[i]; i += 2) {
    const cl_sampler_properties key = in[i], v = in[i + 1];
    for (size_t k = 0; k < i; k += 2)
      if (in[k] == key)
        return CL_INVALID_VALUE;
    bool ok;
    switch (key) {
    case CL_SAMPLER_NORMALIZED_COORDS:
      ok = v == CL_TRUE || v == CL_FALSE;
      break;
    case CL_SAMPLER_ADDRESSING_MODE:
      ok = addressing_ok(v);
      break;
    case CL_SAMPLER_FILTER_MODE:
      ok = filter_ok(v);
      break;
    case CL_SAMPLER_MIP_FILTER_MODE_KHR:
      ok = filter_ok(v) && fe_ctx_any(ctx, FE_CAP_MIPMAP);
      break;
    default: /* CL_SAMPLER_LOD_MIN/MAX_KHR included: PI cannot pass them */
      ok = false;
    }
    if (!ok || n + 3 > 9)
      return CL_INVALID_VALUE;
    out[n++] = (pi_sampler_properties)key; /* PI's names are OpenCL's */
    out[n++] = (pi_sampler_properties)v;
  }
  out[n] = 0;
  return CL_SUCCESS;
}

static cl_sampler sampler_create(cl_context ctx, const cl_sampler_properties *props,
                                 bool keep_props, cl_int *errcode_ret)
{
  if (!FE_IS(ctx, FE_CONTEXT))
    FE_FAIL(errcode_ret, CL_INVALID_CONTEXT);
  pi_sampler_properties pi_props[9];
  cl_int err = sampler_props(ctx, props, pi_props);
  if (err == CL_SUCCESS && !fe_ctx_any(ctx, FE_CAP_IMAGES))
    err = CL_INVALID_OPERATION;
  cl_sampler_properties *propv = NULL;
  size_t npropv = 0;
  if (err == CL_SUCCESS && keep_props)
    err = fe_copy_props(props, &propv, &npropv);
  pi_sampler ps = NULL;
  if (err == CL_SUCCESS)
    err = fe_err(pirt_piSamplerCreate(ctx->o.pl, ctx->pi, pi_props, &ps));
  cl_sampler s = err == CL_SUCCESS ? fe_new(sizeof *s, FE_SAMPLER, ctx->o.pl) : NULL;
  if (err == CL_SUCCESS && !s) {
    pirt_piSamplerRelease(ctx->o.pl, ps);
    err = CL_OUT_OF_HOST_MEMORY;
  }
  if (err != CL_SUCCESS) {
    free(propv);
    FE_FAIL(errcode_ret, err);
  }
  s->pi = ps;
  s->ctx = ctx;
  fe_ref(ctx);
  s->propv = propv;
  s->npropv = npropv;
  atomic_init(&s->apprefs, 1);
  fe_map_add(FE_SAMPLER, ps, s);
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return s;
}

/* piSamplerCreate with the properties given. */
cl_sampler CL_API_CALL fe_clCreateSamplerWithProperties(cl_context ctx,
                                                        const cl_sampler_properties *props,
                                                        cl_int *errcode_ret)
{
  return sampler_create(ctx, props, true, errcode_ret);
}

/* piSamplerCreate with the three properties. */
cl_sampler CL_API_CALL fe_clCreateSampler(cl_context ctx, cl_bool normalized,
                                          cl_addressing_mode addressing, cl_filter_mode filter,
                                          cl_int *errcode_ret)
{
  const cl_sampler_properties props[] = {CL_SAMPLER_NORMALIZED_COORDS, normalized,
                                         CL_SAMPLER_ADDRESSING_MODE, addressing,
                                         CL_SAMPLER_FILTER_MODE, filter, 0};
  return sampler_create(ctx, props, false, errcode_ret);
}

static bool sampler_live(cl_sampler s)
{
  return FE_IS(s, FE_SAMPLER) && atomic_load(&s->apprefs) > 0;
}

/* piSamplerRetain, and an application and wrapper reference. */
cl_int CL_API_CALL fe_clRetainSampler(cl_sampler s)
{
  if (!sampler_live(s))
    return CL_INVALID_SAMPLER;
  pi_result r = pirt_piSamplerRetain(s->o.pl, s->pi);
  if (r != PI_SUCCESS)
    return fe_err(r);
  atomic_fetch_add(&s->apprefs, 1);
  fe_ref(s);
  return CL_SUCCESS;
}

/* piSamplerRelease; refused beyond the application's references. */
cl_int CL_API_CALL fe_clReleaseSampler(cl_sampler s)
{
  if (!FE_IS(s, FE_SAMPLER))
    return CL_INVALID_SAMPLER;
  unsigned n = atomic_load(&s->apprefs);
  do {
    if (n == 0)
      return CL_INVALID_SAMPLER; /* released more often than retained */
  } while (!atomic_compare_exchange_weak(&s->apprefs, &n, n - 1));
  if (n == 1)
    fe_map_remove(FE_SAMPLER, s->pi); /* before PI may reuse the handle */
  pi_result r = pirt_piSamplerRelease(s->o.pl, s->pi);
  if (r != PI_SUCCESS) {
    if (n == 1)
      fe_map_add(FE_SAMPLER, s->pi, s);
    atomic_fetch_add(&s->apprefs, 1);
    return fe_err(r);
  }
  fe_unref(s, sampler_free);
  return CL_SUCCESS;
}

static pi_result sampler_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct _cl_sampler *s = obj;
  return pirt_piSamplerGetInfo(s->o.pl, s->pi, q, n, v, r);
}

/* piSamplerGetInfo, the context and properties from the wrapper. */
cl_int CL_API_CALL fe_clGetSamplerInfo(cl_sampler s, cl_sampler_info param, size_t size,
                                       void *value, size_t *size_ret)
{
  if (!sampler_live(s))
    return CL_INVALID_SAMPLER;
  switch (param) {
  case CL_SAMPLER_CONTEXT:
    return FE_PUT_VAL(size, value, size_ret, s->ctx);
  case CL_SAMPLER_PROPERTIES:
    return fe_put(size, value, size_ret, s->propv, s->npropv * sizeof *s->propv);
  default: /* reference count, coordinates, modes: PI answers */
    return fe_pi_info("pi_sampler_info", sampler_getter, s, param, size, value, size_ret);
  }
}
