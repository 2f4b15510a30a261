/**
 * @file wisp_opts_lwiplike.h
 * Option set of the test matrix: lwIP's default TCP feature set on the
 * host build. SACK (and with it D-SACK), window scaling and timestamps are
 * compiled out (opt.h WISP_TCP_SACK, WISP_TCP_WND_SCALE,
 * WISP_TCP_TIMESTAMPS = 0: their code and PCB fields are gone), the
 * per-connection statistics too (WISP_TCP_PCB_STATS 0); the rest is the
 * host build (ports/unix/wisp_opts_host.h) with a window that fits the
 * unscaled 16-bit field. Build:
 *   cmake -S . -B build-lwiplike -DWISP_OPTS_HEADER=$PWD/test/opts/wisp_opts_lwiplike.h
 */
#ifndef WISP_OPTS_LWIPLIKE_H
#define WISP_OPTS_LWIPLIKE_H

#include "wisp_opts_host.h"

#define WISP_TCP_SACK 0
#define WISP_TCP_WND_SCALE 0
#define WISP_TCP_TIMESTAMPS 0
#define WISP_TCP_PCB_STATS 0
/* without window scaling the window field is 16 bits */
#undef WISP_TCP_WND
#define WISP_TCP_WND 65535
#undef WISP_TCP_SND_BUF
#define WISP_TCP_SND_BUF 65535
/* what one window can fill (the netconn tests overfill the mailbox within
 * one window) */
#undef WISP_NETCONN_RECVMBOX_SIZE
#define WISP_NETCONN_RECVMBOX_SIZE 32

#endif
