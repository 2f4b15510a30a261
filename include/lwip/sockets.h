/**
 * @file sockets.h
 * lwIP compatibility shim: lwIP code's `#include "lwip/sockets.h"` gets the
 * lwip_* socket calls (wisp/lwip_app.h) and the standard socket names
 * (struct sockaddr_in, AF_INET, fd_set, FD_SET, struct timeval, POLLIN,
 * EAGAIN, htons ...: wisp/sockets_posix_names.h), as lwIP's own
 * lwip/sockets.h defines them. As with lwIP's header, do not include the
 * C library's socket headers in the same file, and include this one after
 * the other C library headers (it maps close(), read() and write() onto
 * sockets, like lwIP with LWIP_POSIX_SOCKETS_IO_NAMES).
 */
#ifndef WISP_LWIP_SHIM_SOCKETS_H
#define WISP_LWIP_SHIM_SOCKETS_H
#include "wisp/lwip_app.h"
#include "wisp/sockets_posix_names.h"
#endif
