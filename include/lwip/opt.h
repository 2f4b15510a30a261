/**
 * @file opt.h
 * lwIP compatibility shim: lwIP code's `#include "lwip/opt.h"` gets the lwIP
 * names of wisp's API (wisp/lwip_app.h, which includes wisp/lwip_compat.h).
 */
#ifndef WISP_LWIP_SHIM_OPT_H
#define WISP_LWIP_SHIM_OPT_H
#include "wisp/lwip_app.h"
#endif
