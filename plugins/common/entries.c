/*
 * entries.c: the PI entry points defined once for every plugin
 * (COMMON_ENTRY_<name> in plugin_common.h marks them): each checks what
 * every backend checks alike, then calls the backend's hook (backend_*,
 * defined by each plugin) for the rest. Plugin-wide calls answer from the
 * plugin's this_backend; the *GetInfo calls answer what a handle holds and
 * belongs to from the facts the plugin keeps of it (HANDLE_FACTS).
 */
#include "plugin_common.h"

#include <string.h>

/* The name of the PI function we are in: these are common_<name>. */
#define FN (__func__ + sizeof("common_") - 1)

/* ---- Plugin ------------------------------------------------------------- */

/* Only host-compiled device plugins have opaque data; pitrace's have none. */
pi_result common_piextPluginGetOpaqueData(void *opaque_data_param,
                                          void **opaque_data_return) {
  (void)opaque_data_param;
  if (opaque_data_return)
    *opaque_data_return = NULL;
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: the %s plugin has no opaque data (only host-compiled "
              "device plugins do)",
              FN, this_backend.name);
}

/* The last message of this thread, and its code: PI_SUCCESS for a warning. */
pi_result common_piPluginGetLastError(char **message) {
  return plugin_last_error(message);
}

/* DPC++'s optimization levels, as the backend's options. */
pi_result common_piPluginGetBackendOption(pi_platform platform,
                                          const char *frontend_option,
                                          const char **backend_option) {
  static const char *const levels[] = {"", "-O0", "-O1", "-O2", "-O3"};
  (void)platform;
  REQUIRE(frontend_option != NULL && backend_option != NULL);
  for (size_t i = 0; i < sizeof levels / sizeof *levels; ++i)
    if (strcmp(frontend_option, levels[i]) == 0) {
      *backend_option = this_backend.options[i];
      return PI_SUCCESS;
    }
  return fail(PI_ERROR_INVALID_VALUE,
              "%s: no %s option for '%s'; the plugin maps -O0 to -O3", FN,
              this_backend.compiler, frontend_option);
}

/* ---- Devices ------------------------------------------------------------ */

/* The image the device wants most (the backend ranks them), the first of
 * those it wants as much. */
pi_result common_piextDeviceSelectBinary(pi_device device,
                                         pi_device_binary *binaries,
                                         pi_uint32 num_binaries,
                                         pi_uint32 *selected_binary_ind) {
  NEED(device, PI_ERROR_INVALID_DEVICE);
  REQUIRE(selected_binary_ind != NULL);
  REQUIRE(binaries != NULL || num_binaries == 0);
  *selected_binary_ind = UINT32_MAX;
  int best = -1;
  pi_uint32 chosen = UINT32_MAX;
  for (pi_uint32 i = 0; i < num_binaries; ++i) {
    int rank = -1;
    if (binaries[i])
      TRY(backend_binary_rank(FN, device, binaries[i], &rank));
    if (rank >= 0 && (best < 0 || rank < best)) {
      best = rank;
      chosen = i;
    }
  }
  if (best < 0)
    return backend_no_binary(FN, device, binaries, num_binaries);
  *selected_binary_ind = chosen;
  return PI_SUCCESS;
}

/* ---- Contexts ----------------------------------------------------------- */

pi_result common_piContextCreate(
    const pi_context_properties *properties, pi_uint32 num_devices,
    const pi_device *devices,
    void (*pfn_notify)(const char *errinfo, const void *private_info,
                       size_t cb, void *user_data),
    void *user_data, pi_context *ret_context) {
  const struct context_create in = {properties, num_devices, devices,
                                    pfn_notify, user_data};
  REQUIRE(ret_context != NULL);
  *ret_context = NULL;
  if (num_devices == 0 || !devices)
    return fail(PI_ERROR_INVALID_VALUE, "%s: a context needs devices", FN);
  return backend_context_create(FN, &in, ret_context);
}

/* ---- Queues ------------------------------------------------------------- */

pi_result common_piQueueCreate(pi_context context, pi_device device,
                               pi_queue_properties properties,
                               pi_queue *queue) {
  return backend_queue_create(FN, context, device, properties, 0, queue);
}

/* properties: {PI_QUEUE_FLAGS, flags, PI_QUEUE_COMPUTE_INDEX, index, 0}. */
pi_result common_piextQueueCreate(pi_context context, pi_device device,
                                  pi_queue_properties *properties,
                                  pi_queue *queue) {
  pi_queue_properties flags = 0, index = 0;
  TRY(queue_properties_read(FN, properties, &flags, &index));
  return backend_queue_create(FN, context, device, flags, index, queue);
}

/* ---- Programs ----------------------------------------------------------- */

pi_result common_piProgramCreateWithBinary(
    pi_context context, pi_uint32 num_devices, const pi_device *device_list,
    const size_t *lengths, const unsigned char **binaries,
    size_t num_metadata_entries, const pi_device_binary_property *metadata,
    pi_int32 *binary_status, pi_program *ret_program) {
  const struct device_binaries b = {num_devices, device_list, lengths,
                                    binaries, binary_status};
  (void)num_metadata_entries;
  (void)metadata;
  REQUIRE(ret_program != NULL);
  *ret_program = NULL;
  REQUIRE(num_devices > 0 && device_list != NULL && lengths != NULL &&
          binaries != NULL);
  return backend_program_with_binary(FN, context, &b, ret_program);
}

/* OpenCL C source, where the backend compiles it. */
pi_result common_piclProgramCreateWithSource(pi_context context,
                                             pi_uint32 count,
                                             const char **strings,
                                             const size_t *lengths,
                                             pi_program *ret_program) {
  if (this_backend.program_with_source)
    return this_backend.program_with_source(context, count, strings, lengths,
                                            ret_program);
  if (ret_program)
    *ret_program = NULL;
  return fail(PI_ERROR_INVALID_OPERATION, "%s: %s", FN,
              this_backend.no_source);
}

pi_result common_piProgramCompile(
    pi_program program, pi_uint32 num_devices, const pi_device *device_list,
    const char *options, pi_uint32 num_input_headers,
    const pi_program *input_headers, const char **header_include_names,
    void (*pfn_notify)(pi_program program, void *user_data), void *user_data) {
  const struct program_compile in = {
      num_devices,          device_list, options,  num_input_headers,
      input_headers, header_include_names, pfn_notify, user_data};
  NEED(program, PI_ERROR_INVALID_PROGRAM);
  return backend_program_compile(FN, program, &in);
}

/* ---- Commands ----------------------------------------------------------- */

/* A command's hook takes the command (struct command) and the call's own
 * arguments; RUN_COMMAND checks the queue first, RUN_AS_GIVEN leaves the
 * handles to the backend (the CUDA plugin fails every image command alike,
 * whatever the handles). */
#define RUN_AS_GIVEN(hook, queue, nwait, wait, event, ...)                     \
  do {                                                                         \
    const struct command c = {FN, (queue), (nwait), (wait), (event)};          \
    return hook(&c, __VA_ARGS__);                                              \
  } while (0)
#define RUN_COMMAND(hook, queue, nwait, wait, event, ...)                      \
  do {                                                                         \
    NEED(queue, PI_ERROR_INVALID_QUEUE);                                       \
    RUN_AS_GIVEN(hook, queue, nwait, wait, event, __VA_ARGS__);                \
  } while (0)

pi_result common_piEnqueueKernelLaunch(
    pi_queue queue, pi_kernel kernel, pi_uint32 work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return backend_launch(FN, false, queue, kernel, work_dim,
                        global_work_offset, global_work_size, local_work_size,
                        num_events_in_wait_list, event_wait_list, event);
}

/* All work-groups resident at once, where the backend can launch so. */
pi_result common_piextEnqueueCooperativeKernelLaunch(
    pi_queue queue, pi_kernel kernel, pi_uint32 work_dim,
    const size_t *global_work_offset, const size_t *global_work_size,
    const size_t *local_work_size, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  return backend_launch(FN, true, queue, kernel, work_dim, global_work_offset,
                        global_work_size, local_work_size,
                        num_events_in_wait_list, event_wait_list, event);
}

/* piEnqueueMemBufferReadRect and piEnqueueMemBufferWriteRect take the same
 * arguments, but that a write only reads ptr. */
#define BUFFER_RECT(name, read, ptr_type)                                      \
  pi_result common_##name(                                                     \
      pi_queue command_queue, pi_mem buffer, pi_bool blocking,                 \
      pi_buff_rect_offset buffer_offset, pi_buff_rect_offset host_offset,      \
      pi_buff_rect_region region, size_t buffer_row_pitch,                     \
      size_t buffer_slice_pitch, size_t host_row_pitch,                        \
      size_t host_slice_pitch, ptr_type ptr,                                   \
      pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,      \
      pi_event *event) {                                                       \
    if (!buffer_offset || !host_offset || !region)                             \
      return fail(PI_ERROR_INVALID_VALUE,                                      \
                  "%s: the offsets and the region must not be NULL", FN);      \
    const struct buffer_rect r = {                                             \
        read,        blocking,                                                 \
        buffer,      buffer_offset,                                            \
        host_offset, region,                                                   \
        {buffer_row_pitch, buffer_slice_pitch, host_row_pitch,                 \
         host_slice_pitch},                                                    \
        (void *)ptr};                                                          \
    return backend_buffer_rect(FN, command_queue, &r,                          \
                               num_events_in_wait_list, event_wait_list,       \
                               event);                                         \
  }
BUFFER_RECT(piEnqueueMemBufferReadRect, true, void *)
BUFFER_RECT(piEnqueueMemBufferWriteRect, false, const void *)

pi_result common_piEnqueueMemBufferCopyRect(
    pi_queue command_queue, pi_mem src_buffer, pi_mem dst_buffer,
    pi_buff_rect_offset src_origin, pi_buff_rect_offset dst_origin,
    pi_buff_rect_region region, size_t src_row_pitch, size_t src_slice_pitch,
    size_t dst_row_pitch, size_t dst_slice_pitch,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  const size_t pitches[4] = {src_row_pitch, src_slice_pitch, dst_row_pitch,
                             dst_slice_pitch};
  struct copy_coords c;
  TRY(buffer_copy_coords(FN, src_origin, dst_origin, region, &c));
  return backend_buffer_copy_rect(FN, command_queue, src_buffer, dst_buffer,
                                  &c, pitches, num_events_in_wait_list,
                                  event_wait_list, event);
}

pi_result common_piEnqueueMemBufferFill(
    pi_queue command_queue, pi_mem buffer, const void *pattern,
    size_t pattern_size, size_t offset, size_t size,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  RUN_COMMAND(backend_buffer_fill, command_queue, num_events_in_wait_list,
              event_wait_list, event, buffer, pattern, pattern_size, offset,
              size);
}

pi_result common_piEnqueueMemUnmap(pi_queue command_queue, pi_mem memobj,
                                   void *mapped_ptr,
                                   pi_uint32 num_events_in_wait_list,
                                   const pi_event *event_wait_list,
                                   pi_event *event) {
  RUN_COMMAND(backend_unmap, command_queue, num_events_in_wait_list,
              event_wait_list, event, memobj, mapped_ptr);
}

/* piEnqueueMemImageRead and piEnqueueMemImageWrite take the same arguments,
 * but that a write only reads ptr. */
#define IMAGE_RW(name, read, ptr_type)                                         \
  pi_result common_##name(                                                     \
      pi_queue command_queue, pi_mem image, pi_bool blocking,                  \
      pi_image_offset origin, pi_image_region region, size_t row_pitch,        \
      size_t slice_pitch, ptr_type ptr, pi_uint32 num_events_in_wait_list,     \
      const pi_event *event_wait_list, pi_event *event) {                      \
    const struct image_rw rw = {read,        blocking,  image,                 \
                                origin,      region,    row_pitch,             \
                                slice_pitch, (void *)ptr};                     \
    RUN_AS_GIVEN(backend_image_rw, command_queue, num_events_in_wait_list,     \
                 event_wait_list, event, &rw);                                 \
  }
IMAGE_RW(piEnqueueMemImageRead, true, void *)
IMAGE_RW(piEnqueueMemImageWrite, false, const void *)

pi_result common_piEnqueueMemImageCopy(
    pi_queue command_queue, pi_mem src_image, pi_mem dst_image,
    pi_image_offset src_origin, pi_image_offset dst_origin,
    pi_image_region region, pi_uint32 num_events_in_wait_list,
    const pi_event *event_wait_list, pi_event *event) {
  struct copy_coords cc;
  TRY(image_copy_coords(FN, src_origin, dst_origin, region, &cc));
  RUN_AS_GIVEN(backend_image_copy, command_queue, num_events_in_wait_list,
               event_wait_list, event, src_image, dst_image, &cc);
}

pi_result common_piEnqueueMemImageFill(pi_queue command_queue, pi_mem image,
                                       const void *fill_color,
                                       const size_t *origin,
                                       const size_t *region,
                                       pi_uint32 num_events_in_wait_list,
                                       const pi_event *event_wait_list,
                                       pi_event *event) {
  RUN_AS_GIVEN(backend_image_fill, command_queue, num_events_in_wait_list,
               event_wait_list, event, image, fill_color, origin, region);
}

/* ---- USM ---------------------------------------------------------------- */

static pi_result usm_alloc(const char *fn, const struct usm_alloc *a,
                           void **result_ptr) {
  NEED_IN(fn, result_ptr, PI_ERROR_INVALID_VALUE);
  *result_ptr = NULL;
  if (a->alignment & (a->alignment - 1))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: alignment %u is not a power of two", fn,
                (unsigned)a->alignment);
  if (a->size == 0)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE, "%s: size is 0", fn);
  pi_usm_mem_properties flags;
  TRY(usm_alloc_flags(fn, a->properties, &flags));
  return backend_usm_alloc(fn, a, result_ptr);
}

pi_result common_piextUSMHostAlloc(void **result_ptr, pi_context context,
                                   pi_usm_mem_properties *properties,
                                   size_t size, pi_uint32 alignment) {
  const struct usm_alloc a = {USM_HOST, context, NULL, properties, size,
                              alignment};
  return usm_alloc(FN, &a, result_ptr);
}

/* piextUSMDeviceAlloc and piextUSMSharedAlloc take the same arguments. */
#define USM_ALLOC_ON_DEVICE(name, kind)                                        \
  pi_result common_##name(void **result_ptr, pi_context context,               \
                          pi_device device,                                    \
                          pi_usm_mem_properties *properties, size_t size,      \
                          pi_uint32 alignment) {                               \
    const struct usm_alloc a = {kind,       context, device,                   \
                                properties, size,    alignment};               \
    return usm_alloc(FN, &a, result_ptr);                                      \
  }
USM_ALLOC_ON_DEVICE(piextUSMDeviceAlloc, USM_DEVICE)
USM_ALLOC_ON_DEVICE(piextUSMSharedAlloc, USM_SHARED)

/* ---- USM commands -------------------------------------------------------- */

pi_result common_piextUSMEnqueueFill(pi_queue queue, void *ptr,
                                     const void *pattern, size_t patternSize,
                                     size_t count,
                                     pi_uint32 num_events_in_waitlist,
                                     const pi_event *events_waitlist,
                                     pi_event *event) {
  RUN_COMMAND(backend_usm_fill, queue, num_events_in_waitlist, events_waitlist,
              event, ptr, pattern, patternSize, count);
}

pi_result common_piextUSMEnqueueMemcpy(
    pi_queue queue, pi_bool blocking, void *dst_ptr, const void *src_ptr,
    size_t size, pi_uint32 num_events_in_waitlist,
    const pi_event *events_waitlist, pi_event *event) {
  RUN_COMMAND(backend_usm_memcpy, queue, num_events_in_waitlist,
              events_waitlist, event, blocking, dst_ptr, src_ptr, size);
}

pi_result common_piextUSMEnqueuePrefetch(pi_queue queue, const void *ptr,
                                         size_t size,
                                         pi_usm_migration_flags flags,
                                         pi_uint32 num_events_in_waitlist,
                                         const pi_event *events_waitlist,
                                         pi_event *event) {
  TRY(usm_migration_flags_check(FN, flags));
  RUN_COMMAND(backend_usm_prefetch, queue, num_events_in_waitlist,
              events_waitlist, event, ptr, size);
}

pi_result common_piextUSMEnqueueFill2D(
    pi_queue queue, void *ptr, size_t pitch, size_t pattern_size,
    const void *pattern, size_t width, size_t height,
    pi_uint32 num_events_in_waitlist, const pi_event *events_waitlist,
    pi_event *event) {
  RUN_COMMAND(backend_usm_fill2d, queue, num_events_in_waitlist,
              events_waitlist, event, ptr, pitch, pattern_size, pattern,
              width, height);
}

pi_result common_piextUSMEnqueueMemset2D(pi_queue queue, void *ptr,
                                         size_t pitch, int value,
                                         size_t width, size_t height,
                                         pi_uint32 num_events_in_waitlist,
                                         const pi_event *events_waitlist,
                                         pi_event *event) {
  RUN_COMMAND(backend_usm_memset2d, queue, num_events_in_waitlist,
              events_waitlist, event, ptr, pitch, value, width, height);
}

pi_result common_piextUSMEnqueueMemcpy2D(
    pi_queue queue, pi_bool blocking, void *dst_ptr, size_t dst_pitch,
    const void *src_ptr, size_t src_pitch, size_t width, size_t height,
    pi_uint32 num_events_in_waitlist, const pi_event *events_waitlist,
    pi_event *event) {
  RUN_COMMAND(backend_usm_memcpy2d, queue, num_events_in_waitlist,
              events_waitlist, event, blocking, dst_ptr, dst_pitch, src_ptr,
              src_pitch, width, height);
}

/* ---- Device globals ----------------------------------------------------- */

pi_result common_piextEnqueueDeviceGlobalVariableWrite(
    pi_queue queue, pi_program program, const char *name,
    pi_bool blocking_write, size_t count, size_t offset, const void *src,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  return backend_global_copy(FN, true, queue, program, name, blocking_write,
                             count, offset, (void *)src,
                             num_events_in_wait_list, event_wait_list, event);
}

pi_result common_piextEnqueueDeviceGlobalVariableRead(
    pi_queue queue, pi_program program, const char *name,
    pi_bool blocking_read, size_t count, size_t offset, void *dst,
    pi_uint32 num_events_in_wait_list, const pi_event *event_wait_list,
    pi_event *event) {
  return backend_global_copy(FN, false, queue, program, name, blocking_read,
                             count, offset, dst, num_events_in_wait_list,
                             event_wait_list, event);
}

/* ---- Info queries -------------------------------------------------------- */

/* The kinds of handles that *GetInfo entry points take. */
enum handle_kind {
#define X(name, handle, query, what, facts) KIND_##query,
  PLUGIN_INFO_ENTRIES(X)
#undef X
};

/* Answers o->query in *r from the facts of a handle of `kind`; false where
 * those facts do not answer it. (Each query names the kind it asks about:
 * the compiler rejects a value listed twice.) */
static bool answer_fact(enum handle_kind kind, const struct handle_facts *f,
                        const struct info_out *o, pi_result *r) {
  switch (o->query) {
#define X(of, query, how, fact)                                                \
  case query:                                                                  \
    if (kind != KIND_##of)                                                     \
      return false;                                                            \
    *r = put_##how(o, f->fact);                                                \
    return true;
    HANDLE_FACTS(X)
#undef X
  default:
    return false;
  }
}

/* Where a handle's kind has facts, the queries they answer. */
#define ANSWER_FACTS(handle, query)                                            \
  do {                                                                         \
    struct handle_facts f;                                                     \
    pi_result r;                                                               \
    if (backend_##query##_facts(handle, &f) &&                                 \
        answer_fact(KIND_##query, &f, &o, &r))                                 \
      return r;                                                                \
  } while (0);
#define ANSWER_NO_FACTS(handle, query)

#define X(name, handle, query, what, facts)                                    \
  pi_result common_##name(pi_##handle handle, pi_##query##_info param_name,    \
                          size_t param_value_size, void *param_value,          \
                          size_t *param_value_size_ret) {                      \
    struct info_out o = INFO_OUT(param_name);                                  \
    NEED(handle, PI_ERROR_INVALID_##what);                                     \
    ANSWER_##facts(handle, query)                                              \
    return backend_##query##_info(handle, &o);                                 \
  }
PLUGIN_INFO_ENTRIES(X)
#undef X

#define X(name, handle, query, what)                                           \
  pi_result common_##name(pi_##handle handle, pi_device device,                \
                          pi_##query##_info param_name,                        \
                          size_t param_value_size, void *param_value,          \
                          size_t *param_value_size_ret) {                      \
    struct info_out o = INFO_OUT(param_name);                                  \
    NEED(handle, PI_ERROR_INVALID_##what);                                     \
    return backend_##query##_info(handle, device, &o);                         \
  }
PLUGIN_DEVICE_INFO_ENTRIES(X)
#undef X

pi_result common_piKernelGetSubGroupInfo(
    pi_kernel kernel, pi_device device, pi_kernel_sub_group_info param_name,
    size_t input_value_size, const void *input_value, size_t param_value_size,
    void *param_value, size_t *param_value_size_ret) {
  struct info_out o = INFO_OUT(param_name);
  NEED(kernel, PI_ERROR_INVALID_KERNEL);
  return backend_sub_group_info(kernel, device, &o, input_value,
                                input_value_size);
}
