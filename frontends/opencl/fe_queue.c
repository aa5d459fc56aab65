/*
 * fe_queue.c: OpenCL command-queues over PI queues.
 *
 * clCreateCommandQueue is piQueueCreate (its properties are PI's queue
 * flags, which share OpenCL's bits); clCreateCommandQueueWithProperties is
 * piextQueueCreate with the flags as a property list. Only host queues
 * exist: PI has no device-side enqueue, so the devices report no on-device
 * queue properties, a CL_QUEUE_ON_DEVICE request is valid but unsupported
 * (CL_INVALID_QUEUE_PROPERTIES), CL_QUEUE_SIZE (a device queue's) is
 * invalid without it, and clSetDefaultDeviceCommandQueue has nothing to
 * replace. A host property the device does not list in
 * CL_DEVICE_QUEUE_ON_HOST_PROPERTIES is refused with
 * CL_INVALID_QUEUE_PROPERTIES whichever call asks for it: rusticl offers no
 * out-of-order queues, refuses one from clCreateCommandQueue, yet takes one
 * from clCreateCommandQueueWithProperties (which the plugin calls), so
 * through PI an application that asked for one got a queue the device says
 * it cannot have. The priority and throttle hints are extensions the platforms do
 * not offer. clSetCommandQueueProperty is OpenCL 1.0's, which later
 * versions allow to fail unconditionally (CL_INVALID_OPERATION): PI cannot
 * change a queue's properties.
 */
#include <stdlib.h>

#include "fe_mem.h" /* fe_devcap */

static void queue_free(void *o)
{
  cl_command_queue q = o;
  fe_map_remove(FE_QUEUE, q->pi);
  free(q->propv);
  fe_context_unref(q->ctx);
}

/* Drops a wrapper reference to a queue (fe.h). */
void fe_queue_unref(cl_command_queue q) { fe_unref(q, queue_free); }

static const cl_command_queue_properties host_props =
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE | CL_QUEUE_PROFILING_ENABLE;

/* Creates the queue once its arguments are checked: through piQueueCreate,
 * or piextQueueCreate when the application gave a property list (`propv`,
 * kept for CL_QUEUE_PROPERTIES_ARRAY). Host properties the device does not
 * offer are refused (where PI can say which it offers). */
static cl_command_queue queue_create(cl_context ctx, cl_device_id dev,
                                     cl_command_queue_properties flags, bool with_list,
                                     const cl_queue_properties *propv, cl_int *errcode_ret)
{
  uint64_t offered;
  if ((flags & host_props) && fe_devcap(dev, FE_CAP_QUEUE_HOST, &offered) &&
      (flags & host_props & ~(cl_command_queue_properties)offered))
    FE_FAIL(errcode_ret, CL_INVALID_QUEUE_PROPERTIES);
  cl_command_queue q = fe_new(sizeof *q, FE_QUEUE, ctx->o.pl);
  if (!q)
    FE_FAIL(errcode_ret, CL_OUT_OF_HOST_MEMORY);
  cl_int err = fe_copy_props(propv, &q->propv, &q->npropv);
  if (err != CL_SUCCESS) {
    free(q);
    FE_FAIL(errcode_ret, err);
  }
  pi_result r;
  if (with_list) {
    pi_queue_properties pl[] = {PI_QUEUE_FLAGS, flags, 0};
    r = pirt_piextQueueCreate(ctx->o.pl, ctx->pi, dev->pi, pl, &q->pi);
  } else {
    r = pirt_piQueueCreate(ctx->o.pl, ctx->pi, dev->pi, flags, &q->pi);
  }
  if (r != PI_SUCCESS) {
    free(q->propv);
    free(q);
    FE_FAIL(errcode_ret, fe_err(r));
  }
  q->ctx = ctx;
  fe_ref(ctx);
  q->dev = dev;
  q->props = flags;
  fe_map_add(FE_QUEUE, q->pi, q);
  if (errcode_ret)
    *errcode_ret = CL_SUCCESS;
  return q;
}

/* CL_INVALID_CONTEXT or CL_INVALID_DEVICE for a queue's context and device. */
static cl_int check_target(cl_context ctx, cl_device_id dev)
{
  if (!FE_IS(ctx, FE_CONTEXT))
    return CL_INVALID_CONTEXT;
  if (!FE_IS(dev, FE_DEVICE) || !fe_context_has_device(ctx, dev))
    return CL_INVALID_DEVICE;
  return CL_SUCCESS;
}

/* piQueueCreate with the host queue properties. */
cl_command_queue CL_API_CALL fe_clCreateCommandQueue(cl_context context, cl_device_id device,
                                                     cl_command_queue_properties properties,
                                                     cl_int *errcode_ret)
{
  cl_int err = check_target(context, device);
  if (err == CL_SUCCESS && (properties & ~host_props))
    err = CL_INVALID_VALUE;
  if (err != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  return queue_create(context, device, properties, false, NULL, errcode_ret);
}

/* piextQueueCreate; device queues are refused. */
cl_command_queue CL_API_CALL fe_clCreateCommandQueueWithProperties(
    cl_context context, cl_device_id device, const cl_queue_properties *properties,
    cl_int *errcode_ret)
{
  cl_int err = check_target(context, device);
  if (err != CL_SUCCESS)
    FE_FAIL(errcode_ret, err);
  const cl_command_queue_properties known = host_props | CL_QUEUE_ON_DEVICE |
                                            CL_QUEUE_ON_DEVICE_DEFAULT;
  cl_command_queue_properties flags = 0;
  bool have_flags = false, have_size = false;
  for (size_t i = 0; properties && properties[i]; i += 2) {
    switch (properties[i]) {
    case CL_QUEUE_PROPERTIES:
      if (have_flags)
        FE_FAIL(errcode_ret, CL_INVALID_VALUE);
      have_flags = true;
      flags = (cl_command_queue_properties)properties[i + 1];
      break;
    case CL_QUEUE_SIZE:
      if (have_size)
        FE_FAIL(errcode_ret, CL_INVALID_VALUE);
      have_size = true;
      break;
    default: /* CL_QUEUE_PRIORITY_KHR, CL_QUEUE_THROTTLE_KHR: not offered */
      FE_FAIL(errcode_ret, CL_INVALID_VALUE);
    }
  }
  bool on_device = flags & CL_QUEUE_ON_DEVICE;
  if ((flags & ~known) ||
      (on_device && !(flags & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE)) ||
      ((flags & CL_QUEUE_ON_DEVICE_DEFAULT) && !on_device) || (have_size && !on_device))
    FE_FAIL(errcode_ret, CL_INVALID_VALUE);
  if (on_device) /* valid, but no device has device-side queues */
    FE_FAIL(errcode_ret, CL_INVALID_QUEUE_PROPERTIES);
  return queue_create(context, device, flags, true, properties, errcode_ret);
}

/* piQueueRetain, and a wrapper reference. */
cl_int CL_API_CALL fe_clRetainCommandQueue(cl_command_queue command_queue)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  pi_result r = pirt_piQueueRetain(command_queue->o.pl, command_queue->pi);
  if (r == PI_SUCCESS)
    fe_ref(command_queue);
  return fe_err(r);
}

/* OpenCL's release flushes the queue; a queue whose commands wait for user
 * events keeps its PI queue until they are issued. */
cl_int CL_API_CALL fe_clReleaseCommandQueue(cl_command_queue command_queue)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  pi_result r = pirt_piQueueFlush(command_queue->o.pl, command_queue->pi);
  if (r == PI_SUCCESS && !fe_hold_release(command_queue))
    r = pirt_piQueueRelease(command_queue->o.pl, command_queue->pi);
  if (r == PI_SUCCESS)
    fe_queue_unref(command_queue);
  return fe_err(r);
}

static pi_result queue_getter(const void *obj, uint32_t q, size_t n, void *v, size_t *r)
{
  const struct _cl_command_queue *cq = obj;
  return pirt_piQueueGetInfo(cq->o.pl, cq->pi, q, n, v, r);
}

/* From the wrapper; the reference count from PI. */
cl_int CL_API_CALL fe_clGetCommandQueueInfo(cl_command_queue command_queue,
                                            cl_command_queue_info param, size_t size,
                                            void *value, size_t *size_ret)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  cl_command_queue none = NULL;
  switch (param) {
  case CL_QUEUE_CONTEXT:
    return FE_PUT_VAL(size, value, size_ret, command_queue->ctx);
  case CL_QUEUE_DEVICE:
    return FE_PUT_VAL(size, value, size_ret, command_queue->dev);
  case CL_QUEUE_REFERENCE_COUNT:
    return fe_pi_info("pi_queue_info", queue_getter, command_queue, param, size, value,
                      size_ret);
  case CL_QUEUE_PROPERTIES:
    return FE_PUT_VAL(size, value, size_ret, command_queue->props);
  case CL_QUEUE_PROPERTIES_ARRAY:
    return fe_put(size, value, size_ret, command_queue->propv,
                  command_queue->npropv * sizeof *command_queue->propv);
  case CL_QUEUE_SIZE:
    return CL_INVALID_COMMAND_QUEUE; /* a device queue's; this is a host queue */
  case CL_QUEUE_DEVICE_DEFAULT:
    return FE_PUT_VAL(size, value, size_ret, none); /* no device queues */
  default:
    return CL_INVALID_VALUE;
  }
}

/* OpenCL 1.0 only: refused. */
cl_int CL_API_CALL fe_clSetCommandQueueProperty(cl_command_queue command_queue,
                                                cl_command_queue_properties properties,
                                                cl_bool enable,
                                                cl_command_queue_properties *old_properties)
{
  (void)enable;
  (void)old_properties;
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  if (properties & ~host_props)
    return CL_INVALID_VALUE;
  return CL_INVALID_OPERATION; /* no device of ours is an OpenCL 1.0 device */
}

/* No device queues: refused once the context and device are checked. */
cl_int CL_API_CALL fe_clSetDefaultDeviceCommandQueue(cl_context context, cl_device_id device,
                                                     cl_command_queue command_queue)
{
  (void)command_queue;
  cl_int err = check_target(context, device);
  return err != CL_SUCCESS ? err : CL_INVALID_OPERATION; /* no device queues */
}

/* piQueueFlush; commands held back are flushed when they are issued. */
cl_int CL_API_CALL fe_clFlush(cl_command_queue command_queue)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  fe_hold_flush(command_queue);
  return fe_err(pirt_piQueueFlush(command_queue->o.pl, command_queue->pi));
}

/* Commands held for user events count as enqueued: clFinish waits for
 * them to be issued, then for PI. */
cl_int CL_API_CALL fe_clFinish(cl_command_queue command_queue)
{
  FE_CHECK(command_queue, FE_QUEUE, CL_INVALID_COMMAND_QUEUE);
  fe_hold_drain(command_queue);
  return fe_err(pirt_piQueueFinish(command_queue->o.pl, command_queue->pi));
}
