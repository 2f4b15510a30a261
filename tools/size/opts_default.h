/* Size probe options (tools/size-report.sh): opt.h's defaults, every wisp
 * feature on (SACK, window scaling, timestamps, SYN cookies, compact
 * TIME-WAIT, RFC 5961, loopback, counters), production build (WISP_DEBUG 0),
 * the stand-in RTOS port with one-pointer handles (sys_probe.h). */
#ifndef WISP_SIZE_OPTS_DEFAULT_H
#define WISP_SIZE_OPTS_DEFAULT_H
#define WISP_SYS_PORT_HEADER "sys_probe.h"
#endif
