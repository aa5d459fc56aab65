/*
 * pi.h: the plugin interface (PI) between the pitrace runtime and its
 * plugins, in C.
 *
 * The enumerations, the API ids, one function pointer type per PI function
 * and the plugin function table come from the API description
 * (runtime/api/pi.api) through the generated pi_gen.h; this file holds what
 * is not a list: the scalar and handle types, the structures (device images
 * with their property sets, image formats, rectangles), the plugin struct
 * that piPluginInit fills, and the version.
 *
 * Names, values and signatures follow DPC++'s plugin interface, so that
 * facts about one hold for the other. Where pitrace adds something it says
 * so. A plugin exports exactly one symbol, piPluginInit.
 */
#ifndef PI_PI_H
#define PI_PI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PI version. A plugin of another major version is refused; minor versions
 * only ever append entries to the function table. */
#define _PI_H_VERSION_MAJOR 1
#define _PI_H_VERSION_MINOR 0
#define _PI_STRINGIFY_(x) #x
#define _PI_STRINGIFY(x) _PI_STRINGIFY_(x)
#define _PI_H_VERSION_STRING \
  _PI_STRINGIFY(_PI_H_VERSION_MAJOR) "." _PI_STRINGIFY(_PI_H_VERSION_MINOR)

typedef int32_t pi_int32;
typedef uint32_t pi_uint32;
typedef uint64_t pi_uint64;
typedef pi_uint32 pi_bool;
typedef pi_uint64 pi_bitfield;
typedef uintptr_t pi_native_handle;

#define PI_TRUE 1u
#define PI_FALSE 0u

/* Handles: opaque to the runtime, defined by each plugin. */
typedef struct _pi_platform *pi_platform;
typedef struct _pi_device *pi_device;
typedef struct _pi_context *pi_context;
typedef struct _pi_queue *pi_queue;
typedef struct _pi_mem *pi_mem;
typedef struct _pi_program *pi_program;
typedef struct _pi_kernel *pi_kernel;
typedef struct _pi_event *pi_event;
typedef struct _pi_sampler *pi_sampler;

/* Structures the function signatures name; defined below pi_gen.h, which
 * holds the enumerations their members use. */
typedef struct _pi_image_format pi_image_format;
typedef struct _pi_image_desc pi_image_desc;
typedef struct _pi_mem_obj_property pi_mem_obj_property;
typedef struct _pi_device_binary_property_struct *pi_device_binary_property;
typedef struct _pi_device_binary_property_set_struct *pi_device_binary_property_set;
typedef struct pi_device_binary_struct *pi_device_binary;
typedef struct pi_buff_rect_offset_struct *pi_buff_rect_offset;
typedef struct pi_buff_rect_region_struct *pi_buff_rect_region;
typedef struct pi_image_offset_struct *pi_image_offset;
typedef struct pi_image_region_struct *pi_image_region;
typedef void (*pi_context_extended_deleter)(void *user_data);

#include "pi/pi_gen.h"

struct _pi_image_format {
  pi_image_channel_order image_channel_order;
  pi_image_channel_type image_channel_data_type;
};

struct _pi_image_desc {
  pi_mem_type image_type;
  size_t image_width;
  size_t image_height;
  size_t image_depth;
  size_t image_array_size;
  size_t image_row_pitch;
  size_t image_slice_pitch;
  pi_uint32 num_mip_levels;
  pi_uint32 num_samples;
  pi_mem buffer;
};

/* Kernel argument memory-object properties (piextKernelSetArgMemObj). */
typedef pi_uint32 pi_mem_access_flag;
struct _pi_mem_obj_property {
  pi_mem_obj_property_type type;
  void *pNext;
  pi_mem_access_flag mem_access;
};

/* Sub-buffer region (piMemBufferPartition, PI_BUFFER_CREATE_TYPE_REGION). */
typedef struct pi_buffer_region_struct {
  size_t origin;
  size_t size;
} *pi_buffer_region;

struct pi_buff_rect_offset_struct {
  size_t x_bytes;
  size_t y_scalar;
  size_t z_scalar;
};
struct pi_buff_rect_region_struct {
  size_t width_bytes;
  size_t height_scalar;
  size_t depth_scalar;
};
struct pi_image_offset_struct {
  size_t x;
  size_t y;
  size_t z;
};
struct pi_image_region_struct {
  size_t width;
  size_t height;
  size_t depth;
};

/* ---- Device images ------------------------------------------------------
 * A device image ("device binary") is code for one target plus property sets:
 * named arrays of named, typed values. Seeds 000 and 003 describe the sets
 * the runtime reads: ImportedSymbols, ExportedSymbols, "SYCL/specialization
 * constants" and "SYCL/specialization constants default values". */

struct _pi_device_binary_property_struct {
  char *Name;       /* NUL-terminated property name */
  void *ValAddr;    /* the value (NULL for PI_PROPERTY_TYPE_UINT32: in ValSize) */
  uint32_t Type;    /* pi_property_type */
  uint64_t ValSize; /* size of the value in bytes, or the uint32 value */
};

struct _pi_device_binary_property_set_struct {
  char *Name;
  pi_device_binary_property PropertiesBegin;
  pi_device_binary_property PropertiesEnd;
};

/* An offload entry: one kernel (or global) the image holds. */
typedef struct _pi_offload_entry_struct {
  void *addr;
  char *name;
  size_t size;
  int32_t flags;
  int32_t reserved;
} *_pi_offload_entry;

#define PI_DEVICE_BINARY_VERSION 1
#define PI_DEVICE_BINARY_OFFLOAD_KIND_SYCL 4
#define PI_DEVICE_BINARIES_VERSION 1

struct pi_device_binary_struct {
  uint16_t Version;            /* PI_DEVICE_BINARY_VERSION */
  uint8_t Kind;                /* PI_DEVICE_BINARY_OFFLOAD_KIND_SYCL */
  uint8_t Format;              /* pi_device_binary_type */
  const char *DeviceTargetSpec;/* one of the __SYCL_PI_DEVICE_BINARY_TARGET_* */
  const char *CompileOptions;
  const char *LinkOptions;
  const char *ManifestStart;
  const char *ManifestEnd;
  const unsigned char *BinaryStart;
  const unsigned char *BinaryEnd;
  _pi_offload_entry EntriesBegin;
  _pi_offload_entry EntriesEnd;
  pi_device_binary_property_set PropertySetsBegin;
  pi_device_binary_property_set PropertySetsEnd;
};

/* All the images one module (executable or shared library) registers. */
typedef struct pi_device_binaries_struct {
  uint16_t Version; /* PI_DEVICE_BINARIES_VERSION */
  uint16_t NumDeviceBinaries;
  pi_device_binary DeviceBinaries;
  _pi_offload_entry HostEntriesBegin;
  _pi_offload_entry HostEntriesEnd;
} *pi_device_binaries;

#define __SYCL_PI_DEVICE_BINARY_TARGET_UNKNOWN "<unknown>"
#define __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV32 "spir"
#define __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64 "spir64"
#define __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_X86_64 "spir64_x86_64"
#define __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_GEN "spir64_gen"
#define __SYCL_PI_DEVICE_BINARY_TARGET_SPIRV64_FPGA "spir64_fpga"
#define __SYCL_PI_DEVICE_BINARY_TARGET_NVPTX64 "nvptx64"
/* pitrace: OpenCL C source, built by the OpenCL plugin's compiler. */
#define __SYCL_PI_DEVICE_BINARY_TARGET_OPENCL_C "opencl_c"

#define __SYCL_PI_PROPERTY_SET_SPEC_CONST_MAP "SYCL/specialization constants"
#define __SYCL_PI_PROPERTY_SET_SPEC_CONST_DEFAULT_VALUES_MAP \
  "SYCL/specialization constants default values"
#define __SYCL_PI_PROPERTY_SET_SYCL_EXPORTED_SYMBOLS "ExportedSymbols"
#define __SYCL_PI_PROPERTY_SET_SYCL_IMPORTED_SYMBOLS "ImportedSymbols"
/* pitrace: the kernel-argument index of the emulated spec-constant buffer,
 * one UINT32 property per kernel name. */
#define __SYCL_PI_PROPERTY_SET_SPEC_CONST_KERNEL_ARG "pitrace/spec constant kernel argument"

/* ---- Plugins -------------------------------------------------------------
 * The runtime zero-fills the struct, writes its version into PiVersion and
 * calls the plugin's piPluginInit. The plugin checks the major version, writes
 * "MAJOR.MINOR.REVISION" into PluginVersion and fills the table; an entry it
 * leaves NULL is unsupported and is never called. */
typedef struct _pi_plugin {
  char PiVersion[20];
  char PluginVersion[20];
  char *Targets;
  struct pi_function_table PiFunctionTable;
} pi_plugin;

typedef pi_result (*pi_plugin_init_fn)(pi_plugin *plugin);

#define PI_PLUGIN_EXPORT __attribute__((visibility("default")))

/* The one symbol a plugin exports. */
pi_result piPluginInit(pi_plugin *plugin);

#ifdef __cplusplus
}
#endif
#endif /* PI_PI_H */
