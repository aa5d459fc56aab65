/*
 * test_desc.c: the API description as C data, and the decoder that prints
 * arguments from it. These are unit tests of pure functions; no device.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "pi_api.h"

Test(desc, every_function_of_the_scope_is_described_once)
{
  /* shared/pi-api.txt lists the PI functions in scope. */
  FILE *f = fopen(PITRACE_SOURCE_DIR "/../shared/pi-api.txt", "r");
  if (!f)
    cr_skip_test("shared/pi-api.txt is not beside the checkout");
  char word[128];
  int n = 0;
  while (fscanf(f, "%127s", word) == 1) {
    if (word[0] == '#') {
      int c;
      while ((c = fgetc(f)) != '\n' && c != EOF)
        ;
      continue;
    }
    if (strchr(word, ':'))
      continue;
    cr_assert(pi_api_find(word), "%s is not in the API description", word);
    n++;
  }
  fclose(f);
  cr_assert_eq(n, 124);
}

Test(desc, references_point_at_sensible_parameters)
{
  for (uint32_t id = 0; id < PI_API_COUNT; id++) {
    const pi_api_desc *a = pi_api_get(id);
    cr_assert(a, "id %u has no function", id);
    cr_assert_eq(a->id, id);
    cr_assert_leq(a->nparams, PI_MAX_PARAMS);
    for (unsigned i = 0; i < a->nparams; i++) {
      const pi_param_desc *p = &a->params[i];
      if (p->count.ref >= 0) {
        const pi_param_desc *c = &a->params[p->count.ref];
        cr_assert(c->kind == PI_PK_SCALAR && c->vt != PI_VT_PTR,
                  "%s.%s counts by %s, which is no number", a->name, p->name,
                  c->name);
      }
      if (p->kind == PI_PK_INFO) {
        cr_assert(p->en && p->en->is_info, "%s.%s", a->name, p->name);
        cr_assert_geq(p->query, 0);
        cr_assert_geq(p->size_ret, 0);
      }
      if (p->creates)
        cr_assert_neq(p->dir, PI_DIR_IN, "%s.%s creates but is in", a->name,
                      p->name);
      /* The parameters every reader finds by role: named as pi.api says. */
      if (strncmp(p->name, "blocking", 8) == 0)
        cr_assert_eq(a->blocking, (int)i, "%s.%s is not its blocking flag", a->name, p->name);
    }
    if (a->blocking >= 0)
      cr_assert(a->params[a->blocking].vt == PI_VT_BOOL && a->params[a->blocking].dir ==
                PI_DIR_IN, "%s's blocking flag is no bool in", a->name);
    if (a->queue >= 0)
      cr_assert(a->params[a->queue].kind == PI_PK_HANDLE &&
                a->params[a->queue].obj == PI_OBJ_QUEUE, "%s's queue is no queue", a->name);
    if (a->event >= 0)
      cr_assert(a->params[a->event].kind == PI_PK_HANDLE &&
                a->params[a->event].obj == PI_OBJ_EVENT, "%s's event is no event", a->name);
  }
  /* Spot checks against pi.api. */
  const pi_api_desc *rd = pi_api_find("piEnqueueMemBufferRead");
  cr_assert_eq(rd->blocking, 2);
  cr_assert_eq(rd->queue, 0);
  cr_assert_eq(rd->event, rd->nparams - 1);
  const pi_api_desc *qc = pi_api_find("piQueueCreate");
  cr_assert_eq(qc->blocking, -1);
  cr_assert_eq(qc->event, -1);
}

/* The API flags say what a call is; each kind has the shape its users rely
 * on: a launch names a queue and a kernel, an argument setter a kernel
 * (parameter 0) and an index (parameter 1), a timing call has outputs. */
Test(desc, api_flags_match_the_calls_shape)
{
  unsigned seen[4] = {0, 0, 0, 0};
  for (uint32_t id = 0; id < PI_API_COUNT; id++) {
    const pi_api_desc *a = pi_api_get(id);
    cr_assert_eq(pi_api_flags(id), a->flags);
    if (a->flags & PI_API_F_LAUNCH) {
      seen[0]++;
      bool kernel = false;
      for (unsigned i = 0; i < a->nparams; i++)
        kernel |= a->params[i].kind == PI_PK_HANDLE && a->params[i].obj == PI_OBJ_KERNEL &&
                  a->params[i].dir == PI_DIR_IN;
      cr_assert(kernel, "%s: a launch takes a kernel", a->name);
    }
    if (a->flags & PI_API_F_SETS_ARG) {
      seen[1]++;
      cr_assert(a->nparams >= 2 && a->params[0].kind == PI_PK_HANDLE &&
                    a->params[0].obj == PI_OBJ_KERNEL && a->params[1].dir == PI_DIR_IN,
                "%s: an argument setter takes a kernel, then the index", a->name);
    }
    if (a->flags & PI_API_F_DEVICE_COMMAND) {
      seen[3]++;
      int ev = a->event;
      cr_assert(a->nparams >= 2 && a->params[0].kind == PI_PK_HANDLE &&
                    a->params[0].obj == PI_OBJ_QUEUE && a->params[0].dir == PI_DIR_IN,
                "%s: a device command takes its queue first", a->name);
      cr_assert(ev >= 0 && a->params[ev].kind == PI_PK_HANDLE &&
                    a->params[ev].obj == PI_OBJ_EVENT && a->params[ev].dir == PI_DIR_OUT,
                "%s: a device command returns its event in 'event'", a->name);
    }
    /* Every launch and every transfer of memory is a device command. */
    if ((a->flags & PI_API_F_LAUNCH) ||
        (strncmp(a->name, "piEnqueueMem", 12) == 0))
      cr_assert(a->flags & PI_API_F_DEVICE_COMMAND, "%s: not a device_command", a->name);
    if (a->flags & PI_API_F_TIMING) {
      seen[2]++;
      bool out = false;
      for (unsigned i = 0; i < a->nparams; i++)
        out |= a->params[i].dir != PI_DIR_IN;
      cr_assert(out, "%s: a timing call has outputs", a->name);
    }
  }
  cr_assert(seen[0] && seen[1] && seen[2] && seen[3], "every flag is on some call: %u %u %u %u",
            seen[0], seen[1], seen[2], seen[3]);
  cr_assert_eq(pi_api_flags(PI_API_COUNT), 0u, "out of range: no flags");
}

Test(desc, result_names)
{
  cr_assert_str_eq(pi_result_name(PI_SUCCESS), "PI_SUCCESS");
  cr_assert_str_eq(pi_result_name(PI_ERROR_INVALID_VALUE), "PI_ERROR_INVALID_VALUE");
  cr_assert_str_eq(pi_result_name((pi_result)12345), "PI_RESULT_12345");
}

/* A flags value with no flag set is 0, not a value the type lacks: a
 * queue made without properties was shown "0x0 (not a
 * pi_queue_properties)" in the trace and in show. */
Test(desc, flags_with_none_set_print_as_0)
{
  const pi_enum_desc *flags = NULL, *plain = NULL;
  for (size_t i = 0; i < pi_enum_table_count; i++) {
    const pi_enum_desc *e = pi_enum_table[i];
    if (!flags && e->is_flags && !pi_enum_lookup(e, 0))
      flags = e;
    if (!plain && !e->is_flags && !pi_enum_lookup(e, 123457))
      plain = e;
  }
  cr_assert(flags && plain);
  char store[128];
  pi_sbuf b;
  pi_sbuf_init(&b, store, sizeof store);
  pi_format_enum(&b, flags, 0);
  cr_assert_str_eq(b.p, "0", "%s", flags->name);
  b.len = 0;
  pi_format_enum(&b, plain, 123457);
  char want[128];
  snprintf(want, sizeof want, "0x1e241 (not a %s)", plain->name);
  cr_assert_str_eq(b.p, want);
  pi_sbuf_free(&b);
}

static pi_result fake_platforms_get(pi_uint32 n, pi_platform *out, pi_uint32 *count)
{
  (void)out;
  *count = n == 7 ? 3 : 0;
  return PI_SUCCESS;
}

Test(desc, invoke_calls_the_table_entry_with_unpacked_arguments)
{
  struct pi_function_table t = {0};
  t.piPlatformsGet = fake_platforms_get;
  pi_uint32 count = 0;
  uint64_t argv[] = {7, 0, (uint64_t)(uintptr_t)&count};
  cr_assert_eq(pi_api_invoke(&t, PI_API_piPlatformsGet, argv), PI_SUCCESS);
  cr_assert_eq(count, 3);
  cr_assert_eq(pi_api_invoke(&t, PI_API_piDevicesGet, argv),
               PI_ERROR_INVALID_OPERATION, "a NULL entry is not called");
}

static char *fmt_param(pi_api_id id, unsigned i, const uint64_t *argv, bool after)
{
  static char buf[4096];
  pi_sbuf b;
  pi_sbuf_init(&b, buf, sizeof buf);
  pi_format_param(&b, pi_api_get(id), i, argv, after);
  cr_assert(!b.heap);
  return buf;
}

Test(decode, enums_flags_and_strings_by_name)
{
  uint64_t argv[5] = {0x1234, PI_DEVICE_INFO_NAME, 6, 0, 0};
  cr_assert_str_eq(fmt_param(PI_API_piDeviceGetInfo, 1, argv, false),
                   "PI_DEVICE_INFO_NAME");
  uint64_t mem[7] = {0, PI_MEM_FLAGS_ACCESS_RW | PI_MEM_FLAGS_HOST_PTR_COPY | 0x1000, 64};
  cr_assert_str_eq(fmt_param(PI_API_piMemBufferCreate, 1, mem, false),
                   "PI_MEM_FLAGS_ACCESS_RW|PI_MEM_FLAGS_HOST_PTR_COPY|0x1000");
  const char *name = "vadd\n";
  uint64_t kc[3] = {0, (uint64_t)(uintptr_t)name, 0};
  cr_assert_str_eq(fmt_param(PI_API_piKernelCreate, 1, kc, false), "\"vadd\\n\"");
}

Test(decode, info_values_by_query_type)
{
  char value[] = "llvmpipe";
  size_t ret = sizeof value;
  uint64_t argv[5] = {0x1234, PI_DEVICE_INFO_NAME, sizeof value,
                      (uint64_t)(uintptr_t)value, (uint64_t)(uintptr_t)&ret};
  char want[128];
  snprintf(want, sizeof want, "%p [ \"llvmpipe\" ]", (void *)value);
  cr_assert_str_eq(fmt_param(PI_API_piDeviceGetInfo, 3, argv, true), want);

  size_t sizes[3] = {1024, 64, 1};
  ret = sizeof sizes;
  uint64_t argv2[5] = {0x1234, PI_DEVICE_INFO_MAX_WORK_ITEM_SIZES, sizeof sizes,
                       (uint64_t)(uintptr_t)sizes, (uint64_t)(uintptr_t)&ret};
  snprintf(want, sizeof want, "%p [ [ 1024, 64, 1 ] ]", (void *)sizes);
  cr_assert_str_eq(fmt_param(PI_API_piDeviceGetInfo, 3, argv2, true), want);

  pi_device_type t = PI_DEVICE_TYPE_CPU;
  ret = sizeof t;
  uint64_t argv3[5] = {0x1234, PI_DEVICE_INFO_TYPE, sizeof t,
                       (uint64_t)(uintptr_t)&t, (uint64_t)(uintptr_t)&ret};
  snprintf(want, sizeof want, "%p [ PI_DEVICE_TYPE_CPU ]", (void *)&t);
  cr_assert_str_eq(fmt_param(PI_API_piDeviceGetInfo, 3, argv3, true), want);
}

Test(decode, arrays_by_their_count_and_bytes_previewed)
{
  size_t global[2] = {1024, 768};
  uint64_t argv[9] = {0, 0, 2, 0, (uint64_t)(uintptr_t)global, 0, 0, 0, 0};
  char want[128];
  snprintf(want, sizeof want, "%p [ 1024, 768 ]", (void *)global);
  cr_assert_str_eq(fmt_param(PI_API_piEnqueueKernelLaunch, 4, argv, false), want);
  cr_assert_str_eq(fmt_param(PI_API_piEnqueueKernelLaunch, 3, argv, false), "NULL");

  unsigned char arg[4] = {1, 2, 0xab, 0xff};
  uint64_t sa[4] = {0, 3, 4, (uint64_t)(uintptr_t)arg};
  snprintf(want, sizeof want, "%p (4 bytes: 01 02 ab ff)", (void *)arg);
  cr_assert_str_eq(fmt_param(PI_API_piKernelSetArg, 3, sa, false), want);
}

/* Property lists: each key by name, a value as the type pi.api gives its
 * key (the queue's flags by name, a sampler's modes), else in hex. */
Test(decode, property_values_by_their_keys_type)
{
  pi_queue_properties q[] = {
      PI_QUEUE_FLAGS, PI_QUEUE_FLAG_PROFILING_ENABLE | PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE,
      PI_QUEUE_COMPUTE_INDEX, 3, 0};
  uint64_t qa[4] = {0, 0, (uint64_t)(uintptr_t)q, 0};
  char want[256];
  snprintf(want, sizeof want, "%p [ PI_QUEUE_FLAGS = PI_QUEUE_FLAG_OUT_OF_ORDER_EXEC_MODE_ENABLE|"
           "PI_QUEUE_FLAG_PROFILING_ENABLE, PI_QUEUE_COMPUTE_INDEX = 3, 0 ]", (void *)q);
  cr_assert_str_eq(fmt_param(PI_API_piextQueueCreate, 2, qa, false), want);
  pi_sampler_properties sp[] = {PI_SAMPLER_PROPERTIES_NORMALIZED_COORDS, 1,
                                PI_SAMPLER_PROPERTIES_FILTER_MODE,
                                PI_SAMPLER_FILTER_MODE_LINEAR, 0};
  uint64_t sa[3] = {0, (uint64_t)(uintptr_t)sp, 0};
  snprintf(want, sizeof want, "%p [ PI_SAMPLER_PROPERTIES_NORMALIZED_COORDS = true, "
           "PI_SAMPLER_PROPERTIES_FILTER_MODE = PI_SAMPLER_FILTER_MODE_LINEAR, 0 ]", (void *)sp);
  cr_assert_str_eq(fmt_param(PI_API_piSamplerCreate, 1, sa, false), want);
  pi_mem_properties mp[] = {PI_MEM_PROPERTIES_CHANNEL, 0x12, 0};
  uint64_t ma[6] = {0, 0, 0, 0, 0, (uint64_t)(uintptr_t)mp};
  snprintf(want, sizeof want, "%p [ PI_MEM_PROPERTIES_CHANNEL = 0x12, 0 ]", (void *)mp);
  cr_assert_str_eq(fmt_param(PI_API_piMemBufferCreate, 5, ma, false), want);
}

Test(decode, out_values_only_after_the_call)
{
  pi_uint32 n = 2;
  uint64_t argv[3] = {0, 0, (uint64_t)(uintptr_t)&n};
  char want[64];
  snprintf(want, sizeof want, "%p", (void *)&n);
  cr_assert_str_eq(fmt_param(PI_API_piPlatformsGet, 2, argv, false), want);
  snprintf(want, sizeof want, "%p [ 2 ]", (void *)&n);
  cr_assert_str_eq(fmt_param(PI_API_piPlatformsGet, 2, argv, true), want);
}

Test(decode, long_strings_are_cut_with_their_length)
{
  char src[1000];
  memset(src, 'x', sizeof src - 1);
  src[sizeof src - 1] = 0;
  const char *strings[1] = {src};
  size_t len = 999;
  uint64_t argv[5] = {0, 1, (uint64_t)(uintptr_t)strings, (uint64_t)(uintptr_t)&len, 0};
  const char *s = fmt_param(PI_API_piclProgramCreateWithSource, 2, argv, false);
  cr_assert(strstr(s, "...(999 chars) ]"), "%s", s);
  cr_assert_lt(strlen(s), 300);
}

Test(decode, plain_runs_end_at_the_first_character_escaped)
{
  /* Every character that ends a run, at every place of an eight-byte word
   * and beyond, among characters of every other kind (UTF-8 bytes too). */
  static const char enders[] = {'"', '\\', 0x7f, 0x1f, '\n', 0x01};
  static const char others[] = {'a', ' ', '~', (char)0x80, (char)0xc3, (char)0xff, '!', '#'};
  char s[40];
  for (size_t e = 0; e < sizeof enders; e++)
    for (size_t at = 0; at < sizeof s; at++) {
      for (size_t i = 0; i < sizeof s; i++)
        s[i] = others[(i + at) % sizeof others];
      s[at] = enders[e];
      cr_assert_eq(pi_plain_prefix(s, sizeof s), at, "0x%02x at %zu", (unsigned char)enders[e],
                   at);
      cr_assert_eq(pi_plain_prefix(s, at), at);
    }
  for (size_t i = 0; i < sizeof s; i++)
    s[i] = others[i % sizeof others];
  cr_assert_eq(pi_plain_prefix(s, sizeof s), sizeof s);
}

Test(decode, call_blocks_have_the_dpcpp_shape)
{
  char buf[4096];
  pi_sbuf b;
  pi_sbuf_init(&b, buf, sizeof buf);
  pi_uint32 n = 1;
  uint64_t argv[3] = {0, 0, (uint64_t)(uintptr_t)&n};
  pi_format_call_enter(&b, pi_api_get(PI_API_piPlatformsGet), argv, NULL);
  pi_format_call_exit(&b, pi_api_get(PI_API_piPlatformsGet), argv, PI_SUCCESS, NULL);
  char want[512];
  snprintf(want, sizeof want,
           "---> piPlatformsGet(\n"
           "\tpi_uint32 num_entries : 0\n"
           "\tpi_platform * platforms : NULL\n"
           "\tpi_uint32 * num_platforms : %p\n"
           ") ---> \tpi_result : PI_SUCCESS\n"
           "\t[out]pi_platform * platforms : NULL\n"
           "\t[out]pi_uint32 * num_platforms : %p [ 1 ]\n",
           (void *)&n, (void *)&n);
  cr_assert_str_eq(buf, want);
}

/* Bytes per pixel, as the OpenCL specification's image format table gives
 * them (its values are PI's): what the front end checks, the recorder
 * captures and extract rebuilds. The recorder used to count three
 * two-byte channels for a 565 pixel (6 bytes: it read past the
 * application's data) and one channel for sRGBA. */
Test(desc, image_pixel_sizes_follow_the_opencl_table)
{
  static const struct {
    uint32_t order, type;
    size_t bytes;
  } cases[] = {
      {PI_IMAGE_CHANNEL_ORDER_RGBA, PI_IMAGE_CHANNEL_TYPE_FLOAT, 16},
      {PI_IMAGE_CHANNEL_ORDER_R, PI_IMAGE_CHANNEL_TYPE_FLOAT, 4},
      {PI_IMAGE_CHANNEL_ORDER_BGRA, PI_IMAGE_CHANNEL_TYPE_UNORM_INT8, 4},
      {PI_IMAGE_CHANNEL_ORDER_RG, PI_IMAGE_CHANNEL_TYPE_HALF_FLOAT, 4},
      {PI_IMAGE_CHANNEL_ORDER_RGB, PI_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565, 2},
      {PI_IMAGE_CHANNEL_ORDER_RGBx, PI_IMAGE_CHANNEL_TYPE_UNORM_SHORT_555, 2},
      {PI_IMAGE_CHANNEL_ORDER_RGB, PI_IMAGE_CHANNEL_TYPE_UNORM_INT_101010, 4},
      {PI_IMAGE_CHANNEL_ORDER_sRGBA, PI_IMAGE_CHANNEL_TYPE_UNORM_INT8, 4},
      {PI_IMAGE_CHANNEL_ORDER_Rx, PI_IMAGE_CHANNEL_TYPE_SIGNED_INT16, 4},
      {PI_IMAGE_CHANNEL_ORDER_INTENSITY, PI_IMAGE_CHANNEL_TYPE_UNORM_INT16, 2},
      {0x10BD /* CL_DEPTH */, PI_IMAGE_CHANNEL_TYPE_FLOAT, 4},
      {0x10BE /* CL_DEPTH_STENCIL */, 0x10DF /* CL_UNORM_INT24 */, 4},
      {PI_IMAGE_CHANNEL_ORDER_RGBA, 0x10E0 /* CL_UNORM_INT_101010_2 */, 4},
      /* Combinations the specification does not define, and unknown values. */
      {PI_IMAGE_CHANNEL_ORDER_RGBA, PI_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565, 0},
      {0x10BE /* CL_DEPTH_STENCIL */, PI_IMAGE_CHANNEL_TYPE_UNORM_INT8, 0},
      {0x1234, PI_IMAGE_CHANNEL_TYPE_FLOAT, 0},
      {PI_IMAGE_CHANNEL_ORDER_R, 0x1234, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    cr_expect_eq(pi_image_element_size(cases[i].order, cases[i].type), cases[i].bytes,
                 "order 0x%x type 0x%x: %zu bytes, expected %zu", cases[i].order, cases[i].type,
                 pi_image_element_size(cases[i].order, cases[i].type), cases[i].bytes);
}

/* The host bytes an image's creation reads: whole scanlines padded to the
 * row pitch, whole slices (or array images) padded to the slice pitch. The
 * recorder used to stop at the last scanline's last pixel, and PoCL,
 * replaying the session, read the padding after the recorded bytes. */
Test(desc, image_host_extents_are_whole_padded_scanlines_and_slices)
{
  pi_image_format rgba = {PI_IMAGE_CHANNEL_ORDER_RGBA, PI_IMAGE_CHANNEL_TYPE_FLOAT};
  pi_image_format bad = {PI_IMAGE_CHANNEL_ORDER_RGBA, PI_IMAGE_CHANNEL_TYPE_UNORM_SHORT_565};
  pi_image_desc d2 = {.image_type = PI_MEM_TYPE_IMAGE2D, .image_width = 37, .image_height = 23,
                      .image_row_pitch = 656};
  cr_expect_eq(pi_image_host_extent(&rgba, &d2), 656u * 23);
  d2.image_row_pitch = 0;
  cr_expect_eq(pi_image_host_extent(&rgba, &d2), 37u * 16 * 23);
  pi_image_desc d3 = {.image_type = PI_MEM_TYPE_IMAGE3D, .image_width = 4, .image_height = 3,
                      .image_depth = 5, .image_row_pitch = 80};
  cr_expect_eq(pi_image_host_extent(&rgba, &d3), 80u * 3 * 5);
  d3.image_slice_pitch = 400;
  cr_expect_eq(pi_image_host_extent(&rgba, &d3), 400u * 5);
  pi_image_desc a1 = {.image_type = PI_MEM_TYPE_IMAGE1D_ARRAY, .image_width = 8,
                      .image_array_size = 6};
  cr_expect_eq(pi_image_host_extent(&rgba, &a1), 8u * 16 * 6);
  a1.image_row_pitch = 256; /* the slice pitch is calculated as the row pitch */
  cr_expect_eq(pi_image_host_extent(&rgba, &a1), 256u * 6);
  pi_image_desc a2 = {.image_type = PI_MEM_TYPE_IMAGE2D_ARRAY, .image_width = 8,
                      .image_height = 2, .image_array_size = 3, .image_slice_pitch = 512};
  cr_expect_eq(pi_image_host_extent(&rgba, &a2), 512u * 3);
  pi_image_desc one = {.image_type = PI_MEM_TYPE_IMAGE1D, .image_width = 9};
  cr_expect_eq(pi_image_host_extent(&rgba, &one), 9u * 16);
  cr_expect_eq(pi_image_host_extent(&bad, &d2), 0, "a format without a pixel size");
  pi_image_desc huge = {.image_type = PI_MEM_TYPE_IMAGE2D, .image_width = SIZE_MAX / 8,
                        .image_height = 3};
  cr_expect_eq(pi_image_host_extent(&rgba, &huge), 0, "past SIZE_MAX");
  cr_expect_eq(pi_image_host_extent(&rgba, NULL), 0);
}
