/**
 * @file wisp_opts_freertos_host.h
 * Options of the FreeRTOS host tests (test/freertos): those of the host
 * build (ports/unix/wisp_opts_host.h: pools, debug checks) with the FreeRTOS
 * sys port in place of the pthreads one.
 */
#ifndef WISP_OPTS_FREERTOS_HOST_H
#define WISP_OPTS_FREERTOS_HOST_H

#include "wisp_opts_host.h"

#undef WISP_SYS_PORT_HEADER
#define WISP_SYS_PORT_HEADER "sys_freertos.h"

#endif
