/*
 * sampler.c: the PI sampler functions of the OpenCL plugin: creation from
 * PI sampler properties, queries and reference counts.
 */
#include "ocl_internal.h"

/* ---- Samplers -------------------------------------------------------------
 */

/* Properties default as in OpenCL: normalized coordinates, clamp, nearest.
 * A mipmap filter mode needs cl_khr_mipmap_image and OpenCL 2.0. */
pi_result
ocl_piSamplerCreate(pi_context context,
                    const pi_sampler_properties *sampler_properties,
                    pi_sampler *result_sampler) {
  cl_context ctx = (cl_context)context;
  cl_sampler_properties props[9] = {CL_SAMPLER_NORMALIZED_COORDS,
                                    CL_TRUE,
                                    CL_SAMPLER_ADDRESSING_MODE,
                                    CL_ADDRESS_CLAMP,
                                    CL_SAMPLER_FILTER_MODE,
                                    CL_FILTER_NEAREST,
                                    0,
                                    0,
                                    0};
  cl_int err;
  REQUIRE(result_sampler != NULL);
  *result_sampler = NULL;
  for (size_t i = 0; sampler_properties && sampler_properties[i]; i += 2) {
    pi_sampler_properties key = sampler_properties[i];
    cl_sampler_properties value = sampler_properties[i + 1];
    if (key == PI_SAMPLER_PROPERTIES_NORMALIZED_COORDS)
      props[1] = value ? CL_TRUE : CL_FALSE;
    else if (key == PI_SAMPLER_PROPERTIES_ADDRESSING_MODE)
      props[3] = value;
    else if (key == PI_SAMPLER_PROPERTIES_FILTER_MODE)
      props[5] = value;
    else if (key == PI_SAMPLER_PROPERTIES_MIP_FILTER_MODE) {
      props[6] = CL_SAMPLER_MIP_FILTER_MODE_KHR;
      props[7] = value;
    } else
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown sampler property 0x%llx",
                  FN, (unsigned long long)key);
  }
  cl_device_id dev = NULL;
  const struct platform_state *ps = NULL;
  pi_result r = context_device(FN, ctx, NULL, &dev);
  if (r == PI_SUCCESS)
    r = device_state(FN, dev, &ps);
  if (r != PI_SUCCESS)
    return r;
  if (props[6] &&
      (ps->version < 20 || !device_has_ext(dev, "cl_khr_mipmap_image"))) {
    char what[512];
    return fail(PI_ERROR_INVALID_OPERATION,
                "%s: %s has no mipmapped images (cl_khr_mipmap_image); leave "
                "out PI_SAMPLER_PROPERTIES_MIP_FILTER_MODE",
                FN, describe_device(dev, what, sizeof what));
  }
  if (ps->version >= 20) {
    *result_sampler =
        (pi_sampler)ICD_CREATE(clCreateSamplerWithProperties, &err, ctx, props);
    return CL_CHECK(clCreateSamplerWithProperties, err);
  }
  *result_sampler = (pi_sampler)ICD_CREATE(
      clCreateSampler, &err, ctx, (cl_bool)props[1],
      (cl_addressing_mode)props[3], (cl_filter_mode)props[5]);
  return CL_CHECK(clCreateSampler, err);
}

pi_result backend_sampler_info(pi_sampler sampler, const struct info_out *o) {
  return INFO_PASS(o, clGetSamplerInfo, (cl_sampler)sampler);
}

pi_result ocl_piSamplerRetain(pi_sampler sampler) {
  return CL_CALL(clRetainSampler, (cl_sampler)sampler);
}

pi_result ocl_piSamplerRelease(pi_sampler sampler) {
  return CL_CALL(clReleaseSampler, (cl_sampler)sampler);
}
