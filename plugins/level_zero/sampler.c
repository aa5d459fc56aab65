/*
 * sampler.c: the PI sampler functions of the Level Zero plugin: creation
 * from PI sampler properties, queries and reference counts.
 */
#include "lz_internal.h"

/* ---- Samplers ----------------------------------------------------------------------- */

pi_result lz_piSamplerCreate(
    pi_context context, const pi_sampler_properties *sampler_properties,
    pi_sampler *result_sampler) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(result_sampler != NULL);
  *result_sampler = NULL;
  pi_bool normalized = PI_TRUE;
  pi_sampler_addressing_mode addressing = PI_SAMPLER_ADDRESSING_MODE_CLAMP;
  pi_sampler_filter_mode filter = PI_SAMPLER_FILTER_MODE_NEAREST;
  for (size_t i = 0; sampler_properties && sampler_properties[i]; i += 2) {
    pi_sampler_properties key = sampler_properties[i];
    pi_sampler_properties value = sampler_properties[i + 1];
    if (key == PI_SAMPLER_PROPERTIES_NORMALIZED_COORDS)
      normalized = value ? PI_TRUE : PI_FALSE;
    else if (key == PI_SAMPLER_PROPERTIES_ADDRESSING_MODE)
      addressing = (pi_sampler_addressing_mode)value;
    else if (key == PI_SAMPLER_PROPERTIES_FILTER_MODE)
      filter = (pi_sampler_filter_mode)value;
    else if (key == PI_SAMPLER_PROPERTIES_MIP_FILTER_MODE)
      return fail(PI_ERROR_INVALID_OPERATION,
                  "%s: Level Zero samplers have no mipmap filter; leave out "
                  "PI_SAMPLER_PROPERTIES_MIP_FILTER_MODE",
                  FN);
    else
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown sampler property 0x%llx",
                  FN, (unsigned long long)key);
  }
  ze_sampler_desc_t desc = {.stype = ZE_STRUCTURE_TYPE_SAMPLER_DESC,
                            .isNormalized = normalized ? 1 : 0};
  switch (addressing) {
  case PI_SAMPLER_ADDRESSING_MODE_NONE:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_NONE;
    break;
  case PI_SAMPLER_ADDRESSING_MODE_REPEAT:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_REPEAT;
    break;
  case PI_SAMPLER_ADDRESSING_MODE_CLAMP:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_CLAMP_TO_BORDER;
    break;
  case PI_SAMPLER_ADDRESSING_MODE_CLAMP_TO_EDGE:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_CLAMP;
    break;
  case PI_SAMPLER_ADDRESSING_MODE_MIRRORED_REPEAT:
    desc.addressMode = ZE_SAMPLER_ADDRESS_MODE_MIRROR;
    break;
  default:
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown addressing mode 0x%x", FN,
                (unsigned)addressing);
  }
  if (filter != PI_SAMPLER_FILTER_MODE_NEAREST &&
      filter != PI_SAMPLER_FILTER_MODE_LINEAR)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown filter mode 0x%x", FN,
                (unsigned)filter);
  desc.filterMode = filter == PI_SAMPLER_FILTER_MODE_LINEAR
                        ? ZE_SAMPLER_FILTER_MODE_LINEAR
                        : ZE_SAMPLER_FILTER_MODE_NEAREST;
  pi_sampler s = calloc(1, sizeof *s);
  if (!s)
    return out_of_memory(FN);
  pi_result r = ZE_CALL(zeSamplerCreate, context->ze, context->devices[0]->ze,
                        &desc, &s->ze);
  if (r != PI_SUCCESS) {
    free(s);
    return r;
  }
  s->context = context;
  s->normalized = normalized;
  s->addressing = addressing;
  s->filter = filter;
  atomic_init(&s->refs, 1);
  context_retain(context);
  *result_sampler = s;
  return PI_SUCCESS;
}

DEFINE_FACTS(sampler, s, .refs = atomic_load(&s->refs),
             .context = s->context)

pi_result backend_sampler_info(pi_sampler sampler, const struct info_out *o) {
  switch (o->query) {
  case PI_SAMPLER_INFO_NORMALIZED_COORDS:
    return put_bool(o, sampler->normalized);
  case PI_SAMPLER_INFO_ADDRESSING_MODE:
    return put_u32(o, sampler->addressing);
  case PI_SAMPLER_INFO_FILTER_MODE:
    return put_u32(o, sampler->filter);
  case PI_SAMPLER_INFO_MIP_FILTER_MODE:
  case PI_SAMPLER_INFO_LOD_MIN:
  case PI_SAMPLER_INFO_LOD_MAX:
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: query 0x%x is about mipmaps, which Level Zero samplers do "
                "not have",
                o->fn, (unsigned)o->query);
  default:
    return unknown_query(o);
  }
}

pi_result lz_piSamplerRetain(pi_sampler sampler) {
  NEED(sampler, PI_ERROR_INVALID_SAMPLER);
  ref_retain(&sampler->refs);
  return PI_SUCCESS;
}

pi_result lz_piSamplerRelease(pi_sampler sampler) {
  NEED(sampler, PI_ERROR_INVALID_SAMPLER);
  if (!ref_release(&sampler->refs))
    return PI_SUCCESS;
  pi_result r = ZE_CALL(zeSamplerDestroy, sampler->ze);
  pi_result cr = context_release(FN, sampler->context);
  free(sampler);
  return r == PI_SUCCESS ? cr : r;
}
