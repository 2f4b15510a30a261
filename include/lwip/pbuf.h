/**
 * @file pbuf.h
 * lwIP compatibility shim: lwIP code's `#include "lwip/pbuf.h"` gets the
 * lwIP names of wisp's application-level API (all of them live in
 * wisp/lwip_app.h; implemented by the wisp_lwip library, compat/lwip/).
 */
#ifndef WISP_LWIP_SHIM_PBUF_H
#define WISP_LWIP_SHIM_PBUF_H
#include "wisp/lwip_app.h"
#endif
