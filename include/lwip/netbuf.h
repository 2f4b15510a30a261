/**
 * @file netbuf.h
 * lwIP compatibility shim: lwIP code's `#include "lwip/netbuf.h"` gets the lwIP
 * names of wisp's API (wisp/lwip_app.h, which includes wisp/lwip_compat.h).
 */
#ifndef WISP_LWIP_SHIM_NETBUF_H
#define WISP_LWIP_SHIM_NETBUF_H
#include "wisp/lwip_app.h"
#endif
