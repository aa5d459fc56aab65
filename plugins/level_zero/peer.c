/*
 * peer.c: peer access between devices of one Level Zero driver: checks,
 * enabling and disabling, and queries.
 */
#include "lz_internal.h"

/* ---- Peer access --------------------------------------------------------------------
 * Level Zero devices reach their peers' memory without being asked: enabling
 * and disabling succeed where zeDeviceCanAccessPeer says access exists. */

static pi_result peer_check(const char *fn, pi_device a, pi_device b,
                            ze_bool_t *can) {
  if (!a || !b)
    return fail(PI_ERROR_INVALID_DEVICE, "%s: a device is NULL", fn);
  return check_ze(fn, "zeDeviceCanAccessPeer",
                  zeDeviceCanAccessPeer(a->ze, b->ze, can));
}

static pi_result peer_access(const char *fn, pi_device a, pi_device b) {
  ze_bool_t can = 0;
  pi_result r = peer_check(fn, a, b, &can);
  if (r == PI_SUCCESS && !can)
    r = fail(PI_ERROR_INVALID_OPERATION,
             "%s: Level Zero reports no peer access from device '%s' to '%s'",
             fn, dev_name(a), dev_name(b));
  return r;
}

pi_result lz_piextEnablePeerAccess(pi_device command_device,
                                   pi_device peer_device) {
  return peer_access(FN, command_device, peer_device);
}

pi_result lz_piextDisablePeerAccess(pi_device command_device,
                                    pi_device peer_device) {
  return peer_access(FN, command_device, peer_device);
}

pi_result lz_piextPeerAccessGetInfo(pi_device command_device,
                                    pi_device peer_device,
                                    pi_peer_attr attr,
                                    size_t param_value_size,
                                    void *param_value,
                                    size_t *param_value_size_ret) {
  struct info_out o = INFO_OUT(attr);
  ze_bool_t can = 0;
  pi_result r = peer_check(FN, command_device, peer_device, &can);
  if (r != PI_SUCCESS)
    return r;
  if (attr == PI_PEER_ACCESS_SUPPORTED)
    return put_u32(&o, can ? 1 : 0);
  if (attr != PI_PEER_ATOMICS_SUPPORTED)
    return unknown_query(&o);
  ze_device_p2p_properties_t p2p = {
      .stype = ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES};
  r = ZE_CALL(zeDeviceGetP2PProperties, command_device->ze, peer_device->ze,
              &p2p);
  return r != PI_SUCCESS
             ? r
             : put_u32(&o, (p2p.flags & ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS) ? 1
                                                                              : 0);
}
