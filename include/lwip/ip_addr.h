/**
 * @file ip_addr.h
 * lwIP compatibility shim: lwIP code's `#include "lwip/ip_addr.h"` gets the lwIP
 * names of wisp's API (wisp/lwip_app.h, which includes wisp/lwip_compat.h).
 */
#ifndef WISP_LWIP_SHIM_IP_ADDR_H
#define WISP_LWIP_SHIM_IP_ADDR_H
#include "wisp/lwip_app.h"
#endif
