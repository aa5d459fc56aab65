/*
 * enqueue.c: kernel launches in the Level Zero plugin (cooperative ones
 * included, with the group size set at launch), the cooperative group
 * count, and event waits and barriers.
 */
#include "lz_internal.h"

/* The group size and offset are kernel state in Level Zero, captured at
 * append: the kernel lock covers both. */
static pi_result append_launch(const struct append *a, void *op) {
  struct launch_op *l = op;
  pthread_mutex_lock(&l->k->lock);
  pi_result r = check_ze(a->fn, "zeKernelSetGroupSize",
                         zeKernelSetGroupSize(l->z, l->group[0], l->group[1],
                                              l->group[2]));
  if (r == PI_SUCCESS && l->set_offset)
    r = check_ze(a->fn, "zeKernelSetGlobalOffsetExp",
                 zeKernelSetGlobalOffsetExp(l->z, l->offset[0], l->offset[1],
                                            l->offset[2]));
  if (r == PI_SUCCESS && l->cooperative)
    r = check_ze(a->fn, "zeCommandListAppendLaunchCooperativeKernel",
                 zeCommandListAppendLaunchCooperativeKernel(
                     a->list, l->z, &l->count, a->signal, a->nwait, a->wait));
  else if (r == PI_SUCCESS)
    r = check_ze(a->fn, "zeCommandListAppendLaunchKernel",
                 zeCommandListAppendLaunchKernel(a->list, l->z, &l->count,
                                                 a->signal, a->nwait,
                                                 a->wait));
  pthread_mutex_unlock(&l->k->lock);
  return r;
}

pi_result backend_launch(const char *fn, bool cooperative, pi_queue q,
                         pi_kernel k, pi_uint32 dims, const size_t *offset,
                         const size_t *global, const size_t *local,
                         pi_uint32 nwait, const pi_event *wait,
                         pi_event *event) {
  if (!q)
    return fail(PI_ERROR_INVALID_QUEUE, "%s: the queue is NULL", fn);
  if (!k)
    return fail(PI_ERROR_INVALID_KERNEL, "%s: the kernel is NULL", fn);
  if (dims < 1 || dims > 3)
    return fail(PI_ERROR_INVALID_WORK_DIMENSION,
                "%s: kernel '%s': %u dimensions; use 1, 2 or 3", fn, k->name,
                (unsigned)dims);
  if (!global)
    return fail(PI_ERROR_INVALID_GLOBAL_WORK_SIZE,
                "%s: kernel '%s': global_work_size is NULL", fn, k->name);
  struct launch_op op = {.k = k, .cooperative = cooperative};
  op.z = kernel_for(k, q->device);
  if (!op.z)
    return fail(PI_ERROR_INVALID_KERNEL,
                "%s: kernel '%s' was not built for the queue's device '%s'",
                fn, k->name, dev_name(q->device));
  uint32_t g[3] = {1, 1, 1}, l[3] = {1, 1, 1};
  for (pi_uint32 d = 0; d < dims; ++d) {
    if (global[d] == 0 || !fits_u32(global[d]))
      return fail(PI_ERROR_INVALID_GLOBAL_WORK_SIZE,
                  "%s: kernel '%s': global size %zu in dimension %u is 0 or "
                  "does not fit 32 bits",
                  fn, k->name, global[d], (unsigned)d);
    g[d] = (uint32_t)global[d];
    if (offset && offset[d]) {
      if (!q->context->platform->global_offset)
        return fail(PI_ERROR_INVALID_GLOBAL_OFFSET,
                    "%s: kernel '%s': a global offset needs the Level Zero "
                    "extension " ZE_GLOBAL_OFFSET_EXP_NAME
                    ", which the driver does not offer",
                    fn, k->name);
      if (!fits_u32(offset[d]))
        return fail(PI_ERROR_INVALID_GLOBAL_OFFSET,
                    "%s: kernel '%s': offset %zu does not fit 32 bits", fn,
                    k->name, offset[d]);
      op.offset[d] = (uint32_t)offset[d];
    }
  }
  op.set_offset = q->context->platform->global_offset;
  if (local) {
    size_t total = 1;
    for (pi_uint32 d = 0; d < dims; ++d) {
      if (local[d] == 0 || global[d] % local[d])
        return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                    "%s: kernel '%s': global size %zu is not a multiple of "
                    "local size %zu in dimension %u",
                    fn, k->name, global[d], local[d], (unsigned)d);
      l[d] = (uint32_t)local[d];
      total *= local[d];
    }
    if (total > q->device->compute.maxTotalGroupSize)
      return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                  "%s: kernel '%s': a work-group of %zu work-items exceeds the "
                  "%u of device '%s'",
                  fn, k->name, total,
                  (unsigned)q->device->compute.maxTotalGroupSize,
                  dev_name(q->device));
  } else {
    pi_result r = check_ze(fn, "zeKernelSuggestGroupSize",
                           zeKernelSuggestGroupSize(op.z, g[0], g[1], g[2],
                                                    &l[0], &l[1], &l[2]));
    if (r != PI_SUCCESS)
      return r;
    for (int d = 0; d < 3; ++d)
      if (l[d] == 0 || g[d] % l[d])
        return fail(PI_ERROR_INVALID_WORK_GROUP_SIZE,
                    "%s: kernel '%s': zeKernelSuggestGroupSize suggested "
                    "%u,%u,%u, which does not divide the global size "
                    "%u,%u,%u",
                    fn, k->name, (unsigned)l[0], (unsigned)l[1],
                    (unsigned)l[2], (unsigned)g[0], (unsigned)g[1],
                    (unsigned)g[2]);
  }
  memcpy(op.group, l, sizeof l);
  op.count = (ze_group_count_t){g[0] / l[0], g[1] / l[1], g[2] / l[2]};
  return enqueue(fn, q, PI_COMMAND_TYPE_NDRANGE_KERNEL, nwait, wait, event,
                 false, false, append_launch, &op, NULL);
}

/* zeKernelSuggestMaxCooperativeGroupCount for a 1D group of
 * local_work_size; Level Zero takes local memory as kernel arguments, so
 * the dynamic size does not change its answer. */
pi_result lz_piextKernelSuggestMaxCooperativeGroupCount(
    pi_kernel kernel, size_t local_work_size, size_t dynamic_shared_memory_size,
    pi_uint32 *group_count_ret) {
  (void)dynamic_shared_memory_size;
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  REQUIRE(group_count_ret != NULL && local_work_size > 0 &&
          fits_u32(local_work_size));
  ze_kernel_handle_t z = NULL;
  for (pi_uint32 i = 0; !z && i < kernel->n; ++i)
    z = kernel->ze[i];
  if (!z)
    return fail(PI_ERROR_INVALID_KERNEL, "%s: kernel '%s' has no Level Zero "
                "kernel on any device", FN, kernel->name);
  pthread_mutex_lock(&kernel->lock);
  pi_result r = ZE_CALL(zeKernelSetGroupSize, z, (uint32_t)local_work_size, 1, 1);
  uint32_t n = 0;
  if (r == PI_SUCCESS)
    r = ZE_CALL(zeKernelSuggestMaxCooperativeGroupCount, z, &n);
  pthread_mutex_unlock(&kernel->lock);
  if (r == PI_SUCCESS)
    *group_count_ret = n;
  return r;
}

pi_result lz_piEnqueueEventsWait(pi_queue command_queue,
                                 pi_uint32 num_events_in_wait_list,
                                 const pi_event *event_wait_list,
                                 pi_event *event) {
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_MARKER,
                 num_events_in_wait_list, event_wait_list, event, false,
                 num_events_in_wait_list == 0, append_barrier, NULL, NULL);
}

/* A barrier: on out-of-order queues it waits for every pending command. */
pi_result lz_piEnqueueEventsWaitWithBarrier(
    pi_queue command_queue, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return enqueue(FN, command_queue, PI_COMMAND_TYPE_BARRIER,
                 num_events_in_wait_list, event_wait_list, event, false, true,
                 append_barrier, NULL, NULL);
}
