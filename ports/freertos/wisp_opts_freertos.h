/**
 * @file wisp_opts_freertos.h
 * Example options header for a FreeRTOS target: the default pool sizes of
 * include/wisp/opt.h (a Cortex-M class device) and the FreeRTOS sys port
 * (ports/freertos/sys_freertos.h). Build with
 * -DWISP_OPTS_HEADER='"wisp_opts_freertos.h"' and ports/freertos plus the
 * directory of your FreeRTOSConfig.h and the kernel's include/ and
 * portable/GCC/<port> on the include path (docs/porting.md "FreeRTOS").
 * Used by the Cortex-M3 size check (tools/freertos-cm3.sh).
 */
#ifndef WISP_OPTS_FREERTOS_H
#define WISP_OPTS_FREERTOS_H

#define WISP_SYS_PORT_HEADER "sys_freertos.h"
/* The core lock (WISP_TCPIP_CORE_LOCKING 1, opt.h's default): application
 * tasks run the core under the lock, a FreeRTOS mutex with priority
 * inheritance. WISP_DEBUG stays off: it needs the board's
 * wisp_assert_fail(). */

#endif
