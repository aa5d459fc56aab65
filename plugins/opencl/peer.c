/*
 * peer.c: peer access in the OpenCL plugin: OpenCL has none between
 * devices, so enabling it fails with a message and queries answer 0.
 */
#include "ocl_internal.h"

/* ---- Peer access -----------------------------------------------------------
 * OpenCL has no peer-to-peer access between devices. */

static pi_result no_peer_access(const char *fn) {
  return fail(PI_ERROR_INVALID_OPERATION,
              "%s: OpenCL has no peer-to-peer access between devices; copy "
              "through the host or share a buffer in one context",
              fn);
}

pi_result ocl_piextEnablePeerAccess(pi_device command_device,
                                    pi_device peer_device) {
  (void)command_device;
  (void)peer_device;
  return no_peer_access(FN);
}

pi_result ocl_piextDisablePeerAccess(pi_device command_device,
                                     pi_device peer_device) {
  (void)command_device;
  (void)peer_device;
  return no_peer_access(FN);
}

pi_result
ocl_piextPeerAccessGetInfo(pi_device command_device, pi_device peer_device,
                           pi_peer_attr attr, size_t param_value_size,
                           void *param_value, size_t *param_value_size_ret) {
  struct info_out o = INFO_OUT(attr);
  (void)command_device;
  (void)peer_device;
  if (attr != PI_PEER_ACCESS_SUPPORTED && attr != PI_PEER_ATOMICS_SUPPORTED)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown peer attribute 0x%x", FN,
                (unsigned)attr);
  return put_u32(&o, 0);
}
