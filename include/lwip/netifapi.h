/**
 * @file netifapi.h
 * lwIP compatibility shim: lwIP code's `#include "lwip/netifapi.h"` gets the
 * lwIP names of wisp's application-level API (wisp/lwip_app.h).
 */
#ifndef WISP_LWIP_SHIM_NETIFAPI_H
#define WISP_LWIP_SHIM_NETIFAPI_H
#include "wisp/lwip_app.h"
#endif
