/**
 * @file api.h
 * lwIP compatibility shim: lwIP code's `#include "lwip/api.h"` gets the lwIP
 * names of wisp's netconn API (all of them live in wisp/lwip_compat.h).
 */
#ifndef WISP_LWIP_SHIM_API_H
#define WISP_LWIP_SHIM_API_H
#include "wisp/lwip_compat.h"
#endif
