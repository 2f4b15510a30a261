/**
 * @file sys.h
 * lwIP compatibility shim: lwIP code's `#include "lwip/sys.h"` gets the lwIP
 * names of wisp's netconn API (all of them live in wisp/lwip_compat.h).
 */
#ifndef WISP_LWIP_SHIM_SYS_H
#define WISP_LWIP_SHIM_SYS_H
#include "wisp/lwip_compat.h"
#endif
