/*
 * sampler.c: the PI sampler functions of the CUDA plugin, which does not
 * support samplers: each fails with a message.
 */
#include "cu_internal.h"

/* ---- Samplers -------------------------------------------------------------
 */

pi_result
cu_piSamplerCreate(pi_context context,
                   const pi_sampler_properties *sampler_properties,
                   pi_sampler *result_sampler) {
  (void)context;
  (void)sampler_properties;
  if (result_sampler)
    *result_sampler = NULL;
  return no_samplers(FN);
}

/* No samplers, so no facts of them: every query fails. */
DEFINE_NO_FACTS(sampler)

pi_result backend_sampler_info(pi_sampler sampler, const struct info_out *o) {
  (void)sampler;
  return no_samplers(o->fn);
}

pi_result cu_piSamplerRetain(pi_sampler sampler) {
  (void)sampler;
  return no_samplers(FN);
}

pi_result cu_piSamplerRelease(pi_sampler sampler) {
  (void)sampler;
  return no_samplers(FN);
}
