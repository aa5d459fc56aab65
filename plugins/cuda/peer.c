/*
 * peer.c: peer access between CUDA devices: enabling and disabling it
 * through their primary contexts, and queries.
 */
#include "cu_internal.h"

/* ---- Peer access
 * ------------------------------------------------------------- Between the
 * primary contexts of two devices. */

static pi_result peer_pair(const char *fn, pi_device a, pi_device b,
                           CUcontext *ca, CUcontext *cb) {
  if (!a || !b)
    return fail(PI_ERROR_INVALID_DEVICE, "%s: a device is NULL", fn);
  if (a == b)
    return fail(PI_ERROR_INVALID_VALUE,
                "%s: a device reaches its own memory; peer access is between "
                "two devices",
                fn);
  TRY(device_primary(fn, a, ca));
  return device_primary(fn, b, cb);
}

pi_result cu_piextEnablePeerAccess(pi_device command_device,
                                   pi_device peer_device) {
  CUcontext mine = NULL, peer = NULL;
  TRY(peer_pair(FN, command_device, peer_device, &mine, &peer));
  TRY(use_context(FN, mine));
  return CU(cuCtxEnablePeerAccess, peer, 0);
}

pi_result cu_piextDisablePeerAccess(pi_device command_device,
                                    pi_device peer_device) {
  CUcontext mine = NULL, peer = NULL;
  TRY(peer_pair(FN, command_device, peer_device, &mine, &peer));
  TRY(use_context(FN, mine));
  return CU(cuCtxDisablePeerAccess, peer);
}

pi_result
cu_piextPeerAccessGetInfo(pi_device command_device, pi_device peer_device,
                          pi_peer_attr attr, size_t param_value_size,
                          void *param_value, size_t *param_value_size_ret) {
  struct info_out o = INFO_OUT(attr);
  REQUIRE(command_device != NULL && peer_device != NULL);
  if (attr != PI_PEER_ACCESS_SUPPORTED && attr != PI_PEER_ATOMICS_SUPPORTED)
    return fail(PI_ERROR_INVALID_VALUE, "%s: unknown peer attribute 0x%x", FN,
                (unsigned)attr);
  if (command_device == peer_device)
    return put_u32(&o, 1); /* a device's own memory */
  int v = 0;
  TRY(CU(cuDeviceGetP2PAttribute, &v,
         attr == PI_PEER_ACCESS_SUPPORTED
             ? CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED
             : CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
         command_device->cu, peer_device->cu));
  return put_u32(&o, (uint32_t)v);
}
