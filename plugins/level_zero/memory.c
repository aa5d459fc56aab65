/*
 * memory.c: the PI buffer functions of the Level Zero plugin: buffers are
 * device allocations (host allocations for several devices or
 * PI_MEM_FLAGS_HOST_PTR_ALLOC); creation, queries, reference counts,
 * sub-buffers and native handles.
 */
#include "lz_internal.h"

/* ---- Memory -------------------------------------------------------------------
 * A buffer is device memory of the context's device, or host memory when
 * the context has several devices or PI_MEM_FLAGS_HOST_PTR_ALLOC asks for
 * it. PI_MEM_FLAGS_HOST_PTR_USE memory is copied in at creation and is
 * where maps of the buffer go. */

/* Copies `size` bytes synchronously with an immediate command list in
 * synchronous mode on `dev` (initial contents of buffers and images). */
pi_result sync_copy(const char *fn, pi_context c, pi_device dev,
                    void *dst, const void *src, size_t size,
                    ze_image_handle_t image,
                    const ze_image_region_t *region) {
  ze_command_queue_desc_t desc = {
      .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
      .ordinal = dev->ordinal,
      .mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS};
  ze_command_list_handle_t list;
  pi_result r = check_ze(fn, "zeCommandListCreateImmediate",
                         zeCommandListCreateImmediate(c->ze, dev->ze, &desc,
                                                      &list));
  if (r != PI_SUCCESS)
    return r;
  if (image)
    r = check_ze(fn, "zeCommandListAppendImageCopyFromMemory",
                 zeCommandListAppendImageCopyFromMemory(list, image, src,
                                                        region, NULL, 0, NULL));
  else
    r = check_ze(fn, "zeCommandListAppendMemoryCopy",
                 zeCommandListAppendMemoryCopy(list, dst, src, size, NULL, 0,
                                               NULL));
  pi_result dr = check_ze(fn, "zeCommandListDestroy", zeCommandListDestroy(list));
  return r == PI_SUCCESS ? dr : r;
}

pi_mem mem_new(pi_context c, enum mem_kind kind, pi_mem_flags flags,
               size_t size) {
  pi_mem m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  m->kind = kind;
  m->context = c;
  m->flags = flags;
  m->size = size;
  atomic_init(&m->refs, 1);
  pthread_mutex_init(&m->lock, NULL);
  context_retain(c);
  return m;
}

pi_result mem_release(const char *fn, pi_mem m) {
  if (!ref_release(&m->refs))
    return PI_SUCCESS;
  pi_result r = PI_SUCCESS;
  if (m->owns_alloc && m->image)
    r = check_ze(fn, "zeImageDestroy", zeImageDestroy(m->image));
  else if (m->owns_alloc && m->ptr)
    r = check_ze(fn, "zeMemFree", zeMemFree(m->context->ze, m->ptr));
  while (m->maps) { /* mappings never unmapped */
    struct mapping *next = m->maps->next;
    if (m->maps->staged)
      zeMemFree(m->context->ze, m->maps->ptr);
    free(m->maps);
    m->maps = next;
  }
  if (m->parent) {
    pi_result pr = mem_release(fn, m->parent);
    r = r == PI_SUCCESS ? pr : r;
  }
  pi_result cr = context_release(fn, m->context);
  pthread_mutex_destroy(&m->lock);
  free(m);
  return r == PI_SUCCESS ? cr : r;
}

pi_result mem_flags_check(const char *fn, pi_mem_flags flags,
                          const void *host_ptr) {
  const pi_mem_flags known = PI_MEM_FLAGS_ACCESS_RW | PI_MEM_ACCESS_READ_ONLY |
                             PI_MEM_FLAGS_HOST_PTR_USE |
                             PI_MEM_FLAGS_HOST_PTR_COPY |
                             PI_MEM_FLAGS_HOST_PTR_ALLOC;
  if (flags & ~known)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown memory flags 0x%llx", fn,
                (unsigned long long)(flags & ~known));
  bool wants_ptr = flags & (PI_MEM_FLAGS_HOST_PTR_USE | PI_MEM_FLAGS_HOST_PTR_COPY);
  if (wants_ptr != (host_ptr != NULL))
    return fail(PI_ERROR_INVALID_HOST_PTR,
                "%s: host_ptr must be given exactly when "
                "PI_MEM_FLAGS_HOST_PTR_USE or _COPY is set",
                fn);
  if ((flags & PI_MEM_FLAGS_HOST_PTR_USE) && (flags & PI_MEM_FLAGS_HOST_PTR_COPY))
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: PI_MEM_FLAGS_HOST_PTR_USE and _COPY exclude each other",
                fn);
  return PI_SUCCESS;
}

/* properties: {PI_MEM_PROPERTIES_CHANNEL, channel,
 * PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION, location, 0}: FPGA placement
 * hints that mean nothing to Level Zero devices. */
pi_result lz_piMemBufferCreate(pi_context context, pi_mem_flags flags,
                               size_t size, void *host_ptr,
                               pi_mem *ret_mem,
                               const pi_mem_properties *properties) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(ret_mem != NULL);
  *ret_mem = NULL;
  if (size == 0)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE, "%s: size is 0", FN);
  for (size_t i = 0; properties && properties[i]; i += 2)
    if (properties[i] != PI_MEM_PROPERTIES_CHANNEL &&
        properties[i] != PI_MEM_PROPERTIES_ALLOC_BUFFER_LOCATION)
      return fail(PI_ERROR_INVALID_VALUE, "%s: unknown buffer property 0x%llx",
                  FN, (unsigned long long)properties[i]);
  pi_result r = mem_flags_check(FN, flags, host_ptr);
  if (r != PI_SUCCESS)
    return r;
  pi_device dev = context->devices[0];
  if (size > dev->props.maxMemAllocSize)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE,
                "%s: %zu bytes exceed the largest allocation of device '%s' "
                "(%llu bytes)",
                FN, size, dev_name(dev),
                (unsigned long long)dev->props.maxMemAllocSize);
  pi_mem m = mem_new(context, MEM_BUFFER, flags, size);
  if (!m)
    return out_of_memory(FN);
  m->owns_alloc = true;
  void *ptr = NULL;
  if ((flags & PI_MEM_FLAGS_HOST_PTR_ALLOC) || context->ndevices > 1) {
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    r = ZE_CALL(zeMemAllocHost, context->ze, &hd, size, 64, &ptr);
    m->host_access = true;
  } else {
    ze_device_mem_alloc_desc_t dd = {
        .stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    r = ZE_CALL(zeMemAllocDevice, context->ze, &dd, size, 64, dev->ze, &ptr);
  }
  m->ptr = ptr;
  if (r == PI_SUCCESS && host_ptr) {
    if (m->host_access)
      memcpy(ptr, host_ptr, size);
    else
      r = sync_copy(FN, context, dev, ptr, host_ptr, size, NULL, NULL);
    if (flags & PI_MEM_FLAGS_HOST_PTR_USE)
      m->host_ptr = host_ptr;
  }
  if (r != PI_SUCCESS) {
    mem_release(FN, m);
    return r;
  }
  *ret_mem = m;
  return PI_SUCCESS;
}

/* The memory's facts answer every memory query. */
DEFINE_FACTS(mem, m, .context = m->context, .size = m->size)

pi_result backend_mem_info(pi_mem mem, const struct info_out *o) {
  (void)mem;
  return unknown_query(o);
}

pi_result lz_piMemRetain(pi_mem mem) {
  NEED(mem, PI_ERROR_INVALID_MEM_OBJECT);
  ref_retain(&mem->refs);
  return PI_SUCCESS;
}

pi_result lz_piMemRelease(pi_mem mem) {
  NEED(mem, PI_ERROR_INVALID_MEM_OBJECT);
  return mem_release(FN, mem);
}

/* A sub-buffer is a window of its parent's allocation. */
pi_result lz_piMemBufferPartition(pi_mem buffer, pi_mem_flags flags,
                                  pi_buffer_create_type buffer_create_type,
                                  void *buffer_create_info,
                                  pi_mem *ret_mem) {
  NEED(buffer, PI_ERROR_INVALID_MEM_OBJECT);
  REQUIRE(ret_mem != NULL && buffer_create_info != NULL);
  *ret_mem = NULL;
  if (buffer_create_type != PI_BUFFER_CREATE_TYPE_REGION)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown buffer create type 0x%x",
                FN, (unsigned)buffer_create_type);
  if (buffer->kind != MEM_BUFFER)
    return fail(PI_ERROR_INVALID_MEM_OBJECT,
                "%s: only buffers (not sub-buffers or images) can be "
                "partitioned",
                FN);
  pi_result r = mem_flags_check(FN, flags, NULL);
  if (r != PI_SUCCESS)
    return r;
  const struct pi_buffer_region_struct *region = buffer_create_info;
  if (region->size == 0 || region->origin > buffer->size ||
      region->size > buffer->size - region->origin)
    return fail(PI_ERROR_INVALID_BUFFER_SIZE,
                "%s: region %zu+%zu does not fit the %zu-byte buffer", FN,
                region->origin, region->size, buffer->size);
  pi_mem m = mem_new(buffer->context, MEM_SUB_BUFFER,
                     flags ? flags : buffer->flags, region->size);
  if (!m)
    return out_of_memory(FN);
  m->ptr = buffer->ptr + region->origin;
  m->host_access = buffer->host_access;
  m->host_ptr = buffer->host_ptr ? buffer->host_ptr + region->origin : NULL;
  m->parent = buffer;
  m->origin = region->origin;
  ref_retain(&buffer->refs);
  *ret_mem = m;
  return PI_SUCCESS;
}

/* The native handle of a buffer is its allocation; of an image, the Level
 * Zero image. */
pi_result lz_piextMemGetNativeHandle(pi_mem mem, pi_device dev,
                                     pi_native_handle *nativeHandle) {
  (void)dev; /* one allocation serves every device of the context */
  NEED(mem, PI_ERROR_INVALID_MEM_OBJECT);
  return native_of(FN, mem->image ? (void *)mem->image : (void *)mem->ptr,
                   nativeHandle);
}

/* A buffer over an existing USM allocation (the native handle). */
pi_result lz_piextMemCreateWithNativeHandle(
    pi_native_handle nativeHandle, pi_context context, bool ownNativeHandle,
    pi_mem *mem) {
  NEED(context, PI_ERROR_INVALID_CONTEXT);
  REQUIRE(nativeHandle != 0 && mem != NULL);
  void *ptr = (void *)nativeHandle, *base = NULL;
  size_t size = 0;
  ze_memory_allocation_properties_t props = {
      .stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
  ze_device_handle_t zd = NULL;
  pi_result r = ZE_CALL(zeMemGetAllocProperties, context->ze, ptr, &props, &zd);
  if (r == PI_SUCCESS && props.type == ZE_MEMORY_TYPE_UNKNOWN)
    r = fail(PI_ERROR_INVALID_MEM_OBJECT,
             "%s: %p is no Level Zero allocation of the context", FN, ptr);
  if (r == PI_SUCCESS)
    r = ZE_CALL(zeMemGetAddressRange, context->ze, ptr, &base, &size);
  if (r != PI_SUCCESS)
    return r;
  size -= (size_t)((char *)ptr - (char *)base);
  pi_mem m = mem_new(context, MEM_BUFFER, PI_MEM_FLAGS_ACCESS_RW, size);
  if (!m)
    return out_of_memory(FN);
  m->ptr = ptr;
  m->host_access = props.type != ZE_MEMORY_TYPE_DEVICE;
  m->owns_alloc = ownNativeHandle && ptr == base;
  *mem = m;
  return PI_SUCCESS;
}
